"""Configuring the ``linear`` tracker and pack through the real config pipeline and entry-point discovery."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lorenz import ConfigError, Discovery, Settings, TrackerContext, discover, mounted_tool_specs
from lorenz.testing import (
    check_pack_settings,
    mounted_packs,
    mounted_skill_sources,
    parse_config,
    validate_dispatch_config,
)
from lorenz_linear import DEFAULT_ENDPOINT, LinearClient
from lorenz_linear.plugin import PACK, TRACKER


@pytest.fixture(scope="module")
def discovery() -> Discovery:
    return discover(env={"LORENZ_LOAD_PLUGINS": "lorenz-linear"})


def parse(discovery: Discovery, config: dict[str, Any], env: dict[str, str] | None = None) -> Settings:
    return parse_config(config, env=env or {}, trackers=discovery.trackers, base_dir=Path.cwd())


def validate(discovery: Discovery, settings: Settings) -> None:
    validate_dispatch_config(settings, discovery.trackers, discovery.tools)


def test_entry_point_registers_tracker_and_pack(discovery: Discovery) -> None:
    """Installing ``lorenz-linear`` registers tracker ``linear`` and pack ``linear`` from one plugin."""
    assert discovery.failures == ()
    [plugin] = [p for p in discovery.plugins if p.distribution == "lorenz-linear"]
    assert (plugin.trackers, plugin.packs) == (("linear",), ("linear",))
    assert discovery.trackers.require("linear") is TRACKER
    assert discovery.tools.require("linear") is PACK


def test_flat_config_with_env_fallbacks(discovery: Discovery) -> None:
    """Key and assignee fall back to ``LINEAR_API_KEY``/``LINEAR_ASSIGNEE``; the endpoint defaults to Linear's."""
    env = {"LINEAR_API_KEY": "lin-key", "LINEAR_ASSIGNEE": "me", "SLUG": "mono"}
    settings = parse(discovery, {"tracker": {"kind": "linear", "project_slug": "$SLUG"}}, env)
    assert settings.tracker.api_key == "lin-key" and settings.tracker.assignee == "me"
    assert settings.tracker.endpoint == DEFAULT_ENDPOINT == "https://api.linear.app/graphql"
    assert settings.tracker.options == {"projectSlug": "mono"}
    assert "lin-key" in settings.secrets
    validate(discovery, settings)


def test_bundle_config_with_lists(discovery: Discovery) -> None:
    """A ``trackers:`` bundle with ``project_labels`` parses to camelCase options and validates."""
    config = {
        "tracker": {"kind": "dispatch"},
        "trackers": {"dispatch": {"provider": "linear", "api_key": "$KEY", "project_labels": ["team:backend"]}},
    }
    settings = parse(discovery, config, {"KEY": "k-123"})
    assert settings.tracker.kind == "linear" and settings.tracker.api_key == "k-123"
    assert settings.tracker.options == {"projectLabels": ["team:backend"]}
    validate(discovery, settings)


@pytest.mark.parametrize(
    ("tracker", "message"),
    [
        ({"project_slug": "mono", "surprise": 1}, 'unsupported tracker option(s) for kind "linear": surprise'),
        ({"project_slugs": "mono"}, "tracker.projectSlugs must be a list of strings"),
        ({"project_labels": ["a", 5]}, "tracker.projectLabels must be a list of strings"),
        ({"project_slug": 7}, "tracker.projectSlug must be a string"),
    ],
)
def test_option_errors(discovery: Discovery, tracker: dict[str, Any], message: str) -> None:
    """Unknown keys and mistyped selectors fail parsing with the provider's message."""
    with pytest.raises(ConfigError) as raised:
        parse(discovery, {"tracker": {"kind": "linear", "api_key": "k", **tracker}})
    assert str(raised.value) == message


@pytest.mark.parametrize(
    ("tracker", "env", "message"),
    [
        ({"project_slug": "mono"}, {}, "tracker.api_key is required"),
        ({"api_key": "k"}, {}, "tracker.project_slug, tracker.project_slugs, or tracker.project_labels is required"),
        (
            {"api_key": "k", "project_slug": "$UNSET"},
            {},
            "tracker.project_slug, tracker.project_slugs, or tracker.project_labels is required",
        ),
        (
            {"api_key": "k", "project_slugs": []},
            {},
            "tracker.project_slug, tracker.project_slugs, or tracker.project_labels is required",
        ),
        (
            {"api_key": "k", "project_slug": "mono", "project_labels": ["x"]},
            {},
            "tracker.project_slug, tracker.project_slugs, and tracker.project_labels are mutually exclusive",
        ),
    ],
)
def test_dispatch_validation(discovery: Discovery, tracker: dict[str, Any], env: dict[str, str], message: str) -> None:
    """Dispatch needs an API key and exactly one project selector (empty ones do not count)."""
    settings = parse(discovery, {"tracker": {"kind": "linear", **tracker}}, env)
    with pytest.raises(ConfigError) as raised:
        validate(discovery, settings)
    assert str(raised.value) == message


def test_linear_env_is_ignored_by_other_trackers(discovery: Discovery) -> None:
    """``LINEAR_API_KEY`` only applies when the Linear provider is selected."""
    settings = parse(discovery, {"tracker": {"kind": "memory"}}, {"LINEAR_API_KEY": "lin-key"})
    assert settings.tracker.api_key is None


def test_project_url_only_for_a_single_slug(discovery: Discovery) -> None:
    """``project_url`` links the singular project (URL-encoded) and nothing for lists."""
    one = parse(discovery, {"tracker": {"kind": "linear", "project_slug": "my proj/1"}})
    many = parse(discovery, {"tracker": {"kind": "linear", "project_slugs": ["a", "b"]}})
    assert TRACKER.project_url(one) == "https://linear.app/project/my%20proj%2F1/issues"
    assert TRACKER.project_url(many) is None


def test_default_pack_mounts_linear_graphql_and_its_skill(discovery: Discovery) -> None:
    """Linear dispatch mounts pack ``linear``: tool ``linear_graphql`` and the bundled ``lorenz-linear`` skill."""
    settings = parse(discovery, {"tracker": {"kind": "linear", "api_key": "k", "project_slug": "mono"}})
    packs = mounted_packs(settings, discovery.tools, discovery.trackers)
    assert [spec.name for spec in mounted_tool_specs(packs, settings)] == ["linear_graphql"]
    [skill] = mounted_skill_sources(packs)
    assert Path(skill).is_absolute() and Path(skill).name == "lorenz-linear"
    assert (Path(skill) / "SKILL.md").read_text(encoding="utf-8").startswith("---\nname: lorenz-linear\n")


def test_create_client_uses_the_context_http_client(discovery: Discovery) -> None:
    """``create_client`` returns a Linear client for the settings."""
    settings = parse(discovery, {"tracker": {"kind": "linear", "api_key": "k", "project_slug": "mono"}})
    client = TRACKER.create_client(settings, TrackerContext(env={}))
    assert isinstance(client, LinearClient) and client.settings is settings


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"surprise": "x"}, "tools.linear.surprise is not supported (known keys: apiKey, api_key, endpoint)"),
        ({"api_key": 5}, "tools.linear.api_key must be a string"),
        ({"endpoint": ["x"]}, "tools.linear.endpoint must be a string"),
        ({"endpoint": "linear.example/graphql"}, "tools.linear.endpoint must be an http(s) URL with a host"),
        ({"apikey": "k"}, 'tools.linear.apikey is not supported (did you mean "api_key"?)'),
    ],
)
def test_tool_option_errors(discovery: Discovery, options: dict[str, Any], message: str) -> None:
    """``tools.linear`` accepts only string ``apiKey``/``api_key``/``endpoint``."""
    settings = parse(
        discovery, {"tracker": {"kind": "linear", "api_key": "k", "project_slug": "m"}, "tools": {"linear": options}}
    )
    with pytest.raises(ConfigError) as raised:
        validate(discovery, settings)
    assert str(raised.value) == message


def test_tool_options_resolve_env_and_drop_unset(discovery: Discovery) -> None:
    """``tools.linear.api_key: $VAR`` resolves from env, and an unset variable drops the key."""
    config = {
        "tracker": {"kind": "linear", "api_key": "k", "project_slug": "m"},
        "tools": {"linear": {"api_key": "$PACK_KEY", "endpoint": "http://127.0.0.1:1/graphql"}},
    }
    with_key = parse(discovery, config, {"PACK_KEY": "pack-token"})
    without = parse(discovery, config)
    assert with_key.tool_options == {"linear": {"api_key": "pack-token", "endpoint": "http://127.0.0.1:1/graphql"}}
    assert without.tool_options == {"linear": {"endpoint": "http://127.0.0.1:1/graphql"}}
    validate(discovery, with_key)


def test_pack_check_settings_wants_a_key(discovery: Discovery) -> None:
    """Without a key (its own or a linear tracker's) every call fails: check_settings says so, naming an
    unset variable."""
    beside_local = {"tracker": {"kind": "local"}, "tools": {"linear": {"api_key": "$PACK_KEY"}}}
    assert PACK.check_settings(parse(discovery, beside_local, {"PACK_KEY": "k-1"})) == []
    settings = parse(discovery, beside_local)
    assert check_pack_settings(settings, [PACK]) == ["pack linear: tools.linear.api_key: $PACK_KEY is not set"]
    plain = parse(discovery, {"tools": {"linear": {}}})
    assert check_pack_settings(plain, [PACK]) == [
        "pack linear: tools.linear.api_key is required (or a linear tracker's tracker.api_key)"
    ]
    tracked = parse(discovery, {"tracker": {"kind": "linear", "api_key": "k", "project_slug": "m"}})
    assert check_pack_settings(tracked, [PACK]) == []
