"""Call middleware around ``resources/read`` and ``prompts/get`` too: it sees the method, the URI
or prompt name and the arguments, may change a prompt's arguments or refuse (a JSON-RPC error
carrying its ``reason`` and ``retryAfter``), and its failures are contained as for a tool."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import mcp
import pytest
from attrs import frozen
from mcp.shared.exceptions import MCPError

from lorenz import Call, CallNext, ToolResult, hookimpl, refusal
from lorenz.authoring import CallContext, Pack, PackContext, prompt, resource, tool
from lorenz.host import serve_in_thread

pytestmark = pytest.mark.anyio
ENV = {"LORENZ_LOAD_PLUGINS": ""}
SEEN: list[Call] = []


@frozen
class Empty:
    pass


@frozen
class Topic:
    topic: str


@tool(name="notes_list", description="List the notes.", input=Empty)
async def list_notes(ctx: CallContext, args: Empty) -> dict[str, Any]:
    return {"notes": []}


@resource("notes://readme", name="readme", description="How the notes work.")
async def readme(ctx: PackContext) -> str:
    return "Write a note a day."


@prompt("summarize", arguments=Topic, description="Summarize the notes on a topic.")
async def summarize(ctx: PackContext, args: Topic) -> str:
    return f"Summarize the notes on {args.topic}."


NOTES = Pack(name="notes", tools=[list_notes], resources=[readme], prompts=[summarize])


class Watcher:
    """Records each call; refuses the topic ``secret``; shouts every other topic; raises on ``boom``."""

    async def __call__(self, call: Call, call_next: CallNext) -> ToolResult:
        SEEN.append(call)
        topic = call.arguments.get("topic")
        if topic == "secret":
            return refusal("not that topic", reason="forbidden", recovery="ask about another topic", retry_after=3)
        if topic == "boom":
            raise RuntimeError("the watcher broke")
        if isinstance(topic, str):
            return await call_next(call.with_arguments({"topic": topic.upper()}))
        return await call_next(call)


class Provider:
    name = "watch"

    def create(self, options: Mapping[str, Any], settings: Any) -> Watcher:
        return Watcher()


class Plugin:
    @hookimpl
    def lorenz_register_tool_packs(self, register: Any) -> None:
        register(NOTES)

    @hookimpl
    def lorenz_call_middleware(self, register: Any) -> None:
        register(Provider())


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_middleware_wraps_resource_reads_and_prompt_renders(
    tmp_path: Path, host_pack: ModuleType, mode: str
) -> None:
    front = "tracker:\n  kind: demo\ntools:\n  notes: {}\nserver:\n  middleware: [watch]\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    SEEN.clear()
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, Plugin()]) as server:
        async with mcp.Client(server.url, mode=mode) as client:
            read = await client.read_resource("notes://readme")
            rendered = await client.get_prompt("summarize", {"topic": "birds"})
            with pytest.raises(MCPError) as refused:
                await client.get_prompt("summarize", {"topic": "secret"})
            with pytest.raises(MCPError) as broke:
                await client.get_prompt("summarize", {"topic": "boom"})
            again = await client.read_resource("notes://readme")  # the host still serves
    assert "Write a note a day." in str(read.contents[0]) and read == again
    assert "Summarize the notes on BIRDS." in str(rendered.messages[0].content)
    assert [(call.method, call.tool, call.pack) for call in SEEN[:2]] == [
        ("resources/read", "notes://readme", "notes"),
        ("prompts/get", "summarize", "notes"),
    ]
    assert SEEN[0].arguments == {"uri": "notes://readme"} and SEEN[0].transport == "http"
    assert refused.value.error.message == "not that topic"
    assert refused.value.error.data == {
        "reason": "forbidden",
        "recovery": "ask about another topic",
        "retryable": True,
        "retryAfter": 3,
    }
    assert "middleware watch raised: the watcher broke" in broke.value.error.message


class HideNotes:
    """A catalog shaper: the token named ``outsider`` sees no ``notes_`` tool."""

    name = "hide_notes"

    def create(self, options: Mapping[str, Any], settings: Any) -> Any:
        async def shape(tools: Any, listing: Any) -> list[Any]:
            outsider = listing.token_name == "outsider"
            return [tool for tool in tools if not (outsider and tool.name.startswith("notes_"))]

        return shape

    @hookimpl
    def lorenz_catalog(self, register: Any) -> None:
        register(self)


WHO = ("outsider", "insider")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_resources_and_prompts_follow_what_the_shapers_show(
    tmp_path: Path, host_pack: ModuleType, mode: str
) -> None:
    """A caller the shapers show no tool of a pack sees none of its resources or prompts either."""
    import httpx

    tokens = "  tokens:\n" + "".join(f"    - {{token: {who}-token-1234567, name: {who}}}\n" for who in WHO)
    front = f"tracker:\n  kind: demo\ntools:\n  notes: {{}}\nserver:\n  middleware: [hide_notes]\n{tokens}"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    seen: dict[str, tuple[list[str], list[str], bool]] = {}
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, Plugin(), HideNotes()]) as server:
        for who in WHO:
            async with httpx.AsyncClient(headers={"Authorization": f"Bearer {who}-token-1234567"}) as http:
                transport = mcp.client.streamable_http.streamable_http_client(server.url, http_client=http)
                async with mcp.Client(transport, mode=mode) as client:
                    resources = [str(r.uri) for r in (await client.list_resources()).resources]
                    prompts = [p.name for p in (await client.list_prompts()).prompts]
                    try:
                        await client.read_resource("notes://readme")
                        readable = True
                    except MCPError:
                        readable = False
            seen[who] = (resources, prompts, readable)
    assert seen["insider"] == (["notes://readme"], ["summarize"], True)
    assert seen["outsider"] == ([], [], False)
