"""What discovery checks of a plugin before trusting it: that it was built for this core, and that
what it registers has the shape the contracts need.

Both run before anything the plugin contributes reaches a registry, so a mismatch is reported at
discovery (naming the plugin, its distribution and the member at fault) instead of surfacing later
as a bare ``AttributeError`` in the middle of a tool call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .containment import call_plugin

__all__ = [
    "FIRST_PARTY_DISTRIBUTIONS",
    "core_requirement_problem",
    "is_first_party",
    "normalize_distribution",
    "pack_shape_problem",
    "tracker_shape_problem",
]

#: The distributions shipped in this repository. On a name clash they keep the name (see
#: :func:`lorenz.plugins.build_registries`): a third-party pack cannot shadow a bundled one.
FIRST_PARTY_DISTRIBUTIONS = frozenset({"lorenz-core", "lorenz-local", "lorenz-jira", "lorenz-linear", "lorenz-slack"})

_CORE = "lorenz-core"
_OPTIONAL_TRACKER_HOOKS = ("parse_options", "validate_dispatch", "default_tool_packs", "project_url")


def normalize_distribution(name: str) -> str:
    """A distribution name as pip compares them (PEP 503): ``Lorenz_Acme`` → ``lorenz-acme``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def is_first_party(distribution: str | None) -> bool:
    return distribution is not None and normalize_distribution(distribution) in FIRST_PARTY_DISTRIBUTIONS


def core_requirement_problem(distribution: str, version: str | None, requires: Iterable[str] | None) -> str | None:
    """Why a distribution cannot load on this core: its ``lorenz-core`` requirement excludes the running
    version (``acme-pack 1.0 requires lorenz-core<0.1; this is 0.2.0``), or ``None`` when it fits."""
    from packaging.requirements import InvalidRequirement, Requirement

    from . import __version__

    for text in requires or ():
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue  # not ours to judge: pip installed it
        if normalize_distribution(requirement.name) != _CORE or not requirement.specifier:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        if not requirement.specifier.contains(__version__, prereleases=True):
            label = f"{distribution} {version}" if version else distribution
            return f"{label} requires {_CORE}{requirement.specifier}; this is {__version__}"
    return None


def _member_problems(obj: Any, owner: str, required: Iterable[str], optional: Iterable[str] = ()) -> list[str]:
    problems = []
    for member in required:
        value = call_plugin(owner, f"reading {member}", getattr, obj, member, None)
        if not callable(value):
            problems.append(f"{member} is missing" if value is None else f"{member} is not callable")
    for member in optional:
        value = call_plugin(owner, f"reading {member}", getattr, obj, member, None)
        if value is not None and not callable(value):
            problems.append(f"{member} is not callable")
    return problems


def _label_problem(obj: Any, owner: str, attribute: str) -> tuple[str | None, str | None]:
    """``(label, problem)``: the trimmed ``name``/``kind``, or why it is unusable."""
    value = call_plugin(owner, f"reading {attribute}", getattr, obj, attribute, None)
    if value is None:
        return None, f"{attribute} is missing"
    if not isinstance(value, str) or not value.strip():
        return None, f"{attribute} must be a non-blank string, got {value!r:.60}"
    return value.strip(), None


def pack_shape_problem(pack: Any, owner: str) -> str | None:
    """What a registered tool pack lacks of :class:`~lorenz.ToolProvider` (``None`` when complete)."""
    label, problem = _label_problem(pack, owner, "name")
    problems = [problem] if problem else []
    problems += _member_problems(pack, owner, ("tool_specs", "execute_tool"), ("validate_options", "check_settings"))
    if not problems:
        return None
    what = f'tool pack "{label}"' if label else f"tool pack {type(pack).__name__}"
    return f"{what} does not implement the ToolProvider contract: {'; '.join(problems)}"


def tracker_shape_problem(tracker: Any, owner: str) -> str | None:
    """What a registered tracker lacks of :class:`~lorenz.TrackerProvider` (``None`` when complete)."""
    label, problem = _label_problem(tracker, owner, "kind")
    problems = [problem] if problem else []
    problems += _member_problems(tracker, owner, ("create_client",), _OPTIONAL_TRACKER_HOOKS)
    if not problems:
        return None
    what = f'tracker "{label}"' if label else f"tracker {type(tracker).__name__}"
    return f"{what} does not implement the TrackerProvider contract: {'; '.join(problems)}"
