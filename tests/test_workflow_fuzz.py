"""Fuzz targets for WORKFLOW.md loading (``nox -s fuzz``: 5,000 examples each; 200 in the normal suite).

Arbitrary text and bytes, and YAML-ish front matter built from the settings' own keys with
arbitrary values and syntax mutations, go through the loader the host uses (``load_settings``, then
``validate_dispatch_config`` with the installed plugins). The invariant: a :class:`Settings` or a
:class:`ConfigError` with a message (the documented errors: ``WORKFLOW.md:LINE:COL: …`` for the file
itself, or one naming the key at fault), never another exception,
and no warning either (ruamel's would print the document's lines, secrets included).
"""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from lorenz.plugins.discovery import discover
from lorenz.plugins.validate_settings import validate_dispatch_config
from lorenz.settings import ConfigError, Workflow, load_settings, parse_workflow_content
from lorenz.settings.model import Settings

pytestmark = pytest.mark.fuzz


def label(text: str) -> str:
    """An event label for hypothesis' statistics (which must encode as UTF-8)."""
    return text.encode("ascii", "backslashreplace").decode()[:60]


FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
DISCOVERY = discover()  # the installed trackers and packs: local, jira, linear, slack
ENV = {"TOKEN": "s3cret-token", "EMPTY": "", "LINEAR_API_KEY": "lin-key", "JIRA_API_TOKEN": "jira-token"}

# -- YAML-ish front matter ---------------------------------------------------------------------------

TRACKER_KEYS = [
    "kind", "provider", "endpoint", "api_key", "apiKey", "assignee", "active_states", "activeStates",
    "terminal_states", "dispatch", "path", "idPrefix", "id_prefix", "jql", "project_keys", "projectKeys",
    "email", "mcp", "url", "headers", "channels", "users", "marker_emoji", "project_slug", "projectSlug", "team",
]  # fmt: skip
DISPATCH_KEYS = ["accept_unrouted", "only_routes", "route_label_prefix"]
SERVER_KEYS = [
    "host", "port", "mcp_port", "token", "tokens", "name", "tools", "allowed_origins", "allowed_hosts",
    "stateful", "json_response", "max_body_bytes", "tool_timeout_seconds", "max_result_bytes", "pack_concurrency",
    "call_log", "disabled_tools", "workers", "isolated_packs", "pack_memory_mb", "trace_dir",
]  # fmt: skip
PACKS = ["local", "jira", "linear", "slack", "weather"]
KINDS = ["local", "jira", "jira-mcp", "linear", "slack", "memory", "bogus", " local ", ""]
KEYS = ["tracker", "trackers", "tools", "server", *TRACKER_KEYS, *DISPATCH_KEYS, *SERVER_KEYS, *PACKS]
texts = st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=8)
strings = st.one_of(
    texts,
    st.sampled_from(KINDS),
    st.sampled_from(["$TOKEN", "$EMPTY", "$UNSET", "$", "$ TOKEN", "*", "127.0.0.1", "0.0.0.0", "../up", "~/x"]),
    st.sampled_from(["yes", "on", "true", "1_000", "0o17", "0x1F", "2024-01-01", ".nan", "-.inf", "~", "null"]),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-2, 70000), st.integers(), st.floats(), strings)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.one_of(st.sampled_from(KEYS), texts), inner, max_size=4)
    ),
    max_leaves=12,
)
# Mostly values of the shapes the keys take, so that parsing gets past the first check.
plausible = st.one_of(strings, st.lists(strings, max_size=3), st.booleans(), st.integers(0, 70000))
options = st.one_of(plausible, plausible, values)


def section(keys: list[str], size: int = 3) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(st.sampled_from(keys), options, max_size=size)


trackers = st.builds(
    lambda kind, rest, dispatch: {**({"kind": kind} if kind is not None else {}), **rest, **dispatch},
    st.one_of(st.sampled_from(KINDS), st.sampled_from(KINDS), st.none(), values),
    section([key for key in TRACKER_KEYS if key != "kind"]),
    st.one_of(st.just({}), section(DISPATCH_KEYS).map(lambda d: {"dispatch": d})),
)
structured = st.fixed_dictionaries(
    {"tracker": trackers},
    optional={
        "trackers": st.dictionaries(st.sampled_from(["eng", "ops", " ", *KINDS]), trackers, max_size=2),
        "tools": st.dictionaries(st.sampled_from(PACKS), section([*TRACKER_KEYS, "allow_writes"]), max_size=2),
        "server": section(SERVER_KEYS),
        "other": values,
    },
)
# Near-dispatchable: the local tracker (no required options) with a server section.
local = st.fixed_dictionaries(
    {"tracker": st.builds(lambda rest: {"kind": "local", **rest}, section(["path", "idPrefix"], 1))},
    optional={"server": section(SERVER_KEYS, 2), "tools": st.just({"local": {}})},
)
configs = st.one_of(structured, structured, local, st.dictionaries(st.sampled_from(KEYS), values), values)
SYNTAX = [
    ": ", "- ", "\n", "\n  ", "\t", "#", "&a ", "*a", "*b", "<<: *a\n", "!!int ", "!!str ", "!!binary ",
    "!!timestamp ", "!!set ", "!!omap ", "!!python/object ", "!custom ", "? ", "{", "}", "[", "]", ",",
    '"', "'", "|\n", ">-\n", "%YAML 1.1\n", "---\n", "...\n", "\\", "\x00", "\ufeff", "\u2028", "\r",
]  # fmt: skip


@st.composite
def front_matters(draw: st.DrawFn) -> str:
    """A config written as JSON (a YAML 1.2 subset) or block YAML, then maybe mangled."""
    config = draw(configs)
    text = json.dumps(config, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):
        text = block_yaml(config)
    for _ in range(draw(st.integers(0, 3)) if draw(st.integers(0, 2)) == 0 else 0):
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(SYNTAX)) + text[at:]
    return text


def block_yaml(value: Any, indent: str = "") -> str:
    """Block-style YAML for a config (scalars as JSON, which YAML reads the same)."""
    if isinstance(value, dict) and value:
        return "".join(
            f"{indent}{json.dumps(str(key))}:\n{block_yaml(item, indent + '  ')}"
            if isinstance(item, dict | list) and item
            else f"{indent}{json.dumps(str(key))}: {json.dumps(item)}\n"
            for key, item in value.items()
        )
    if isinstance(value, list) and value:
        return "".join(
            f"{indent}-\n{block_yaml(item, indent + '  ')}"
            if isinstance(item, dict | list) and item
            else f"{indent}- {json.dumps(item)}\n"
            for item in value
        )
    return f"{indent}{json.dumps(value)}\n"


configured = st.builds(lambda front, body: f"---\n{front}\n---\n{body}", front_matters(), texts)
workflows = st.one_of(configured, st.text(), st.builds(lambda text: f"---\n{text}\n---\n", st.text()))
files = st.one_of(configured, configured, configured, workflows, st.binary()).map(
    lambda content: content if isinstance(content, bytes) else content.encode("utf-8", "surrogatepass")
)


# -- the targets -------------------------------------------------------------------------------------


@FUZZ
@given(text=workflows)
def test_workflow_text_splits_or_fails_with_config_error(text: str) -> None:
    """Any text is a Workflow (a map of front matter and a body) or one of the two parse errors."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            workflow = parse_workflow_content(text)
    except ConfigError as exc:
        message = str(exc)
        assert message.startswith("WORKFLOW.md"), message  # located in the file: `WORKFLOW.md:LINE:COL: …`
        assert "\n" not in message
        event(label(message.split(": ", 1)[-1][:30]))
        return
    event("parsed")
    assert isinstance(workflow, Workflow)
    assert isinstance(workflow.config, dict)
    assert isinstance(workflow.body, str)


@FUZZ
@given(content=files)
def test_workflow_file_loads_or_fails_with_config_error(content: bytes) -> None:
    """Any WORKFLOW.md, loaded and checked the way the host does, is Settings or a ConfigError."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "WORKFLOW.md"
        path.write_bytes(content)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                loaded = load_settings(path, env=ENV, trackers=DISCOVERY.trackers)
                validate_dispatch_config(loaded, DISCOVERY.trackers, DISCOVERY.tools)
        except ConfigError as exc:
            message = str(exc)
            assert message, "a ConfigError names what is wrong"
            event(label(f"ConfigError: {message.split(':')[0]}"))
            return
    event(label(f"dispatchable: {loaded.tracker.kind}"))
    assert isinstance(loaded, Settings)
    assert loaded.workflow_path == path.absolute()
