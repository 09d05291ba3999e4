"""Fuzzing WORKFLOW.md loading (issue 13's paths): arbitrary text and YAML-ish front matter end in
Settings or a one-line ConfigError, never another exception; unknown keys are named with a
suggestion that exists; errors point into the file's own lines."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from lorenz.plugins.discovery import discover
from lorenz.plugins.model import Discovery
from lorenz.plugins.validate_settings import check_pack_settings, validate_dispatch_config
from lorenz.settings import (
    ConfigError,
    Settings,
    parse_config,
    parse_workflow_content,
)
from lorenz.settings._kinds import camel_to_snake
from lorenz.settings.parse import OTHER_HOST_KEYS, TOP_LEVEL_KEYS
from lorenz.settings.server import _ServerSection, _TokenEntry
from lorenz.settings.tracker import CORE_TRACKER_KEYS, _Dispatch
from lorenz_jira import options as jira
from lorenz_linear import options as linear
from lorenz_local import options as local
from lorenz_slack import options as slack

pytestmark = pytest.mark.fuzz

DISCOVERY: Discovery = discover(env={"LORENZ_LOAD_PLUGINS": "lorenz-local,lorenz-jira,lorenz-linear,lorenz-slack"})
ENV = {"SET_TOKEN": "set-token-123", "SET_URL": "https://set.example"}
#: Every key some section of a workflow accepts, in the spellings a suggestion may use.
KNOWN_KEYS = frozenset(
    {
        *TOP_LEVEL_KEYS,
        *OTHER_HOST_KEYS,
        *CORE_TRACKER_KEYS,
        *(field.name for cls in (_ServerSection, _TokenEntry, _Dispatch) for field in attrs.fields(cls)),
        *jira.KNOWN_OPTIONS,
        *jira.CONFIG_ALIASES,
        *linear.CONFIG_ALIASES,
        *linear.CONFIG_ALIASES.values(),
        *local.PACK_KEYS,
        "path",
        *slack.CONFIG_ALIASES,
        "channels",
        "users",
        "apiKey",
        "api_key",
        "endpoint",
    }
)

_TYPOS = ("toolz", "sever", "trackr", "trakers", "Tools", "servr", "pollng", "agnet", "statusOverrides")
_TRACKER_KEYS = (
    *sorted(CORE_TRACKER_KEYS),
    *("path", "id_prefix", "idPrefix", "base_url", "email", "project_keys", "jql", "mcp", "channels"),
    *("project_slug", "bot_user_id", "api_kye", "knd", "pth", "activ_states", "endpont"),
)
_SERVER_KEYS = ("host", "port", "prot", "token", "tokens", "hots", "workers", "call_log", "mcp_port", "stateful")
_PACK_KEYS = ("path", "api_key", "apiKey", "endpoint", "id_prefix", "pth", "token")

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 70000),
    st.sampled_from(["local", "jira", "jira-mcp", "linear", "slack", "board", "", " ", "ENG", "B-"]),
    st.sampled_from(["$SET_TOKEN", "$UNSET_VAR", "$SET_URL", "https://a.example", "not a url", "op-less"]),
    st.text(max_size=6),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5,
)


def _section(keys: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(keys) | st.text(max_size=6), _values, max_size=4)


_top_keys = st.sampled_from((*TOP_LEVEL_KEYS, *OTHER_HOST_KEYS, *_TYPOS)) | st.text(max_size=8)
_front_matter = st.dictionaries(
    _top_keys,
    st.one_of(
        _section(_TRACKER_KEYS),
        _section(_SERVER_KEYS),
        st.dictionaries(st.sampled_from(("local", "jira", "linear", "slack", "acme", "board")), _section(_PACK_KEYS)),
        _values,
    ),
    max_size=4,
)


def _check(config: dict[str, Any]) -> Settings:
    """What `lorenz check` does with a WORKFLOW.md's front matter, short of mounting."""
    parsed = parse_config(config, env=ENV, trackers=DISCOVERY.trackers, base_dir=Path("/nonexistent"))
    validate_dispatch_config(parsed, DISCOVERY.trackers, DISCOVERY.tools)
    packs = [DISCOVERY.tools.require(name) for name in parsed.tool_options or {}]
    assert all(isinstance(problem, str) for problem in check_pack_settings(parsed, packs))
    return parsed


def _outcome(text: str) -> tuple[dict[str, Any] | None, Settings | ConfigError]:
    """The front matter (``None`` when it does not parse) and Settings or the one-line error."""
    config = None
    try:
        config = parse_workflow_content(text).config
        return config, _check(config)
    except ConfigError as exc:
        message = str(exc)
        assert message and "\n" not in message
        assert "workflow_parse_error" not in message
        return config, exc


def _location(message: str) -> tuple[int, int] | None:
    match = re.match(r"^WORKFLOW\.md:(\d+):(\d+): ", message)
    return (int(match.group(1)), int(match.group(2))) if match else None


_fenced = st.builds("---\n{}\n---\n{}".format, st.text(), st.text(max_size=5))


@settings()
@given(st.text() | _fenced)
def test_any_text_gives_settings_or_a_config_error(text: str) -> None:
    """Arbitrary text never raises anything but ConfigError; a location is inside the file."""
    _, outcome = _outcome(text)
    if isinstance(outcome, ConfigError) and (where := _location(str(outcome))):
        assert 1 <= where[0] <= len(re.split("\r\n|\n|\r|\u2028|\u2029", text))


@settings()
@given(_front_matter, st.sampled_from(["json", "block"]))
def test_yamlish_front_matter_names_the_first_unknown_key(config: dict[str, Any], style: str) -> None:
    """Unknown top-level keys fail first, naming the first one and only suggesting real keys; otherwise
    each daemon section is one warning."""
    text = f"---\n{_dump(config, style)}\n---\nBody\n"
    front_matter, outcome = _outcome(text)
    if front_matter is None:
        return  # a control character YAML refuses: the other targets cover locations
    keys = list(front_matter)  # in the file's order
    unknown = [key for key in keys if key not in TOP_LEVEL_KEYS and camel_to_snake(key) not in OTHER_HOST_KEYS]
    if unknown:
        assert isinstance(outcome, ConfigError)
        pattern = r'unknown top-level key (".*") (?:\(did you mean "(.*)"\?\)|\(known keys: .*\))'
        match = re.fullmatch(pattern, str(outcome))
        assert match is not None, str(outcome)
        assert json.loads(match.group(1)) == unknown[0]
        assert match.group(2) is None or match.group(2) in (*TOP_LEVEL_KEYS, *OTHER_HOST_KEYS)
        return
    if isinstance(outcome, Settings):
        daemon = [key for key in keys if key not in TOP_LEVEL_KEYS]
        assert [w for w in outcome.warnings if "Lorenz daemon" in w] == [
            f"top-level key {json.dumps(key)} is read by the Lorenz daemon; this host ignores it" for key in daemon
        ]
        assert all(name not in ENV for name in outcome.unset_variables.values())
    else:
        _assert_suggestions_are_known(str(outcome))


def _assert_suggestions_are_known(message: str) -> None:
    """A did-you-mean names a key some section accepts, never the unknown key itself."""
    for unknown, suggestion in re.findall(r'(\S+) \(did you mean "([^"]*)"\?\)', message):
        assert suggestion in KNOWN_KEYS, message
        assert suggestion != unknown.rsplit(".", 1)[-1], message


@settings()
@given(_front_matter.filter(bool), st.data())
def test_a_broken_line_is_located_in_the_file(config: dict[str, Any], data: st.DataObject) -> None:
    """A line made invalid YAML is reported at a line of the front matter (file numbering)."""
    lines = _dump(config, "block").splitlines() or ["a: 1"]
    index = data.draw(st.integers(0, len(lines) - 1))
    lines[index] = data.draw(st.sampled_from(["\t" + lines[index], lines[index] + " ]", "@" + lines[index]]))
    text = "---\n" + "\n".join(lines) + "\n---\n"
    _, outcome = _outcome(text)
    if isinstance(outcome, ConfigError) and (where := _location(str(outcome))):
        assert 2 <= where[0] <= len(lines) + 2, (str(outcome), text)


def _dump(config: dict[str, Any], style: str) -> str:
    if style == "json":
        return json.dumps(config, ensure_ascii=False)
    out = io.StringIO()
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.dump(config, out)
    return out.getvalue().rstrip("\n")
