"""``lorenz install`` / ``lorenz uninstall`` and ``lorenz --version``: the distributions installed next to
the core, as ``llm install`` and ``datasette install`` manage theirs.

pip runs as ``sys.executable -m pip``, so a pack lands in the environment that runs ``lorenz`` (a pipx
venv included). What a new distribution registered is read by a fresh ``lorenz plugins --json``: an
editable install only reaches ``sys.path`` through a ``.pth`` file, which this process never read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib.metadata import distributions
from pathlib import Path
from typing import Any

from attrs import frozen

import lorenz
from lorenz.cli.output import UsageError, did_you_mean
from lorenz.plugin_checks import normalize_distribution
from lorenz.plugins import DISABLE_PLUGINS_ENV, ENTRY_POINT_GROUP, LOAD_PLUGINS_ENV

__all__ = ["Installed", "cmd_install", "cmd_uninstall", "installed", "plugin_owner", "version_text"]

CORE = "lorenz-core"


@frozen(kw_only=True)
class Installed:
    """One installed distribution; ``entry_points`` are its ``lorenz.tool_packs`` names (none: no plugin)."""

    name: str
    version: str
    entry_points: tuple[str, ...] = ()
    #: the modules those entry points name (``lorenz_acme.plugin``)
    modules: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"


def installed() -> dict[str, Installed]:
    """Every distribution on ``sys.path`` by normalized name (the first of a name wins, as for imports)."""
    found: dict[str, Installed] = {}
    for dist in distributions():
        name = dist.metadata["Name"] or ""
        key = normalize_distribution(name)
        if not key or key in found:
            continue
        points = sorted((ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP), key=lambda ep: ep.name)
        found[key] = Installed(
            name=name,
            version=dist.version,
            entry_points=tuple(ep.name for ep in points),
            modules=tuple(ep.value for ep in points if ":" not in ep.value),
        )
    return found


def plugin_owner(module: str) -> Installed | None:
    """The installed distribution whose entry point is the module ``module`` and that loads (neither
    ``LORENZ_LOAD_PLUGINS`` nor ``LORENZ_DISABLE_PLUGINS`` keeps it out): discovery registers that
    module already, so a ``-p`` naming it adds nothing."""
    for key, dist in installed().items():
        if module in (m.strip() for m in dist.modules) and _left_out(key) is None:
            return dist
    return None


def _pip(*args: str) -> int:
    import subprocess  # ~3 ms with what it pulls in: only install/uninstall run anything

    return subprocess.call([sys.executable, "-m", "pip", *args])


def _plugin_report() -> dict[str, Any]:
    """``lorenz plugins --json`` of a fresh interpreter (exit 1 only means some plugin failed)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "lorenz", "plugins", "--json"], capture_output=True, text=True, timeout=300, check=False
    )
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        return {}
    return report


def _of(entries: Any, key: str) -> list[dict[str, Any]]:
    return [entry for entry in entries or () if normalize_distribution(entry.get("distribution") or "") == key]


def _registered(dist: Installed, report: dict[str, Any]) -> tuple[str, list[str]]:
    """What ``dist`` registered, as one line, and its pack names."""
    key = normalize_distribution(dist.name)
    mine = _of(report.get("plugins"), key)
    packs = [name for plugin in mine for name in plugin.get("packs", ())]
    trackers = [kind for plugin in mine for kind in plugin.get("trackers", ())]
    parts = [f"packs {', '.join(packs)}"] if packs else []
    parts += [f"trackers {', '.join(trackers)}"] if trackers else []
    parts += [f"FAILED {' '.join(str(f.get('error')).split())}" for f in _of(report.get("failures"), key)]
    if not parts:
        reason = _left_out(key)
        parts.append(f"not loaded ({reason})" if reason else "registered nothing")
    return f"installed {dist.label}: {'; '.join(parts)}", packs


def _left_out(key: str) -> str | None:
    """Why the environment keeps distribution ``key`` from loading, if it does."""
    denied = {normalize_distribution(name.strip()) for name in os.environ.get(DISABLE_PLUGINS_ENV, "").split(",")}
    if key in denied:
        return f"left out by {DISABLE_PLUGINS_ENV}"
    allowed = os.environ.get(LOAD_PLUGINS_ENV)
    if allowed is not None and key not in {normalize_distribution(name.strip()) for name in allowed.split(",")}:
        return f"not in {LOAD_PLUGINS_ENV}"
    return None


def cmd_install(args: argparse.Namespace) -> int:
    """pip install into this interpreter, then say what each new or changed plugin registered."""
    if not args.packages and not args.editable:
        msg = "name at least one PACKAGE (a name, a path, a wheel) or -e PATH"
        raise UsageError(msg)
    before = installed()
    options = ["--upgrade"] if args.upgrade else []
    code = _pip("install", *options, *[arg for path in args.editable for arg in ("-e", path)], *args.packages)
    if code != 0:
        raise UsageError(f"pip install failed (exit {code}); nothing else was changed by lorenz")
    after = installed()
    changed = [dist for key, dist in after.items() if before.get(key) != dist]
    plugins = [dist for dist in changed if dist.entry_points]
    if not changed:
        print("nothing new installed")
        return 0
    if not plugins:
        for dist in changed:
            print(f"installed {dist.label}: not a Lorenz plugin (no {ENTRY_POINT_GROUP} entry point)")
        return 0
    report = _plugin_report()
    packs: list[str] = []
    for dist in plugins:
        line, new_packs = _registered(dist, report)
        print(line)
        packs += new_packs
    if packs:
        print(f'mount a pack: add "tools: {{{packs[0]}: {{}}}}" to WORKFLOW.md (lorenz tools --all lists every tool)')
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    """pip uninstall from this interpreter, after a confirmation (unless ``-y``); never the core itself."""
    found = installed()
    chosen: list[Installed] = []
    for name in args.packages:
        key = normalize_distribution(name)
        if key == CORE:
            msg = (
                f"refusing to uninstall {CORE}: it is the lorenz command itself "
                f"(remove it with pip uninstall {CORE}, or pipx uninstall {CORE})"
            )
            raise UsageError(msg)
        if key not in found:
            plugins = [dist.name for dist in found.values() if dist.entry_points]
            raise UsageError(f"{name} is not installed{did_you_mean(name, plugins)}")
        chosen.append(found[key])
    print(f"about to uninstall: {', '.join(dist.label for dist in chosen)}")
    if not args.yes and not _confirmed():
        raise UsageError("nothing uninstalled (answer y, or pass -y)")
    code = _pip("uninstall", "-y", *[dist.name for dist in chosen])
    if code != 0:
        raise UsageError(f"pip uninstall failed (exit {code})")
    left = installed()
    kept = [dist.label for dist in chosen if normalize_distribution(dist.name) in left]
    if kept:  # pip leaves a distribution outside this environment alone, and says so above
        raise UsageError(f"still installed: {', '.join(kept)}")
    print(f"uninstalled {', '.join(dist.label for dist in chosen)}")
    return 0


def _confirmed() -> bool:
    print("Proceed? [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    if not sys.stdin.isatty():
        print(file=sys.stderr)  # the answer was not echoed: end the prompt's line
    return answer.strip().lower() in ("y", "yes")


def version_text() -> str:
    """``lorenz --version``: the core, the interpreter, and every installed plugin distribution with its
    version (read from metadata, nothing imported), like ``pytest -VV``."""
    home = Path(lorenz.__file__).resolve().parent
    lines = [f"lorenz {lorenz.__version__} from {home} (Python {sys.version.split()[0]})"]
    plugins = sorted((d for d in installed().values() if d.entry_points), key=lambda d: normalize_distribution(d.name))
    if not plugins:
        lines.append("installed plugins: none (lorenz install NAME adds one)")
        return "\n".join(lines)
    lines.append("installed plugins:")
    for dist in plugins:
        reason = _left_out(normalize_distribution(dist.name))
        lines.append(f"  {dist.label}: {', '.join(dist.entry_points)}" + (f" ({reason})" if reason else ""))
    return "\n".join(lines)
