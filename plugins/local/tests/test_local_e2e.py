"""End to end: `lorenz serve` (the real host under uvicorn on 127.0.0.1) on a board, tools called
through the official MCP SDK client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp
import pytest

from lorenz.host import RunningServer, serve_in_thread
from lorenz_local.store import BoardStore

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-local"}
NAMES = ["local_update_status", "local_comment", "local_create_issue", "local_read_issue", "local_query"]


def workflow(directory: Path, board: Path) -> Path:
    path = directory / "WORKFLOW.md"
    path.write_text(f"---\ntracker:\n  kind: local\n  path: {json.dumps(str(board))}\n---\nWork the board.\n")
    return path


@pytest.fixture
def board(tmp_path: Path) -> Path:
    return tmp_path / "board"


@pytest.fixture
def server(tmp_path: Path, board: Path) -> Iterator[RunningServer]:
    with serve_in_thread(workflow(tmp_path, board), cwd=tmp_path, env=ENV) as running:
        yield running


async def call(client: mcp.Client, name: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    return bool(result.is_error), json.loads(result.content[0].text)


async def test_tools_over_mcp(server: RunningServer, board: Path) -> None:
    """tools/list shows the five tools in order; create, status, comment, read and query work."""
    async with mcp.Client(server.url) as client:
        listed = await client.list_tools()
        assert [tool.name for tool in listed.tools] == NAMES
        error, created = await call(client, "local_create_issue", {"title": "Over MCP", "body": "wire"})
        assert not error
        assert created["issue"]["id"] == "BOARD-1"
        error, moved = await call(client, "local_update_status", {"issueId": "BOARD-1", "status": "In Progress"})
        assert (error, moved["issue"]["stateType"]) == (False, "started")
        assert await call(client, "local_comment", {"issueId": "BOARD-1", "body": "hello"}) == (False, {"ok": True})
        error, read = await call(client, "local_read_issue", {"issueId": "BOARD-1"})
        assert read["issue"] == {"id": "BOARD-1", "status": "In Progress", "title": "Over MCP", "description": "wire"}
        error, queried = await call(client, "local_query", {"select": ["id", "state", "comments"]})
        assert queried["total"] == 1
        assert queried["rows"][0]["state"] == "In Progress"
        assert queried["rows"][0]["comments"][0].endswith("agent: hello")
    assert BoardStore(board).read("BOARD-1").state == "In Progress"


async def test_failures_over_mcp_are_tool_errors(server: RunningServer, board: Path) -> None:
    """A traversal id is refused as an isError result and nothing is written outside the board."""
    async with mcp.Client(server.url) as client:
        error, payload = await call(client, "local_comment", {"issueId": "../../etc/passwd", "body": "x"})
    assert error
    assert payload == {"error": {"message": 'invalid board issue id: "../../etc/passwd" (expected BOARD-<n>)'}}
    # Sandboxed (server.sandboxed_packs), the host makes the declared board directory at start.
    assert not await anyio.Path(board).exists() or not [entry async for entry in anyio.Path(board).iterdir()]


def board_files(board: Path) -> dict[str, bytes]:
    return {str(path.relative_to(board)): path.read_bytes() for path in sorted(board.rglob("*")) if path.is_file()}


@pytest.mark.parametrize(
    ("name", "args", "key"),
    [
        ("local_create_issue", {"title": "t", "staus": "Done"}, "staus"),
        ("local_update_status", {"issueId": "BOARD-1", "status": "Done", "comment": "shipped"}, "comment"),
        ("local_comment", {"issueId": "BOARD-1", "body": "hello", "author": "me"}, "author"),
    ],
)
async def test_a_misspelled_key_is_refused_before_any_write(
    server: RunningServer, board: Path, name: str, args: dict[str, Any], key: str
) -> None:
    """Issue 12: an unknown key is an isError result naming it, and the board is left byte for byte
    as it was (no issue created, no status moved, no comment appended)."""
    BoardStore(board).create("Existing")
    before = board_files(board)
    async with mcp.Client(server.url) as client:
        result = await client.call_tool(name, args)
        assert result.is_error is True
        assert f'Unrecognized key: "{key}"' in result.content[0].text
        assert result.structured_content is not None
        assert result.structured_content["error"]["message"].startswith(f"invalid arguments for tool {name}: ")
    assert board_files(board) == before
    assert BoardStore(board).read("BOARD-1").state == "Todo"


async def test_two_hosts_share_one_board(tmp_path: Path, board: Path) -> None:
    """Two servers on the same board, called concurrently, lose no comment and mint no duplicate id."""
    BoardStore(board).create("Shared")
    second = tmp_path / "second"
    second.mkdir()
    with (
        serve_in_thread(workflow(tmp_path, board), cwd=tmp_path, env=ENV) as one,
        serve_in_thread(workflow(second, board), cwd=second, env=ENV) as two,
    ):
        async with mcp.Client(one.url) as first, mcp.Client(two.url) as other:
            results: list[tuple[bool, Any]] = []

            async def work(client: mcp.Client, tag: str) -> None:
                for index in range(15):
                    results.append(await call(client, "local_comment", {"issueId": "BOARD-1", "body": f"{tag}{index}"}))
                    results.append(await call(client, "local_create_issue", {"title": f"{tag}{index}"}))

            async with anyio.create_task_group() as group:
                for tag, client in (("a", first), ("b", first), ("c", other), ("d", other)):
                    group.start_soon(work, client, tag)
    assert all(not error for error, _ in results)
    comments = BoardStore(board).read_content("BOARD-1")["comments"]
    assert sorted(line.split(" agent: ")[1] for line in comments) == sorted(
        f"{tag}{index}" for tag in "abcd" for index in range(15)
    )
    ids = [payload["issue"]["id"] for _, payload in results if "issue" in payload]
    assert sorted(ids, key=lambda i: int(i[6:])) == [f"BOARD-{n}" for n in range(2, 62)]


async def test_embedded_default_serves_the_local_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no WORKFLOW.md the host mounts the local pack on `.lorenz/local` under the working directory."""
    monkeypatch.chdir(tmp_path)
    with serve_in_thread(cwd=tmp_path, env=ENV) as running:
        async with mcp.Client(running.url) as client:
            assert [tool.name for tool in (await client.list_tools()).tools] == NAMES
            error, _ = await call(client, "local_create_issue", {"title": "Default board"})
    assert not error
    assert (tmp_path / ".lorenz" / "local" / "BOARD-1.md").exists()


MODERN = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
}


async def raw_call(server: RunningServer, name: str, arguments: dict[str, Any]) -> httpx.Response:
    """One stateless 2026-07-28 tools/call; json.dumps writes a lone surrogate as its `\\ud800` escape."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    body["params"]["_meta"] = meta
    async with httpx.AsyncClient() as http:
        headers = {**MODERN, "Mcp-Name": name}
        return await http.post(server.url, content=json.dumps(body).encode("ascii"), headers=headers)


async def test_a_lone_surrogate_cannot_poison_the_board(server: RunningServer, board: Path) -> None:
    """`"status": "\\ud800"` over the wire is an isError naming the field and writes nothing; a
    board file that already holds the escape still answers every read."""
    BoardStore(board).create("Target")
    before = (board / "BOARD-1.md").read_bytes()
    response = await raw_call(server, "local_update_status", {"issueId": "BOARD-1", "status": "\ud800"})
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert "status: contains a lone surrogate" in result["content"][0]["text"]  # the host names the field first
    assert (board / "BOARD-1.md").read_bytes() == before
    (board / "BOARD-2.md").write_text('---\nstatus: "\\uD800"\n---\n\n# Hand written\n')
    for name, arguments in (("local_query", {}), ("local_read_issue", {"issueId": "BOARD-2"})):
        response = await raw_call(server, name, arguments)
        assert response.status_code == 200, response.text
        assert response.json()["result"].get("isError") is not True, response.text
