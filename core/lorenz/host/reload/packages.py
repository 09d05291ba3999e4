"""What changed among the installed plugin distributions between two looks, and whether their
modules can be imported afresh in this process.

A distribution is identified by its version and its ``RECORD`` (a reinstall of the same version
with other files changes it). Its modules are dropped from ``sys.modules`` (so discovery imports the
new code) only when no other installed distribution shares a top-level module with it or requires
it; otherwise the process keeps the old code and the change is reported as needing a restart.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Mapping
from importlib.metadata import Distribution, distributions

from attrs import frozen

from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.plugins.checks import normalize_distribution

__all__ = ["PluginDistribution", "ReloadPlan", "drop_modules", "installed_plugins", "plan_reload"]

_REQUIREMENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: Never dropped: the core itself, and what every plugin shares with it.
_NEVER_DROPPED = frozenset({"lorenz", "pluggy", "attrs", "mcp"})


@frozen(kw_only=True)
class PluginDistribution:
    """One installed distribution with a ``lorenz.tool_packs`` entry point, as found on disk."""

    key: str
    name: str
    version: str
    #: A digest of its RECORD: which files, with which hashes.
    record: str
    #: The top-level modules it installs or its entry points name.
    modules: frozenset[str]
    #: The normalized names of the distributions it requires.
    requires: frozenset[str]

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


def _top_levels(dist: Distribution) -> set[str]:
    tops = {ep.value.split(":")[0].split(".")[0].strip() for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP}
    for file in dist.files or ():
        parts = file.parts
        if not parts or parts[0] in ("..", "__pycache__") or parts[0].endswith((".dist-info", ".data", ".pth")):
            continue
        top = parts[0].removesuffix(".py") if len(parts) == 1 else parts[0]
        if len(parts) == 1 and not parts[0].endswith(".py"):
            continue  # a data file at the top (a .pth, a LICENSE)
        if top.isidentifier() and not top.startswith("__editable__"):
            tops.add(top)
    return {top for top in tops if top}


def installed_plugins() -> dict[str, PluginDistribution]:
    """Every distribution on ``sys.path`` with a ``lorenz.tool_packs`` entry point, by normalized name
    (the first of a name wins, as for imports)."""
    found: dict[str, PluginDistribution] = {}
    for dist in distributions():
        if not any(ep.group == ENTRY_POINT_GROUP for ep in dist.entry_points):
            continue
        meta = dist.metadata
        name = dist.name or ""
        key = normalize_distribution(name)
        if not key or key in found:
            continue
        record = dist.read_text("RECORD") or ""
        requires = set()
        for requirement in meta.get_all("Requires-Dist") or ():
            match = _REQUIREMENT_NAME.match(requirement.strip())
            if match is not None:
                requires.add(normalize_distribution(match.group()))
        found[key] = PluginDistribution(
            key=key,
            name=name,
            version=dist.version or "",
            record=hashlib.sha256(record.encode()).hexdigest(),
            modules=frozenset(_top_levels(dist)),
            requires=frozenset(requires),
        )
    return found


@frozen(kw_only=True)
class ReloadPlan:
    """What a change among the installed plugins asks of this process."""

    new: tuple[PluginDistribution, ...] = ()
    gone: tuple[PluginDistribution, ...] = ()
    #: ``(before, after)`` for each distribution upgraded, downgraded or reinstalled.
    changed: tuple[tuple[PluginDistribution, PluginDistribution], ...] = ()
    #: Top-level modules to drop from ``sys.modules`` before discovery imports again.
    drop: frozenset[str] = frozenset()
    #: ``{distribution key: why its new code cannot load in this process}``.
    restart: Mapping[str, str] = {}

    @property
    def empty(self) -> bool:
        """No plugin distribution came, went or changed."""
        return not (self.new or self.gone or self.changed)

    def summary(self) -> str:
        changed = [
            f"{old.name} {old.version} -> {new.version}" if old.version != new.version else f"{new.label} reinstalled"
            for old, new in self.changed
        ]
        return (
            f"new: {', '.join(d.label for d in self.new) or '-'}; gone: {', '.join(d.name for d in self.gone) or '-'}"
            f"; changed: {', '.join(changed) or '-'}"
        )


def _loaded(tops: frozenset[str]) -> bool:
    return any(name.split(".")[0] in tops for name in list(sys.modules))


def _sharing(dist: PluginDistribution, others: Mapping[str, PluginDistribution]) -> list[str]:
    """What keeps ``dist``'s modules from being imported afresh: the other distributions that share
    one of its top-level modules or require it, and modules the host itself holds."""
    reasons = [f"{name} is shared with the core" for name in sorted(dist.modules & _NEVER_DROPPED)]
    for other in others.values():
        if other.key == dist.key:
            continue
        shared = dist.modules & other.modules
        if shared:
            reasons.append(f"{', '.join(sorted(shared))} also belongs to {other.name}")
        elif dist.key in other.requires:
            reasons.append(f"{other.name} requires it")
    return reasons


def plan_reload(before: Mapping[str, PluginDistribution], after: Mapping[str, PluginDistribution]) -> ReloadPlan:
    """Compare two looks at the installed plugins: what came, went and changed, which modules can be
    imported afresh, and which changes need a restart to load."""
    new = tuple(dist for key, dist in after.items() if key not in before)
    gone = tuple(dist for key, dist in before.items() if key not in after)
    changed = tuple(
        (old, after[key])
        for key, old in before.items()
        if key in after and (old.version, old.record) != (after[key].version, after[key].record)
    )
    everyone = {**before, **after}
    drop: set[str] = set()
    restart: dict[str, str] = {}
    for old, current in changed:
        tops = old.modules | current.modules
        if not _loaded(tops):
            continue  # never imported here (isolated, or not loaded): discovery imports it afresh anyway
        reasons = _sharing(old, everyone) + _sharing(current, everyone)
        if reasons:
            restart[current.key] = (
                f"{old.label} was replaced by {current.version} on disk, but its modules cannot be imported "
                f"afresh in this process ({'; '.join(dict.fromkeys(reasons))}): restart lorenz serve to load it"
            )
        else:
            drop |= tops
    for old in gone:
        if _loaded(old.modules) and not _sharing(old, everyone):
            drop |= old.modules  # a later install of it imports its own code, not what is left here
    return ReloadPlan(new=new, gone=gone, changed=changed, drop=frozenset(drop), restart=restart)


def drop_modules(tops: frozenset[str]) -> list[str]:
    """Remove the modules under ``tops`` from ``sys.modules``; returns their names."""
    dropped = [name for name in list(sys.modules) if name.split(".")[0] in tops]
    for name in dropped:
        sys.modules.pop(name, None)
    return dropped
