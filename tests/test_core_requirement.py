"""A plugin's ``lorenz-core`` requirement: the fast path discovery takes (no PEP 508 parser for the
common cases) decides exactly as ``packaging.requirements`` does."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet

from lorenz import __version__
from lorenz.plugins.checks import _release_fits, core_requirement_problem, normalize_distribution


def reference_problem(distribution: str, version: str | None, requires: Iterable[str] | None) -> str | None:
    """The verdict with every requirement parsed by ``packaging.requirements`` (the rule before the fast path)."""
    for text in requires or ():
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        if normalize_distribution(requirement.name) != "lorenz-core" or not requirement.specifier:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        if not requirement.specifier.contains(__version__, prereleases=True):
            label = f"{distribution} {version}" if version else distribution
            return f"{label} requires lorenz-core{requirement.specifier}; this is {__version__}"
    return None


NAMES = st.sampled_from(
    [
        "lorenz-core",
        "Lorenz_Core",
        "lorenz.core",
        "lorenz--core",
        "lorenz-core-x",
        "lorenz-cor",
        "httpx",
        " lorenz-core",
    ],
)
OPERATORS = st.sampled_from([">=", "<=", "==", "!=", "~=", "<", ">", "===", "", "=>"])
VERSIONS = st.sampled_from(["0.1", "0.1.0", "0.1.*", "0", "1", "0.2", "0.0.1a1", "99", "junk", "", "0.1.0.post1"])
SPECIFIER = st.builds(lambda op, sp, v: f"{op}{sp}{v}", OPERATORS, st.sampled_from(["", " "]), VERSIONS)
SEPARATORS = st.sampled_from([",", ", ", " ,", ",,"])


@st.composite
def requirement_texts(draw: st.DrawFn) -> str:
    specifiers = draw(st.lists(SPECIFIER, max_size=3))
    spec = draw(SEPARATORS).join(specifiers)
    if draw(st.booleans()):
        spec = f"({spec})"
    extras = draw(st.sampled_from(["", "[otel]", "[", "[a,b]"]))
    tail = draw(
        st.sampled_from(
            ["", "; python_version >= '3'", "; python_version < '3'", "; extra == 'x'", ";", " @ https://x", " junk"]
        )
    )
    return f"{draw(NAMES)}{extras}{draw(st.sampled_from(['', ' ']))}{spec}{tail}"


@given(st.lists(st.one_of(requirement_texts(), st.text(max_size=30)), max_size=4))
def test_fast_path_agrees_with_the_full_parser(requires: list[str]) -> None:
    assert core_requirement_problem("acme", "1.0", requires) == reference_problem("acme", "1.0", requires)


RELEASES = st.lists(st.integers(0, 12), min_size=1, max_size=4).map(lambda parts: ".".join(map(str, parts)))
CLAUSES = st.builds(
    lambda op, sp, v: f"{sp}{op}{sp}{v}{sp}",
    st.sampled_from([">=", "<=", "==", "!=", "<", ">"]),
    st.sampled_from(["", " "]),
    RELEASES,
)


@given(st.lists(CLAUSES, min_size=1, max_size=3).map(",".join), RELEASES)
def test_plain_release_clauses_are_decided_as_packaging_decides(specifiers: str, core: str) -> None:
    """Plain releases on both sides (``>=0.1.0``, ``<1,!=0.2``) are compared without ``packaging``,
    with the verdict ``SpecifierSet`` gives (zero padding: ``==0.1`` is ``0.1.0``)."""
    assert _release_fits(specifiers, core) is SpecifierSet(specifiers).contains(core, prereleases=True)


@pytest.mark.parametrize("specifiers", [">=0.1a1", "~=0.1", "==0.1.*", ">=0.1,", "===0.1.0", ">=0.1.0.post1", ">=v1"])
def test_anything_but_plain_releases_is_left_to_packaging(specifiers: str) -> None:
    assert _release_fits(specifiers, "0.1.0") is None
    assert _release_fits(">=0.1", "0.1.0rc1") is None


@pytest.mark.parametrize(
    ("requires", "problem"),
    [
        (["lorenz-core"], None),
        (["lorenz-core>=0.1.0"], None),
        (["lorenz_core (>=0.1, <1)"], None),
        (["httpx>=0.27", "filelock>=3.13; sys_platform == 'win32'"], None),
        (["lorenz-core<0.1"], "acme 1.0 requires lorenz-core<0.1; this is 0.1.0"),
        (["Lorenz.Core>=2; python_version >= '3'"], "acme 1.0 requires lorenz-core>=2; this is 0.1.0"),
        (["lorenz-core>=2; python_version < '3'"], None),
        (["lorenz-core>=2 junk"], None),  # not a valid requirement: pip's business, not ours
    ],
)
def test_verdicts(requires: list[str], problem: str | None) -> None:
    assert __version__ == "0.1.0"
    assert core_requirement_problem("acme", "1.0", requires) == problem


@pytest.mark.slow
def test_the_bundled_plugins_need_no_pep508_parser() -> None:
    """The bundled distributions' requirements (``lorenz-core``, ``lorenz-core>=0.1.0``) are decided
    without ``packaging`` at all."""
    code = (
        "import sys, importlib.metadata as md\n"
        "from lorenz.plugins.checks import core_requirement_problem, normalize_distribution\n"
        "for name in ('lorenz-local', 'lorenz-jira', 'lorenz-linear', 'lorenz-slack', 'lorenz-mcp', 'lorenz-quota'):\n"
        "    dist = md.distribution(name)\n"
        "    assert core_requirement_problem(name, dist.version, dist.requires) is None\n"
        "print(any(name.startswith('packaging') for name in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
