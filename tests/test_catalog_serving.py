"""``server.catalog`` served over MCP with the official SDK client: a caller's list fits its budget
and carries the search and call tools; a search finds a left-out tool and calling it (directly or
through the call tool) works; usage moves a tool into the list; a scoped token never finds or
calls what it may not; a search adds what it found to a stateful session's list."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp
import mcp_types as types
import pytest
from mcp import StdioServerParameters

import lorenz
from lorenz import ToolSpec, tool_success
from lorenz.host import serve_in_thread
from lorenz.toolsearch.cost import context_tokens

pytestmark = pytest.mark.anyio

ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-local", "PATH": os.environ.get("PATH", "")}
SEARCH, CALL = "lorenz_search_tools", "lorenz_call_tool"
BUDGET = 1600
TOKEN = "reader-token-1234567890"


def _workflow(tmp_path: Path, server: str = "", budget: int = BUDGET) -> None:
    catalog = f"  catalog: {{budget_tokens: {budget}, pinned: [local_read_issue]}}\n"
    front = f"tracker:\n  kind: local\nserver:\n{catalog}{server}"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")


def _names(listed: types.ListToolsResult) -> list[str]:
    return [tool.name for tool in listed.tools]


def _cost(listed: types.ListToolsResult) -> int:
    return sum(context_tokens(tool.model_dump(by_alias=True, mode="json", exclude_none=True)) for tool in listed.tools)


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_a_budgeted_list_searches_and_calls_the_rest(tmp_path: Path, era: str) -> None:
    _workflow(tmp_path, "  call_log: calls.jsonl\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, reload=False) as server:
        async with mcp.Client(server.url, mode=era) as client:  # type: ignore[arg-type]
            first = await client.list_tools()
            names = _names(first)
            assert names[0] == "local_read_issue" and names[-2:] == [SEARCH, CALL], names
            assert _cost(first) <= BUDGET and "local_create_issue" not in names, names

            found = await client.call_tool(SEARCH, {"query": "create an issue", "limit": 3})
            assert found.is_error is False
            tools = found.structured_content["tools"]  # type: ignore[index]
            assert tools[0]["name"] == "local_create_issue", [tool["name"] for tool in tools]
            assert tools[0]["inputSchema"]["required"] == ["title"]

            made = await client.call_tool(CALL, {"name": "local_create_issue", "arguments": {"title": "Via call"}})
            direct = await client.call_tool("local_create_issue", {"title": "Directly"})
            wrong = await client.call_tool(CALL, {"name": "local_create_issue", "arguments": {"title": 3}})
            unknown = await client.call_tool(CALL, {"name": "nope", "arguments": {}})
    assert made.is_error is False and direct.is_error is False
    assert made.structured_content["issue"]["title"] == "Via call"  # type: ignore[index]
    assert wrong.is_error is True and "title" in wrong.structured_content["error"]["message"]  # type: ignore[index]
    assert unknown.is_error is True
    assert unknown.structured_content["error"]["message"] == 'Unsupported tool: "nope".'  # type: ignore[index]
    logged = [json.loads(line)["tool"] for line in (tmp_path / "calls.jsonl").read_text().splitlines()]
    assert logged == [SEARCH, "local_create_issue", "local_create_issue", "local_create_issue", "nope"]


async def test_a_callers_most_used_tools_move_into_its_list(tmp_path: Path) -> None:
    _workflow(tmp_path)
    with serve_in_thread(cwd=tmp_path, env=ENV, reload=False) as server:
        async with mcp.Client(server.url) as client:
            before = _names(await client.list_tools())
            assert "local_comment" not in before, before
            made = await client.call_tool("local_create_issue", {"title": "Talked about"})
            issue = made.structured_content["issue"]["identifier"]  # type: ignore[index]
            for n in range(3):
                said = await client.call_tool("local_comment", {"issueId": issue, "body": f"note {n}"})
                assert said.is_error is False, said
            after = _names(await client.list_tools())
    assert after == ["local_read_issue", "local_comment", SEARCH, CALL], after


async def test_usage_is_learned_from_the_call_log_at_start(tmp_path: Path) -> None:
    _workflow(tmp_path, "  call_log: calls.jsonl\n")
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    lines = [{"ts": now, "tool": "local_comment", "outcome": "success", "durationMs": 1.0}] * 4
    (tmp_path / "calls.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    with serve_in_thread(cwd=tmp_path, env=ENV, reload=False) as server:
        async with mcp.Client(server.url) as client:
            names = _names(await client.list_tools())
    assert "local_comment" in names, names


async def test_a_scoped_token_never_finds_or_calls_what_it_may_not(tmp_path: Path) -> None:
    tokens = (
        f"  tokens:\n    - {{token: {TOKEN}, name: reader, tools: [local_read_issue, local_query, local_comment]}}\n"
    )
    _workflow(tmp_path, tokens, budget=1000)
    with serve_in_thread(cwd=tmp_path, env=ENV, reload=False) as server:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            transport = mcp.client.streamable_http.streamable_http_client(server.url, http_client=http)
            async with mcp.Client(transport) as client:
                names = _names(await client.list_tools())
                found = await client.call_tool(SEARCH, {"query": "create an issue", "limit": 20})
                made = await client.call_tool(CALL, {"name": "local_create_issue", "arguments": {"title": "No"}})
    assert SEARCH in names and not {"local_create_issue", "local_update_status"} & set(names), names
    shown = {tool["name"] for tool in found.structured_content["tools"]}  # type: ignore[index]
    assert shown and shown <= {"local_read_issue", "local_query", "local_comment"}, shown
    error = made.structured_content["error"]  # type: ignore[index]
    assert made.is_error is True and error["message"] == 'Unsupported tool: "local_create_issue".', error
    assert set(error["supportedTools"]) == {"local_read_issue", "local_query", "local_comment"}


async def test_a_search_adds_what_it_found_to_a_stateful_sessions_list(tmp_path: Path) -> None:
    _workflow(tmp_path, "  stateful: true\n")
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    with serve_in_thread(cwd=tmp_path, env=ENV, reload=False) as server:
        async with mcp.Client(server.url, mode="legacy", message_handler=on_message) as client:
            assert "local_create_issue" not in _names(await client.list_tools())
            found = await client.call_tool(SEARCH, {"query": "create an issue", "limit": 1})
            assert found.structured_content["tools"][0]["name"] == "local_create_issue"  # type: ignore[index]
            with anyio.fail_after(10):
                await changed.wait()
            names = _names(await client.list_tools())
        async with mcp.Client(server.url, mode="legacy") as other:
            elsewhere = _names(await other.list_tools())
    assert "local_create_issue" in names and SEARCH in names, names
    assert "local_create_issue" not in elsewhere  # another session's list is its own


async def test_arguments_of_the_catalog_tools_are_checked(tmp_path: Path) -> None:
    _workflow(tmp_path)
    with serve_in_thread(cwd=tmp_path, env=ENV, reload=False) as server:
        async with mcp.Client(server.url) as client:
            replies = [
                await client.call_tool(SEARCH, {"query": " "}),
                await client.call_tool(SEARCH, {"query": "x" * 1001}),
                await client.call_tool(SEARCH, {"query": "issue", "limit": 0}),
                await client.call_tool(CALL, {"name": SEARCH, "arguments": {"query": "issue"}}),
            ]
    for reply, key in zip(replies, ["query", "query", "limit", "name"], strict=True):
        assert reply.is_error is True
        assert f"Invalid arguments: {key} must be" in reply.structured_content["error"]["message"]  # type: ignore[index]


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_over_stdio(tmp_path: Path, era: str) -> None:
    _workflow(tmp_path)
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-local"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorenz", "serve", "--stdio"], env=env, cwd=tmp_path
    )
    async with mcp.Client(params, mode=era) as client:  # type: ignore[arg-type]
        first = _names(await client.list_tools())
        found = await client.call_tool(SEARCH, {"query": "create an issue", "limit": 1})
        searched = _names(await client.list_tools())
        made = await client.call_tool(CALL, {"name": "local_create_issue", "arguments": {"title": "Over stdio"}})
        used = _names(await client.list_tools())
    assert first[-2:] == [SEARCH, CALL] and "local_create_issue" not in first, first
    assert found.structured_content["tools"][0]["name"] == "local_create_issue"  # type: ignore[index]
    assert made.is_error is False and made.structured_content["issue"]["title"] == "Over stdio"  # type: ignore[index]
    # A handshake-era stdio client hears of list changes, so what its search found is listed since;
    # in either era, a tool called (through the call tool too) is listed once it is the most used.
    assert ("local_create_issue" in searched) is (era == "legacy"), searched
    assert "local_create_issue" in used, used


#: Forty tools of eight services, each doing one of five things.
SERVICES = ["invoice", "calendar", "wiki", "deploy", "alert", "backup", "payroll", "inventory"]
VERBS = {
    "list": "List every {s} record matching a filter.",
    "get": "Read one {s} record by its id, with all its fields.",
    "create": "Create a new {s} record from the given fields.",
    "update": "Change fields of an existing {s} record.",
    "delete": "Remove a {s} record for good.",
}


class ManyPack:
    name = "many"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        schema = {"type": "object", "properties": {"id": {"type": "string", "description": "The record's id."}}}
        return [
            ToolSpec(name=f"{service}_{verb}", description=text.format(s=service), input_schema=schema)
            for service in SERVICES
            for verb, text in VERBS.items()
        ]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        return tool_success({"tool": name, "id": input.get("id")})


class ManyPlugin:
    @lorenz.hookimpl
    def lorenz_register_tool_packs(self, register: Any) -> None:
        register(ManyPack())


async def test_forty_tools_fit_a_small_budget(tmp_path: Path) -> None:
    front = "tools:\n  many: {}\nserver:\n  catalog: {budget_tokens: 700}\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", "")}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[ManyPlugin()], reload=False) as server:
        async with mcp.Client(server.url) as client:
            listed = await client.list_tools()
            found = await client.call_tool(SEARCH, {"query": "remove a payroll record", "limit": 3})
            called = await client.call_tool(CALL, {"name": "payroll_delete", "arguments": {"id": "p-7"}})
    names = _names(listed)
    assert 2 < len(names) < 40 and names[-2:] == [SEARCH, CALL] and _cost(listed) <= 700, names
    assert found.structured_content["tools"][0]["name"] == "payroll_delete"  # type: ignore[index]
    assert called.structured_content == {"tool": "payroll_delete", "id": "p-7"}


class HidePayroll:
    """A catalog shaper (``lorenz_catalog``) hiding every ``payroll_`` tool."""

    name = "no_payroll"

    def create(self, options: Any, settings: Any) -> Any:
        async def shape(tools: tuple[ToolSpec, ...], listing: Any) -> list[ToolSpec]:
            return [tool for tool in tools if not tool.name.startswith("payroll_")]

        return shape

    @lorenz.hookimpl
    def lorenz_catalog(self, register: Any) -> None:
        register(self)


async def test_a_tool_a_shaper_hides_is_never_listed_found_or_called(tmp_path: Path) -> None:
    """The catalog hook applies to the budgeted list, the search tool and the call tool alike."""
    front = "tools:\n  many: {}\nserver:\n  catalog: {budget_tokens: 700}\n  middleware: [no_payroll]\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", "")}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[ManyPlugin(), HidePayroll()], reload=False) as server:
        async with mcp.Client(server.url) as client:
            listed = await client.list_tools()
            found = await client.call_tool(SEARCH, {"query": "remove a payroll record", "limit": 20})
            called = await client.call_tool(CALL, {"name": "payroll_delete", "arguments": {"id": "p-7"}})
            direct = await client.call_tool("payroll_delete", {"id": "p-7"})
            other = await client.call_tool(CALL, {"name": "invoice_delete", "arguments": {"id": "i-1"}})
    assert SEARCH in _names(listed) and not any(name.startswith("payroll_") for name in _names(listed))
    shown = [tool["name"] for tool in found.structured_content["tools"]]  # type: ignore[index]
    assert shown and not any(name.startswith("payroll_") for name in shown), shown
    assert called.is_error is True and direct.is_error is True
    assert called.structured_content["error"]["message"] == 'Unsupported tool: "payroll_delete".'  # type: ignore[index]
    assert other.structured_content == {"tool": "invoice_delete", "id": "i-1"}


async def test_the_landing_page_shows_costs_and_what_a_new_caller_is_listed(tmp_path: Path) -> None:
    _workflow(tmp_path)
    with serve_in_thread(cwd=tmp_path, env=ENV, reload=False) as server:
        async with httpx.AsyncClient(timeout=10) as http:
            page = (await http.get(server.base_url + "/")).text
        async with mcp.Client(server.url) as client:
            listed = await client.list_tools()
    budget = page.split('<h2 id="budget">Context budget</h2>', 1)[1].split("<h2", 1)[0]
    total = sum(context_tokens(spec.to_wire()) for spec in _local_specs(tmp_path))
    assert f"5 tools: ~{total} tokens" in budget, budget
    served = ", ".join(f"<code>{name}</code>" for name in _names(listed))
    assert f"lists a new caller 4 tools, ~{_cost(listed)} tokens: {served}." in budget, budget
    assert "Left out (found by lorenz_search_tools, or called by name): <code>local_comment</code>" in budget
    read = next(spec for spec in _local_specs(tmp_path) if spec.name == "local_read_issue")
    assert "<code>local_read_issue</code>" in page and f"~{context_tokens(read.to_wire())} tokens</span>" in page


def _local_specs(directory: Path) -> list[ToolSpec]:
    from lorenz.testing import open_workspace

    return list(open_workspace(cwd=directory, env=ENV).mounted.specs)
