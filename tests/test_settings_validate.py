"""`validate_dispatch_config`: order and messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from lorenz.contracts import ToolContext, ToolSpec, TrackerContext
from lorenz.plugins.registry import RegistryError, ToolRegistry, TrackerRegistry
from lorenz.plugins.validate_settings import validate_dispatch_config
from lorenz.results import ToolResult, tool_success
from lorenz.settings import ConfigError, Settings, parse_config
from lorenz.settings.model import TrackerSettings


class Tracker:
    """A tracker whose dispatch check can be told to fail."""

    def __init__(self, kind: str, problem: Exception | None = None) -> None:
        self.kind = kind
        self.problem = problem
        self.calls = 0

    def validate_dispatch(self, settings: Settings) -> None:
        self.calls += 1
        if self.problem is not None:
            raise self.problem

    def create_client(self, settings: Settings, context: TrackerContext) -> Any:
        raise NotImplementedError


class Pack:
    """A tool pack without an options validator."""

    def __init__(self, name: str) -> None:
        self.name = name

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        return []

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        return tool_success(None)


class ValidatingPack(Pack):
    """A pack validating `tools.<name>` like the built-in local/linear packs."""

    def __init__(self, name: str, known: Sequence[str]) -> None:
        super().__init__(name)
        self.known = list(known)
        self.seen: list[Mapping[str, Any]] = []

    def validate_options(self, options: Mapping[str, Any]) -> None:
        self.seen.append(options)
        for key, value in options.items():
            if key not in self.known:
                msg = f"tools.{self.name}.{key} is not supported (known keys: {', '.join(self.known)})"
                raise ValueError(msg)
            if value is not None and not isinstance(value, str):
                msg = f"tools.{self.name}.{key} must be a string"
                raise ValueError(msg)


def trackers(*providers: Any) -> TrackerRegistry:
    registry = TrackerRegistry()
    for provider in providers:
        registry.register(provider)
    return registry


def standard_tools() -> ToolRegistry:
    tools = ToolRegistry()
    tools.register(ValidatingPack("local", ["path", "idPrefix", "id_prefix"]))
    tools.register(ValidatingPack("linear", ["apiKey", "api_key", "endpoint"]))
    tools.register(Pack("jira"))
    return tools


STANDARD_KINDS = ("jira", "jira-mcp", "linear", "local", "memory")


def settings_for(config: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Settings:
    return parse_config(config, env=env or {}, trackers=TrackerRegistry(), base_dir=Path())


def test_unknown_kind_lists_known_kinds() -> None:
    """An unregistered kind names the registered ones (item 74)."""
    registry = trackers(*(Tracker(kind) for kind in STANDARD_KINDS))
    settings = settings_for({"tracker": {"kind": "github"}})
    with pytest.raises(
        ConfigError, match=r"^unsupported tracker\.kind: github \(known kinds: jira, jira-mcp, linear, local, memory\)$"
    ):
        validate_dispatch_config(settings, registry)


def test_unknown_kind_with_empty_registry() -> None:
    """With no trackers the hint says what to install (issue 13 replaces item 74's composition-root hint)."""
    with pytest.raises(ConfigError) as info:
        validate_dispatch_config(settings_for({"tracker": {"kind": "github"}}), trackers())
    assert str(info.value) == (
        "unsupported tracker.kind: github (no tracker plugins are installed; pip install the plugin that provides it)"
    )
    with pytest.raises(ConfigError) as info:
        validate_dispatch_config(settings_for({"tracker": {"kind": "jira-mcp"}}), trackers())
    assert str(info.value) == (
        "unsupported tracker.kind: jira-mcp (no tracker plugins are installed; "
        "the jira-mcp tracker comes with lorenz-jira: pip install lorenz-jira)"
    )


def test_missing_bundled_kind_names_its_distribution() -> None:
    """A bundled kind whose plugin is not installed names the distribution beside the known kinds."""
    with pytest.raises(ConfigError) as info:
        validate_dispatch_config(settings_for({"tracker": {"kind": "linear"}}), trackers(Tracker("memory")))
    assert str(info.value) == (
        "unsupported tracker.kind: linear (known kinds: memory; the linear tracker comes with lorenz-linear: "
        "pip install lorenz-linear)"
    )


def test_registry_errors_stay_value_errors() -> None:
    """Registry messages arrive as ConfigError, still a ValueError, chained to the RegistryError."""
    with pytest.raises(ConfigError) as info:
        validate_dispatch_config(Settings(tracker=TrackerSettings(kind=None)), trackers())
    assert str(info.value) == "tracker.kind is required"
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value.__cause__, RegistryError)


def test_provider_veto_passes_message_through() -> None:
    """A provider's ValueError message passes through unchanged, before tools are checked."""
    registry = trackers(Tracker("memory", ValueError("tracker.api_key is required")))
    settings = settings_for({"tracker": {"kind": "memory"}, "tools": {"gitlab": {}}})
    with pytest.raises(ConfigError, match=r"^tracker\.api_key is required$"):
        validate_dispatch_config(settings, registry, standard_tools())


def test_provider_config_error_is_reraised_as_is() -> None:
    """A ConfigError from the provider is raised unchanged."""
    problem = ConfigError("tracker.team is required")
    with pytest.raises(ConfigError) as info:
        validate_dispatch_config(settings_for({"tracker": {"kind": "memory"}}), trackers(Tracker("memory", problem)))
    assert info.value is problem


def test_tools_options_validate() -> None:
    """Valid pack options pass and the validator sees the parsed options (item 75)."""
    tools = standard_tools()
    settings = settings_for(
        {"tracker": {"kind": "memory"}, "tools": {"local": {"path": "/srv/pack-board", "id_prefix": "PACK-"}}}
    )
    validate_dispatch_config(settings, trackers(Tracker("memory")), tools)
    local = tools.get("local")
    assert isinstance(local, ValidatingPack)
    assert local.seen == [{"path": "/srv/pack-board", "id_prefix": "PACK-"}]


def test_pack_validator_sees_resolved_options() -> None:
    """validate_options gets `$VAR` resolved and unresolved keys dropped."""
    tools = standard_tools()
    settings = settings_for(
        {"tracker": {"kind": "memory"}, "tools": {"linear": {"api_key": "$K", "endpoint": "$E"}}}, {"K": "key-1"}
    )
    validate_dispatch_config(settings, trackers(Tracker("memory")), tools)
    linear = tools.get("linear")
    assert isinstance(linear, ValidatingPack)
    assert linear.seen == [{"api_key": "key-1"}]


def test_unknown_tool_pack() -> None:
    """An unregistered pack lists the known packs (item 78)."""
    settings = settings_for({"tracker": {"kind": "memory"}, "tools": {"gitlab": {}}})
    expected = (
        r"^unsupported tool pack: gitlab \(known tool packs: jira, linear, local\); run lorenz unmount gitlab "
        r"to stop mounting it, or lorenz install the pack that provides it$"
    )
    with pytest.raises(ConfigError, match=expected):
        validate_dispatch_config(settings, trackers(Tracker("memory")), standard_tools())


def test_pack_without_validator_rejects_options() -> None:
    """Options for a pack without validate_options are refused (item 79)."""
    settings = settings_for({"tracker": {"kind": "memory"}, "tools": {"jira": {"surprise": True}}})
    with pytest.raises(ConfigError, match=r'^tools\.jira is not supported by the "jira" pack$'):
        validate_dispatch_config(settings, trackers(Tracker("memory")), standard_tools())


def test_pack_without_validator_accepts_empty_slice() -> None:
    """`tools: {jira: {}}` just mounts the pack."""
    settings = settings_for({"tracker": {"kind": "memory"}, "tools": {"jira": {}}})
    validate_dispatch_config(settings, trackers(Tracker("memory")), standard_tools())


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            {"local": {"surprise": "x"}},
            r"^tools\.local\.surprise is not supported \(known keys: path, idPrefix, id_prefix\)$",
        ),
        ({"local": {"path": 5}}, r"^tools\.local\.path must be a string$"),
        (
            {"linear": {"surprise": "x"}},
            r"^tools\.linear\.surprise is not supported \(known keys: apiKey, api_key, endpoint\)$",
        ),
        ({"linear": {"api_key": 5}}, r"^tools\.linear\.api_key must be a string$"),
    ],
)
def test_pack_validator_messages_pass_through(tools: dict[str, Any], message: str) -> None:
    """A pack's validate_options message passes through unchanged (items 80-81)."""
    settings = settings_for({"tracker": {"kind": "memory"}, "tools": tools})
    with pytest.raises(ConfigError, match=message):
        validate_dispatch_config(settings, trackers(Tracker("memory")), standard_tools())


def test_tools_not_checked_without_registry() -> None:
    """Without a tool registry, unknown packs pass."""
    settings = settings_for({"tracker": {"kind": "memory"}, "tools": {"gitlab": {"x": 1}}})
    validate_dispatch_config(settings, trackers(Tracker("memory")))


def test_memory_tracker_with_local_tools_passes() -> None:
    """A memory tracker with `tools.local` validates (item 77)."""
    settings = settings_for({"tracker": {"kind": "memory"}, "tools": {"local": {"path": "/srv/b"}}})
    validate_dispatch_config(settings, trackers(Tracker("memory")), standard_tools())
    assert settings.tool_options is not None
    assert list(settings.tool_options) == ["local"]


def test_tool_packs_checked_in_order() -> None:
    """The first bad pack in `tools:` order is reported."""
    settings = settings_for({"tracker": {"kind": "memory"}, "tools": {"jira": {"a": 1}, "gitlab": {}}})
    with pytest.raises(ConfigError, match=r'^tools\.jira is not supported by the "jira" pack$'):
        validate_dispatch_config(settings, trackers(Tracker("memory")), standard_tools())


def test_memory_tracker_mounts_local_pack_explicitly() -> None:
    """`tools.local` mounts the local pack over a memory tracker (item 77)."""
    from lorenz.mounting.mount import mounted_pack_names

    settings = settings_for({"tracker": {"kind": "memory"}, "tools": {"local": {"path": "/srv/b"}}})
    assert mounted_pack_names(settings, standard_tools(), trackers(Tracker("memory"))) == ["local"]
