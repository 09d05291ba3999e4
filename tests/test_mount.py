"""Mounting: pack selection, the flat namespace, routing a call."""

from typing import Any

import httpx
import pytest

from lorenz import (
    MountError,
    Settings,
    ToolContext,
    ToolRegistry,
    ToolSpec,
    TrackerRegistry,
    TrackerSettings,
    execute_mounted_tool,
    mounted_pack_names,
    mounted_tool_specs,
    tool_success,
)
from lorenz.mounting.mount import mounted_skill_sources

pytestmark = pytest.mark.anyio


class Pack:
    def __init__(self, name: str, tools: list[str], *, explode: bool = False, skills: tuple[str, ...] = ()) -> None:
        self.name = name
        self.tools = tools
        self.explode = explode
        self.skills = skills

    def tool_specs(self, settings: Settings) -> list[ToolSpec]:
        return [ToolSpec(name=tool, description=f"{tool} of {self.name}") for tool in self.tools]

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> Any:
        if self.explode:
            raise RuntimeError("pack exploded")
        return tool_success({"pack": self.name, "tool": name, "value": input.get("value")})


class Tracker:
    def __init__(self, kind: str, packs: list[str] | None) -> None:
        self.kind = kind
        self._packs = packs

    def create_client(self, settings: Settings, context: Any) -> Any:
        raise NotImplementedError

    def default_tool_packs(self, settings: Settings) -> list[str] | None:
        return self._packs


def settings(kind: str | None, tools: dict[str, Any] | None = None) -> Settings:
    return Settings(tracker=TrackerSettings(kind=kind), tool_options=tools)


@pytest.fixture
def registries() -> tuple[ToolRegistry, TrackerRegistry]:
    tools = ToolRegistry()
    for pack in (Pack("jira", ["jira_query"]), Pack("linear", ["linear_graphql"]), Pack("local", ["local_query"])):
        tools.register(pack)
    trackers = TrackerRegistry()
    trackers.register(Tracker("jira", ["jira"]))
    trackers.register(Tracker("linear", ["linear"]))
    trackers.register(Tracker("memory", []))
    trackers.register(Tracker("nohook", None))
    return tools, trackers


async def context() -> ToolContext:
    return ToolContext(settings=Settings(), http=httpx.AsyncClient())


def test_tracker_defaults_then_tools_map(registries: tuple[ToolRegistry, TrackerRegistry]) -> None:
    """The tracker's default packs mount first, then every tools: key in order, de-duplicated."""
    tools, trackers = registries
    names = mounted_pack_names(settings("jira", {"linear": {}, "local": {}, "jira": {}}), tools, trackers)
    assert names == ["jira", "linear", "local"]


def test_empty_defaults_disable_fallback(registries: tuple[ToolRegistry, TrackerRegistry]) -> None:
    """A tracker returning [] mounts nothing, even if a same-name pack existed."""
    tools, trackers = registries
    tools.register(Pack("memory", ["memory_x"]))
    assert mounted_pack_names(settings("memory"), tools, trackers) == []


def test_kind_name_fallback_for_unregistered_tracker(registries: tuple[ToolRegistry, TrackerRegistry]) -> None:
    """An unregistered tracker kind mounts a same-name pack when one exists."""
    tools, trackers = registries
    tools.register(Pack("beta", ["beta_x"]))
    assert mounted_pack_names(settings("beta"), tools, trackers) == ["beta"]
    tools.register(Pack("nohook", ["nohook_x"]))
    assert mounted_pack_names(settings("nohook"), tools, trackers) == ["nohook"]


def test_flat_namespace_in_mount_order() -> None:
    """Specs are concatenated in pack order."""
    specs = mounted_tool_specs([Pack("jira", ["jira_query"]), Pack("linear", ["linear_graphql"])], Settings())
    assert [spec.name for spec in specs] == ["jira_query", "linear_graphql"]


def test_collision_between_packs_fails_loudly() -> None:
    """Two packs declaring one tool name is a mount error naming both packs."""
    with pytest.raises(
        MountError, match='tool name collision: jira_query is declared by both the "jira" and "other" packs'
    ):
        mounted_tool_specs([Pack("jira", ["jira_query"]), Pack("other", ["jira_query"])], Settings())


def test_same_pack_repeating_a_name_is_allowed() -> None:
    """A pack may repeat its own tool name; both specs are returned."""
    specs = mounted_tool_specs([Pack("x", ["x", "x"])], Settings())
    assert [spec.name for spec in specs] == ["x", "x"]


async def test_call_routes_to_declaring_pack() -> None:
    """A call goes to the pack that declares the tool."""
    packs = [Pack("jira", ["jira_query"]), Pack("linear", ["linear_graphql"])]
    result = await execute_mounted_tool(packs, "linear_graphql", {}, await context())
    assert result.success
    assert result.result == {"pack": "linear", "tool": "linear_graphql", "value": None}


async def test_first_declaring_pack_wins() -> None:
    """With a duplicate name across packs, routing picks the first pack."""
    packs = [Pack("a", ["dup"]), Pack("b", ["dup"])]
    result = await execute_mounted_tool(packs, "dup", {}, await context())
    assert result.result["pack"] == "a"


async def test_unknown_tool_lists_every_mounted_tool() -> None:
    """An unknown name is a failure listing all mounted tools in mount order."""
    packs = [Pack("jira", ["jira_query", "jira_comment"]), Pack("linear", ["linear_graphql"])]
    result = await execute_mounted_tool(packs, "local_query", {}, await context())
    assert result.to_dict() == {
        "success": False,
        "error": 'Unsupported tool: "local_query".',
        "result": {
            "error": {
                "message": 'Unsupported tool: "local_query".',
                "supportedTools": ["jira_query", "jira_comment", "linear_graphql"],
            }
        },
    }


async def test_throwing_pack_becomes_failure() -> None:
    """A pack that raises yields a failure result carrying the message; nothing propagates."""
    result = await execute_mounted_tool([Pack("boom", ["boom_x"], explode=True)], "boom_x", {}, await context())
    assert not result.success
    assert result.error == "pack exploded"


def test_skill_sources_deduplicated_first_kept() -> None:
    """Skills are collected in mount order without duplicates."""
    packs = [Pack("beta", [], skills=("/s/shared", "/s/b")), Pack("alpha", [], skills=("/s/a", "/s/shared"))]
    assert mounted_skill_sources(packs) == ["/s/shared", "/s/b", "/s/a"]


async def test_exception_messages_are_redacted() -> None:
    """A raising pack's message reaches the agent with registered secrets and credentials redacted."""

    class Leaky(Pack):
        async def execute_tool(self, name: str, input: Any, context: ToolContext) -> Any:
            raise RuntimeError("failed with key sk-live-12345 and Authorization: Bearer abc.def")

    class LeakyList(Pack):
        def tool_specs(self, settings: Settings) -> list[ToolSpec]:
            raise RuntimeError("cannot list: sk-live-12345")

    context = ToolContext(settings=Settings(secrets=frozenset({"sk-live-12345"})), http=httpx.AsyncClient())
    result = await execute_mounted_tool([Leaky("leaky", ["leaky_x"])], "leaky_x", {}, context)
    assert result.error == "failed with key [REDACTED] and Authorization: Bearer [REDACTED]"
    listed = await execute_mounted_tool([LeakyList("leaky", [])], "leaky_x", {}, context)
    assert listed.error == "cannot list: [REDACTED]"
