"""Options, aliases, env fallbacks and validation of the jira and jira-mcp trackers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import lorenz_jira.plugin
from lorenz import ConfigError, Discovery, Settings, TrackerContext, TrackerSettings, discover
from lorenz.testing import check_pack_settings, parse_config, validate_dispatch_config
from lorenz_jira.options import jira_options, parse_jira_options
from lorenz_jira.tools import JiraToolPack
from lorenz_jira.tracker import JiraMcpTracker, JiraTracker

MCP_CONFIG: dict[str, Any] = {
    "tracker": {
        "kind": "jira-mcp",
        "base_url": "https://example.atlassian.net",
        "project_keys": ["ENG"],
        "mcp": {
            "url": "$MCP_URL",
            "token": "$MCP_TOKEN",
            "headers": {"x-atlassian-cloud-id": "cloud-1"},
            "tools": {"read_issue": "atlassian_get_issue", "update_status": "atlassian_transition_issue"},
        },
    }
}


@pytest.fixture(scope="module")
def found() -> Discovery:
    return discover(plugins=[lorenz_jira.plugin], entry_points_enabled=False)


def parse(config: dict[str, Any], env: dict[str, str], found: Discovery) -> Settings:
    return parse_config(config, env=env, trackers=found.trackers, base_dir=Path.cwd())


def validate(config: dict[str, Any], env: dict[str, str], found: Discovery) -> None:
    validate_dispatch_config(parse(config, env, found), found.trackers, found.tools)


def test_plugin_registers_both_trackers_and_the_pack(found: Discovery) -> None:
    """One plugin registers ``jira``, ``jira-mcp`` and the ``jira`` pack, which both mount."""
    assert found.failures == ()
    assert found.tools.get("jira") is not None
    for kind in ("jira", "jira-mcp"):
        tracker = found.trackers.require(kind)
        assert tracker.default_tool_packs(Settings()) == ["jira"]  # type: ignore[attr-defined]


def test_mcp_config_normalises_to_the_exact_contract(found: Discovery) -> None:
    """Aliases, ``$VAR`` resolution and canonical tool names yield exactly the documented options."""
    env = {"MCP_URL": "http://127.0.0.1:5123/mcp", "MCP_TOKEN": "mcp-token"}
    settings = parse(MCP_CONFIG, env, found)
    assert dict(settings.tracker.options) == {
        "baseUrl": "https://example.atlassian.net",
        "projectKeys": ["ENG"],
        "mcp": {
            "url": "http://127.0.0.1:5123/mcp",
            "token": "mcp-token",
            "headers": {"x-atlassian-cloud-id": "cloud-1"},
            "tools": {"readIssue": "atlassian_get_issue", "updateStatus": "atlassian_transition_issue"},
        },
    }
    assert "mcp-token" in settings.secrets
    options = jira_options(settings)
    assert options.mcp.tool_name("readIssue") == "atlassian_get_issue"
    assert options.mcp.tool_name("search") == "jira_search"
    assert jira_options(settings) == options


def test_same_config_with_another_env_gives_other_values(found: Discovery) -> None:
    """Nothing is cached on the raw config: each parse sees its own environment."""
    first = parse(MCP_CONFIG, {"MCP_URL": "http://first/mcp", "MCP_TOKEN": "first-token"}, found)
    second = parse(MCP_CONFIG, {"MCP_URL": "http://second/mcp", "MCP_TOKEN": "second-token"}, found)
    assert (jira_options(first).mcp.url, jira_options(first).mcp.token) == ("http://first/mcp", "first-token")
    assert (jira_options(second).mcp.url, jira_options(second).mcp.token) == ("http://second/mcp", "second-token")


def test_programmatic_options_are_normalised_and_independent() -> None:
    """Settings built in code keep literal values and canonicalise tool aliases, unaffected by later mutation."""
    raw_tools: dict[str, Any] = {"read_issue": "atlassian_get_issue"}
    raw = {
        "baseUrl": "https://example.atlassian.net",
        "projectKeys": ["ENG"],
        "mcp": {
            "url": "http://127.0.0.1:5123/mcp",
            "token": "literal-token",
            "headers": {"authorization": "custom"},
            "tools": raw_tools,
        },
    }
    settings = Settings(tracker=TrackerSettings(kind="jira-mcp", options=raw))
    options = jira_options(settings)
    assert options.mcp.token == "literal-token"
    assert dict(options.mcp.headers) == {"authorization": "custom"}
    assert dict(options.mcp.tools) == {"readIssue": "atlassian_get_issue"}
    raw_tools["read_issue"] = 42
    assert dict(options.mcp.tools) == {"readIssue": "atlassian_get_issue"}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"unexpected": True}, 'unsupported tracker option(s) for kind "jira-mcp": unexpected'),
        ({"mcp": "not-a-map"}, "tracker.mcp must be a map"),
        ({"mcp": {"unexpected": True}}, "unsupported tracker.mcp key(s): unexpected"),
        ({"mcp": {"url": 5}}, "tracker.mcp.url must be a string"),
        ({"mcp": {"token": ["x"]}}, "tracker.mcp.token must be a string"),
        ({"mcp": {"headers": {"authorization": 42}}}, "tracker.mcp.headers must be a map of strings"),
        ({"mcp": {"tools": "x"}}, "tracker.mcp.tools must be a map"),
        ({"mcp": {"tools": {"unexpected": "tool"}}}, "unsupported tracker.mcp.tools key(s): unexpected"),
        ({"mcp": {"tools": {"search": 42}}}, "tracker.mcp.tools.search must be a string"),
        ({"mcp": {"tools": {"read_issue": 42}}}, "tracker.mcp.tools.readIssue must be a string"),
        ({"projectKeys": "ENG"}, "tracker.projectKeys must be a list of strings"),
        ({"jql": 3}, "tracker.jql must be a string"),
    ],
)
def test_invalid_options_are_rejected(options: dict[str, Any], message: str) -> None:
    """Each malformed option fails with its exact message."""
    with pytest.raises(
        ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.") + "$"
    ):
        parse_jira_options(options, kind="jira-mcp", env={})


def test_snake_case_aliases_and_env_fallbacks(found: Discovery) -> None:
    """``base_url``/``project_keys``/``issue_type`` are aliases; base URL, email and key fall back to env."""
    env = {"JIRA_BASE_URL": "https://env.atlassian.net", "JIRA_EMAIL": "env@example.com", "JIRA_API_KEY": "env-key"}
    settings = parse({"tracker": {"kind": "jira", "project_keys": ["OPS"], "issue_type": "Bug"}}, env, found)
    options = jira_options(settings)
    assert (options.base_url, options.email, options.api_key) == (
        "https://env.atlassian.net",
        "env@example.com",
        "env-key",
    )
    assert (options.project_keys, options.issue_type) == (("OPS",), "Bug")
    assert {"env@example.com", "env-key"} <= settings.secrets


def test_jira_mcp_has_no_api_key_fallback(found: Discovery) -> None:
    """``JIRA_API_KEY`` is not consulted for ``jira-mcp``."""
    settings = parse({"tracker": {"kind": "jira-mcp", "mcp": {"url": "http://x/mcp"}}}, {"JIRA_API_KEY": "k"}, found)
    assert settings.tracker.api_key is None


def test_explicit_base_url_reference_and_empty_project_keys(found: Discovery) -> None:
    """``base_url: $VAR`` resolves; an unknown variable and an empty key list leave the option unset."""
    config = {"tracker": {"kind": "jira", "base_url": "$SITE", "project_keys": []}}
    assert dict(parse(config, {"SITE": "https://site.test"}, found).tracker.options) == {"baseUrl": "https://site.test"}
    assert dict(parse(config, {}, found).tracker.options) == {}


def test_parse_options_without_a_secret_resolver_keeps_literals() -> None:
    """Through the provider hook directly, literal values are kept as given."""
    parsed = JiraTracker().parse_options({"email": "a@b.c", "baseUrl": "https://x"}, TrackerContext(env={}))
    assert parsed == {"baseUrl": "https://x", "email": "a@b.c"}


@pytest.mark.parametrize(
    ("tracker", "message"),
    [
        ({"kind": "jira"}, "tracker.base_url is required for jira tracker"),
        ({"kind": "jira", "base_url": "https://x"}, "tracker.email is required for jira tracker"),
        ({"kind": "jira", "base_url": "https://x", "email": "e@x"}, "tracker.api_key is required for jira tracker"),
        (
            {"kind": "jira", "base_url": "https://x", "email": "e@x", "api_key": "k"},
            "tracker.jql or tracker.project_keys is required for jira trackers",
        ),
        (
            {"kind": "jira", "base_url": "https://x", "email": "e@x", "api_key": "k", "jql": "   "},
            "tracker.jql or tracker.project_keys is required for jira trackers",
        ),
        ({"kind": "jira-mcp", "project_keys": ["ENG"]}, "tracker.mcp.url is required for jira-mcp tracker"),
        (
            {"kind": "jira-mcp", "mcp": {"url": "http://x/mcp"}},
            "tracker.jql or tracker.project_keys is required for jira trackers",
        ),
    ],
)
def test_validation_order(tracker: dict[str, Any], message: str, found: Discovery) -> None:
    """Dispatch validation reports the first missing setting, in documented order."""
    with pytest.raises(ConfigError) as raised:
        validate({"tracker": tracker}, {}, found)
    assert str(raised.value) == message


def test_valid_configs_pass_and_tools_jira_takes_no_keys(found: Discovery) -> None:
    """Complete configs validate; ``tools.jira: {}`` mounts, any key fails startup."""
    rest = {"kind": "jira", "base_url": "https://x", "email": "e@x", "api_key": "k", "jql": "project = ENG"}
    validate({"tracker": rest, "tools": {"jira": {}}}, {}, found)
    validate({"tracker": {"kind": "jira-mcp", "mcp": {"url": "http://x/mcp"}, "project_keys": ["ENG"]}}, {}, found)
    with pytest.raises(ConfigError, match=r'^tools\.jira is not supported by the "jira" pack$'):
        validate({"tracker": rest, "tools": {"jira": {"endpoint": "x"}}}, {}, found)


def test_project_url() -> None:
    """The project link strips trailing slashes and encodes the first key; unknown without site or key."""
    tracker = JiraTracker()
    settings = Settings(
        tracker=TrackerSettings(kind="jira", options={"baseUrl": "https://x.atlassian.net//", "projectKeys": ["A B"]})
    )
    assert tracker.project_url(settings) == "https://x.atlassian.net/jira/software/c/projects/A%20B/issues"
    assert tracker.project_url(Settings(tracker=TrackerSettings(kind="jira", options={"projectKeys": ["A"]}))) is None
    assert JiraMcpTracker().project_url(Settings(tracker=TrackerSettings(kind="jira-mcp", options={}))) is None


@pytest.mark.parametrize(
    ("tracker", "message"),
    [
        ({"kind": "jira", "base_url": "not a url"}, "tracker.base_url must be an http(s) URL with a host"),
        ({"kind": "jira", "base_url": "$SITE"}, "tracker.base_url must be an http(s) URL with a host"),
        ({"kind": "jira-mcp", "mcp": {"url": "mcp.example"}}, "tracker.mcp.url must be an http(s) URL with a host"),
        (
            {"kind": "jira", "base_ur": "https://x"},
            'unsupported tracker option(s) for kind "jira": base_ur (did you mean "base_url"?)',
        ),
    ],
)
def test_urls_and_typos_are_refused(found: Discovery, tracker: dict[str, Any], message: str) -> None:
    """The site and the MCP server must be http(s) URLs (the default `$JIRA_BASE_URL` too); typos suggest."""
    with pytest.raises(ConfigError) as raised:
        parse({"tracker": tracker}, {"SITE": "acme.atlassian.net"}, found)
    assert str(raised.value) == message
    with pytest.raises(ConfigError, match=r"^tracker\.base_url must be an http\(s\) URL with a host$"):
        parse({"tracker": {"kind": "jira"}}, {"JIRA_BASE_URL": "acme.atlassian.net"}, found)


def test_pack_check_settings_needs_a_jira_tracker(found: Discovery) -> None:
    """Beside another tracker (or none) every jira_* call would fail: check_settings names what it reads."""
    pack = JiraToolPack()
    rest = parse(
        {"tracker": {"kind": "jira", "base_url": "https://x.example", "email": "e@x", "api_key": "k", "jql": "x"}},
        {},
        found,
    )
    assert pack.check_settings(rest) == []
    mcp = parse({"tracker": {"kind": "jira-mcp", "mcp": {"url": "https://m.example"}}}, {}, found)
    assert pack.check_settings(mcp) == []
    beside = Settings(tracker=TrackerSettings(kind="local"), tool_options={"jira": {}})
    assert check_pack_settings(beside, [pack]) == [
        "pack jira: reads tracker.base_url, tracker.email, tracker.api_key from a jira or jira-mcp tracker, "
        "but tracker.kind is local"
    ]
    alone = Settings(tool_options={"jira": {}})
    assert pack.check_settings(alone) == [
        "reads tracker.base_url, tracker.email, tracker.api_key from a jira or jira-mcp tracker, "
        "but this workflow has no tracker"
    ]


def test_unset_api_key_variable_is_named(found: Discovery) -> None:
    """`api_key: $JIRA_API_KEY` unset: the dispatch check names the variable (issue 13)."""
    config = {"tracker": {"kind": "jira", "base_url": "https://x.example", "email": "e@x", "api_key": "$JIRA_API_KEY"}}
    with pytest.raises(ConfigError) as raised:
        validate(config, {}, found)
    assert str(raised.value) == "tracker.api_key: $JIRA_API_KEY is not set"
