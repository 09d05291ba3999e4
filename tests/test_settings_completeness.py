"""Whether settings can work (issue 13): unset `$VAR`s named, URLs validated, tools-only workflows, and
the packs' `check_settings` hook."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from lorenz.contracts import ToolContext, ToolSpec, TrackerContext
from lorenz.hookspecs import hookimpl
from lorenz.plugins.checks import pack_shape_problem
from lorenz.plugins.discovery import discover
from lorenz.plugins.registry import ToolRegistry, TrackerRegistry
from lorenz.plugins.validate_settings import (
    check_pack_settings,
    has_tracker,
    name_unset_variable,
    needs_tracker_kind,
    validate_dispatch_config,
)
from lorenz.results import ToolResult, tool_success
from lorenz.settings import (
    ConfigError,
    Settings,
    parse_config,
)
from lorenz.settings.options import check_url, string_option
from lorenz.workspace import open_workspace
from lorenz.yaml12 import YamlError, load_yaml


class Site:
    """A tracker reading `base_url` and `email` (like jira), with an api_key env fallback."""

    kind = "site"
    config_aliases: Mapping[str, str] = {"base_url": "baseUrl"}
    env_fallbacks: Mapping[str, str] = {"api_key": "SITE_API_KEY"}

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
        assert context.resolve_secret is not None
        return {
            "baseUrl": context.resolve_secret(string_option(options, "baseUrl")),
            "email": context.resolve_secret(string_option(options, "email"), "SITE_EMAIL"),
        }

    def validate_dispatch(self, settings: Settings) -> None:
        for key in ("baseUrl", "email"):
            if not settings.tracker.options.get(key):
                msg = f"tracker.{'base_url' if key == 'baseUrl' else key} is required for the site tracker"
                raise ValueError(msg)
        if not settings.tracker.api_key:
            msg = "tracker.api_key (or SITE_API_KEY) is required"
            raise ValueError(msg)

    def create_client(self, settings: Settings, context: TrackerContext) -> Any:
        raise NotImplementedError


class Pack:
    """A pack whose `check_settings` returns (or raises) what it is given."""

    def __init__(self, name: str, check: Any = None) -> None:
        self.name = name
        if check is not None:
            self.check_settings = check

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        return [ToolSpec(name=f"{self.name}_ping", description="Ping.")]

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        return tool_success(None)


def sites() -> TrackerRegistry:
    registry = TrackerRegistry()
    registry.register(Site())
    return registry


def parse(config: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Settings:
    return parse_config(config, env=env or {}, trackers=sites(), base_dir=Path())


SITE = {"kind": "site", "base_url": "https://site.example", "email": "me@site.example", "api_key": "$SITE_KEY"}


def validation_error(config: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        validate_dispatch_config(parse(config, env), sites())
    return str(info.value)


def test_unset_api_key_is_named() -> None:
    """`api_key: $SITE_KEY` unset: the provider's `tracker.api_key … required` names the variable."""
    assert validation_error({"tracker": SITE}) == "tracker.api_key: $SITE_KEY is not set"
    validate_dispatch_config(parse({"tracker": SITE}, {"SITE_KEY": "k-123"}), sites())
    # the provider's env fallback still applies, and then nothing is unset
    settings = parse({"tracker": SITE}, {"SITE_API_KEY": "fallback"})
    assert (settings.tracker.api_key, settings.unset_variables) == ("fallback", {})


def test_without_a_reference_the_provider_message_stands() -> None:
    """A key that is simply missing keeps the provider's own message."""
    without_key = {key: value for key, value in SITE.items() if key != "api_key"}
    assert validation_error({"tracker": without_key}) == "tracker.api_key (or SITE_API_KEY) is required"


def test_unset_provider_option_is_named() -> None:
    """A provider option given as an unset `$VAR` is recorded in the workflow's snake spelling."""
    config = {"tracker": {**SITE, "base_url": "$SITE_URL", "email": "$SITE_MAIL"}}
    settings = parse(config, {"SITE_KEY": "k-123"})
    assert settings.unset_variables == {"tracker.base_url": "SITE_URL", "tracker.email": "SITE_MAIL"}
    assert validation_error(config, {"SITE_KEY": "k-123"}) == "tracker.base_url: $SITE_URL is not set"
    # filled by the provider's own fallback: nothing to name
    assert parse(config, {"SITE_EMAIL": "fb@site.example"}).unset_variables == {
        "tracker.api_key": "SITE_KEY",
        "tracker.base_url": "SITE_URL",
    }


def test_unset_tool_option_and_assignee_are_recorded() -> None:
    """Dropped `tools.<pack>` keys and an unset assignee are recorded too."""
    settings = parse(
        {"tracker": {**SITE, "assignee": "$ME"}, "tools": {"acme": {"apiKey": "$ACME_KEY", "region": "$SET"}}},
        {"SET": "eu", "SITE_KEY": "k"},
    )
    assert settings.tool_options == {"acme": {"region": "eu"}}
    assert settings.unset_variables == {"tracker.assignee": "ME", "tools.acme.api_key": "ACME_KEY"}


def test_name_unset_variable_matches_the_key_only() -> None:
    """Only a problem that starts with the recorded key is reworded."""
    settings = Settings(unset_variables={"tracker.api_key": "K"})
    assert name_unset_variable("tracker.api_key is required", settings) == "tracker.api_key: $K is not set"
    assert name_unset_variable("tracker.api_key", settings) == "tracker.api_key: $K is not set"
    assert name_unset_variable("tracker.api_keys is required", settings) == "tracker.api_keys is required"
    assert name_unset_variable("the tracker.api_key is odd", settings) == "the tracker.api_key is odd"


@pytest.mark.parametrize("url", ["https://a.example", "http://127.0.0.1:8080/x?y=1", "HTTPS://A.EXAMPLE/"])
def test_check_url_accepts_http_urls(url: str) -> None:
    assert check_url(url, "tracker.endpoint") == url


@pytest.mark.parametrize("url", ["not a url", "a.example", "ftp://a.example", "https://", "http://[::1", "http://a b"])
def test_check_url_refuses_others(url: str) -> None:
    """Anything but http(s) with a host is refused without echoing the value."""
    with pytest.raises(ConfigError) as info:
        check_url(url, "tracker.base_url")
    assert str(info.value) == "tracker.base_url must be an http(s) URL with a host"


def test_tools_only_workflow_is_valid() -> None:
    """`tools:` and no tracker at all validates; a tracker section without a kind still needs one."""
    tools_only = parse({"tools": {"acme": {}}})
    assert not has_tracker(tools_only)
    validate_dispatch_config(tools_only, TrackerRegistry())
    with pytest.raises(ConfigError, match=r"^tracker\.kind is required \(it selects one of trackers: a, b\)$"):
        parse({"trackers": {"a": {"provider": "site"}, "b": {}}, "tools": {"acme": {}}})
    for config in ({}, {"tools": {}}, {"tracker": {"active_states": ["Todo"]}, "tools": {"acme": {}}}):
        settings = parse(config)
        assert has_tracker(settings)
        with pytest.raises(ConfigError, match=r"^tracker\.kind is required$"):
            validate_dispatch_config(settings, sites())


def test_tools_only_workspace_mounts_only_its_packs(tmp_path: Path) -> None:
    """The workspace of a tools-only workflow mounts exactly the `tools:` packs."""
    (tmp_path / "WORKFLOW.md").write_text("---\ntools:\n  acme: {}\n---\n", encoding="utf-8")
    discovery = discover(plugins=[_Plugin(Pack("acme"), Pack("other"))], entry_points_enabled=False)
    workspace = open_workspace(cwd=tmp_path, env={}, discovery=discovery)
    assert workspace.settings.tracker.kind is None
    assert workspace.pack_names() == ["acme"]
    assert [spec.name for spec in workspace.tool_specs()] == ["acme_ping"]


class _Plugin:
    """An in-process plugin registering packs (and no tracker)."""

    def __init__(self, *packs: Pack) -> None:
        self.packs = packs

    @hookimpl
    def lorenz_register_tool_packs(self, register: Any) -> None:
        for pack in self.packs:
            register(pack)


def test_check_pack_settings_collects_problems_in_order() -> None:
    """Each pack's problems are prefixed with the pack; packs without the hook are skipped."""
    settings = Settings(unset_variables={"tools.b.token": "B_TOKEN"})
    packs = [
        Pack("a", lambda s: ["tools.a.url is required", "tools.a.user is required"]),
        Pack("plain"),
        Pack("b", lambda s: ("tools.b.token is required",)),
        Pack("c", lambda s: []),
        Pack("d", lambda s: None),
    ]
    assert check_pack_settings(settings, packs) == [
        "pack a: tools.a.url is required",
        "pack a: tools.a.user is required",
        "pack b: tools.b.token: $B_TOKEN is not set",
    ]


def test_check_pack_settings_contains_a_broken_hook() -> None:
    """A hook that raises (anything) or returns non-strings is itself reported; the others still run."""

    def exits(settings: Settings) -> list[str]:
        raise SystemExit(3)

    packs = [Pack("x", exits), Pack("y", lambda s: [1]), Pack("z", lambda s: ["tools.z.key is required"])]
    assert check_pack_settings(Settings(), packs) == [
        "pack x: check_settings raised SystemExit: 3",
        "pack y: check_settings raised TypeError: check_settings must return problems (strings), got [1]",
        "pack z: tools.z.key is required",
    ]


def test_needs_tracker_kind() -> None:
    """A pack reading a tracker's settings names them when the tracker is another kind, or absent."""
    reads = ("tracker.url", "tracker.api_key")
    assert needs_tracker_kind(parse({"tracker": SITE}), ("site",), reads) == []
    assert needs_tracker_kind(parse({"tools": {"p": {}}}), ("site", "site-mcp"), reads) == [
        "reads tracker.url, tracker.api_key from a site or site-mcp tracker, but this workflow has no tracker"
    ]
    other = Settings(tracker=parse({"tracker": {"kind": "local"}}).tracker)
    assert needs_tracker_kind(other, ("site",), reads) == [
        "reads tracker.url, tracker.api_key from a site tracker, but tracker.kind is local"
    ]


def test_parse_options_returning_garbage_is_a_config_error() -> None:
    """A provider whose parse_options returns something that is no map fails as a config error."""

    class Garbage(Site):
        def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> Any:
            return 5

    registry = TrackerRegistry()
    registry.register(Garbage())
    with pytest.raises(ConfigError):
        parse_config({"tracker": {"kind": "site"}}, env={}, trackers=registry, base_dir=Path())


def test_yaml_error_carries_its_location() -> None:
    """YamlError keeps the problem and its 1-based line and column apart (str() joins them)."""
    with pytest.raises(YamlError) as info:
        load_yaml("a: 1\nb: [x\n")
    # The text ran out: located where the unclosed "[" opens, not on the line after the last.
    problem = "expected ',' or ']', but got '<stream end>' while parsing a flow sequence that opens here"
    assert (info.value.problem, info.value.line, info.value.column) == (problem, 2, 4)
    assert str(info.value) == f"{problem} at line 2, column 4"
    with pytest.raises(YamlError) as counted:  # lines counted from the text's first line in its file
        load_yaml("a: 1\nb: {x: 1\nc: 2\n", first_line=5)
    assert (counted.value.line, counted.value.column) == (7, 2)
    assert counted.value.problem.endswith("in the flow mapping that opens at line 6, column 4")
    with pytest.raises(YamlError) as unplaced:
        load_yaml("a: &a [*a]")
    assert (str(unplaced.value), unplaced.value.line) == ("recursive aliases are not supported", None)


def test_tools_only_packs_are_still_validated() -> None:
    """validate_dispatch_config still checks `tools:` of a tools-only workflow when given the registry."""
    registry = ToolRegistry()
    with pytest.raises(ConfigError, match=r"^unsupported tool pack: acme"):
        validate_dispatch_config(parse({"tools": {"acme": {}}}), TrackerRegistry(), registry)


def test_discovery_refuses_a_check_settings_that_is_not_callable() -> None:
    """`check_settings` is an optional pack hook: present, it must be callable."""
    assert pack_shape_problem(Pack("ok", lambda s: []), "plugin p") is None
    assert pack_shape_problem(Pack("bad", 5), "plugin p") == (
        'tool pack "bad" does not implement the ToolProvider contract: check_settings is not callable'
    )
