"""What discovery checks of a plugin before trusting it: that it was built for this core, and that
what it registers has the shape the contracts need.

Both run before anything the plugin contributes reaches a registry, so a mismatch is reported at
discovery (naming the plugin, its distribution and the member at fault) instead of surfacing later
as a bare ``AttributeError`` in the middle of a tool call.
"""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable, Iterable
from typing import Any

from lorenz._version import __version__
from lorenz.lazy import LazyPack

from .containment import call_plugin
from .entry_index import location, normalize_distribution

__all__ = [
    "FIRST_PARTY_DISTRIBUTIONS",
    "core_requirement_problem",
    "is_first_party",
    "normalize_distribution",
    "pack_shape_problem",
    "tracker_shape_problem",
]

#: The distributions shipped in this repository. On a name clash they keep the name (see
#: :func:`lorenz.plugins.registration.build_registries`): a third-party pack cannot shadow a bundled one.
FIRST_PARTY_DISTRIBUTIONS = frozenset(
    {"lorenz-core", "lorenz-local", "lorenz-jira", "lorenz-linear", "lorenz-slack", "lorenz-mcp", "lorenz-quota"}
)

_CORE = "lorenz-core"
_OPTIONAL_TRACKER_HOOKS = ("parse_options", "validate_dispatch", "default_tool_packs", "project_url")


def is_first_party(distribution: str | None) -> bool:
    """Whether ``distribution`` is one shipped with Lorenz, trusted to run in the host unconfined: a
    bundled name *and* its metadata in the directory that holds lorenz-core's. A name alone is
    anyone's to claim from another directory of the import path (the first of a name there is
    the one Python loads, and the one looked at here)."""
    if distribution is None or normalize_distribution(distribution) not in FIRST_PARTY_DISTRIBUTIONS:
        return False
    core = _location(_CORE)
    return core is not None and _location(normalize_distribution(distribution)) == core


@functools.cache
def _location(name: str) -> str | None:
    return location(name)  # None: a core run from a bare checkout, where nothing counts as shipped


#: The name a requirement starts with (PEP 508), and a requirement that is a name followed by nothing
#: but version specifiers (``lorenz-core``, ``lorenz-core>=0.1,<1``, ``lorenz_core (==0.1.*)``).
_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)")
_PLAIN = re.compile(r"(?:\s*\(\s*(?P<inner>[<>=!~][^()\[\];@]*)?\)|\s*(?P<bare>[<>=!~][^()\[\];@]*))?\s*")


def core_requirement_problem(distribution: str, version: str | None, requires: Iterable[str] | None) -> str | None:
    """Why a distribution cannot load on this core: its ``lorenz-core`` requirement excludes the running
    version (``acme-pack 1.0 requires lorenz-core<0.1; this is 0.2.0``), or ``None`` when it fits.

    Discovery runs this for every installed plugin, so the common cases skip the full PEP 508 parser
    (``packaging.requirements`` and its markers, ~10 ms to import): another distribution's requirement
    is not ours to judge, and a plain ``lorenz-core`` specifier this core satisfies fits. Everything
    else, a refusal included, is decided by the full parser.
    """
    for text in requires or ():
        name = _NAME.match(text)
        if name is not None and normalize_distribution(name[1]) != _CORE:
            continue
        plain = _PLAIN.fullmatch(text, name.end()) if name is not None else None
        if plain is not None and _plainly_fits(plain["inner"] or plain["bare"], __version__):
            continue
        problem = _full_requirement_problem(text, distribution, version, __version__)
        if problem is not None:
            return problem
    return None


#: A specifier clause comparing with a plain release (``>=0.1.0``, ``< 1``): no pre-, post- or dev-release,
#: epoch, local label or wildcard, which is what the bundled plugins and most others write.
_RELEASE_CLAUSE = re.compile(r"\s*(>=|<=|==|!=|<|>)\s*([0-9]+(?:\.[0-9]+)*)\s*")
_RELEASE = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}


def _plainly_fits(specifiers: str | None, core_version: str) -> bool:
    if specifiers is None:
        return True
    verdict = _release_fits(specifiers, core_version)
    if verdict is not None:
        return verdict
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(specifiers).contains(core_version, prereleases=True)
    except InvalidSpecifier:
        return False  # the full parser has the last word


def _release_fits(specifiers: str, core_version: str) -> bool | None:
    """Whether a plain release ``core_version`` satisfies ``specifiers`` when every clause compares it
    with a plain release (PEP 440: release segments compared as numbers, the shorter padded with
    zeros); ``None`` for anything else, left to ``packaging.specifiers`` (~10 ms to import)."""
    if _RELEASE.fullmatch(core_version) is None:
        return None
    fits = True
    for clause in specifiers.split(","):
        match = _RELEASE_CLAUSE.fullmatch(clause)
        if match is None:
            return None
        ours, theirs = _release(core_version), _release(match[2])
        width = max(len(ours), len(theirs))
        ours, theirs = ours + (0,) * (width - len(ours)), theirs + (0,) * (width - len(theirs))
        fits = fits and _COMPARE[match[1]](ours, theirs)
    return fits


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _full_requirement_problem(text: str, distribution: str, version: str | None, core_version: str) -> str | None:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None  # not ours to judge: pip installed it
    if normalize_distribution(requirement.name) != _CORE or not requirement.specifier:
        return None
    if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
        return None
    if requirement.specifier.contains(core_version, prereleases=True):
        return None
    label = f"{distribution} {version}" if version else distribution
    return f"{label} requires {_CORE}{requirement.specifier}; this is {core_version}"


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
    optional = () if isinstance(pack, LazyPack) else ("validate_options", "check_settings")  # looked up: loads it
    problems += _member_problems(pack, owner, ("tool_specs", "execute_tool"), optional)
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
