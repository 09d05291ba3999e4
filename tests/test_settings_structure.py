"""The settings sections' fast path (issue 18): a section given only strings and booleans for keys
that take them as they are is built without cattrs, and must be exactly what the cattrs converter
builds, down to the type of every value; anything else, errors included, still goes to cattrs."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorenz.settings import ConfigError
from lorenz.settings._converter import structure_strictly
from lorenz.settings._structure import _shape, structure
from lorenz.settings.server import _ServerSection, _TokenEntry
from lorenz.settings.tracker import _Dispatch, _TrackerRecord

SECTIONS: tuple[type[Any], ...] = (_ServerSection, _TrackerRecord, _Dispatch, _TokenEntry)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _keys(cls: type[Any]) -> st.SearchStrategy[str]:
    names = [field.name for field in attrs.fields(cls)]
    return st.sampled_from([*names, *map(_camel, names), "prot", "kind ", "Kind"])


VALUES = st.one_of(
    st.text(max_size=5),
    st.booleans(),
    st.none(),
    st.sampled_from([-1, 0, 1, 80, 65535, 65536, 0.5, 2.0, float("inf")]),
    st.integers(),
    st.floats(allow_nan=False),
    st.sampled_from(["true", "false", "80", "0"]),
    st.lists(st.text(max_size=3), max_size=2),
    st.dictionaries(st.sampled_from(["token", "name", "kind"]), st.text(max_size=3), max_size=2),
)


def _outcome(build: Any, raw: Any, cls: type[Any]) -> tuple[str, Any]:
    try:
        built = build(raw, cls, "section")
    except ConfigError as exc:
        return "error", str(exc)
    return "built", (built, [type(getattr(built, field.name)) for field in attrs.fields(cls)])


@pytest.mark.parametrize("cls", SECTIONS)
@settings(max_examples=200)
@given(data=st.data())
def test_the_fast_path_builds_exactly_what_cattrs_builds(data: st.DataObject, cls: type[Any]) -> None:
    raw = data.draw(st.dictionaries(_keys(cls), VALUES, max_size=4) | VALUES)
    assert _outcome(structure, raw, cls) == _outcome(structure_strictly, raw, cls)


@pytest.mark.parametrize("cls", SECTIONS)
@settings(max_examples=200)
@given(data=st.data())
def test_maps_near_the_fast_path_agree_with_cattrs(data: st.DataObject, cls: type[Any]) -> None:
    """Only keys the fast path can take (and the required ones), with values of any kind."""
    verbatim, required = _shape(cls)
    raw = data.draw(st.dictionaries(st.sampled_from(sorted({*verbatim, *required})), VALUES, max_size=4))
    assert _outcome(structure, raw, cls) == _outcome(structure_strictly, raw, cls)


def test_the_fields_taken_as_given_are_the_plain_strings_and_booleans() -> None:
    verbatim, required = _shape(_ServerSection)
    assert verbatim["host"] is str and verbatim["token"] is str and verbatim["stateful"] is bool
    assert "port" not in verbatim and "allowed_hosts" not in verbatim and "tokens" not in verbatim
    assert required == frozenset()
    assert _shape(_TokenEntry)[1] == {"token"}
    assert "accept_unrouted" not in _shape(_Dispatch)[0]  # FlexBool also takes "true"/"false"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"kind": "local", "knd": "x"}, 'section contains unsupported keys: knd (did you mean "kind"?)'),
        ({"kind": None}, "section.kind must be a string"),
        ([], "section must be a map"),
    ],
)
def test_what_the_fast_path_leaves_still_fails_in_the_converters_words(raw: Any, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        structure(raw, _TrackerRecord, "section")
    assert str(caught.value) == message


@pytest.mark.slow
def test_the_embedded_default_is_parsed_without_cattrs() -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from lorenz.plugins.registry import TrackerRegistry\n"
        "from lorenz.settings import EMBEDDED_DEFAULT_CONFIG, parse_config\n"
        "settings = parse_config(EMBEDDED_DEFAULT_CONFIG, env={}, trackers=TrackerRegistry(), base_dir=Path('.'))\n"
        "assert settings.tracker.kind == 'local' and settings.server.port == 4040, settings\n"
        "print('cattrs' in sys.modules)\n"
    )
    env = {key: value for key, value in os.environ.items() if key != "LORENZ_WORKFLOW"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert done.stdout.strip() == "False"
