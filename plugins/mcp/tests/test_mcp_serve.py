"""The ``mcp`` pack under ``lorenz serve``, mounting servers nobody here wrote: ``mcp-server-time``
and ``@modelcontextprotocol/server-everything`` over stdio, the SDK's ``MCPServer`` over Streamable
HTTP; driven with the official SDK client."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp
import pytest
from mcp.server.mcpserver import Context, MCPServer

from lorenz.testing import loopback_server

pytestmark = pytest.mark.slow


def _children(parent: int, marker: str) -> list[int]:
    """The processes ``parent`` started whose command line holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and marker in cmdline:
            found.append(int(entry.name))
    return found


def _workflow(options: dict[str, Any], server: str = "") -> str:
    return f"tools:\n  mcp: {json.dumps(options)}\nserver:\n  call_log: calls.jsonl\n{server}"


def _calls(served: Any, tmp_path: Path, count: int) -> list[dict[str, Any]]:
    path = tmp_path / "calls.jsonl"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return [json.loads(line) for line in lines]
        time.sleep(0.05)
    raise AssertionError(f"call log has fewer than {count} lines:\n{served.stderr()}")


def test_mcp_server_time_over_stdio(time_server: list[str], serve: Any, tmp_path: Path) -> None:
    served = serve(_workflow({"command": time_server}))
    served.until_listed({"get_current_time", "convert_time"})
    assert httpx.get(served.base + "/healthz").json()["status"] == "ok"

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == {"get_current_time", "convert_time"}
            assert tools["get_current_time"].input_schema["required"] == ["timezone"]
            result = await client.call_tool("get_current_time", {"timezone": "Europe/Paris"})
            assert result.is_error is False
            assert result.structured_content is not None
            assert result.structured_content["timezone"] == "Europe/Paris"
            failed = await client.call_tool("get_current_time", {"timezone": "Not/AZone"})
            assert failed.is_error is True

    anyio.run(scenario)
    records = _calls(served, tmp_path, 2)
    assert [(r["tool"], r["pack"]) for r in records] == [("get_current_time", "mcp")] * 2


def test_server_everything_over_stdio(
    everything_server: list[str], serve: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"LORENZ_TEST_HOST_SECRET": "s3cr3t-host-value", "MCP_TEST_API_TOKEN": "tok-123456"}
    served = serve(
        _workflow({"command": everything_server, "env": {"DECLARED": "yes", "TOKEN": "$MCP_TEST_API_TOKEN"}}), env
    )
    served.until_listed({"echo", "trigger-long-running-operation"})
    upstream = _children(served.process.pid, "server-everything")
    assert len(upstream) == 1, served.stderr()
    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert {"echo", "get-tiny-image", "get-structured-content", "trigger-long-running-operation"} <= set(tools)
            long_running = tools["trigger-long-running-operation"]
            assert long_running.annotations is not None and long_running.annotations.read_only_hint is True
            echo = await client.call_tool("echo", {"message": "hi"})
            assert echo.is_error is False and "hi" in echo.content[0].text  # type: ignore[union-attr]
            image = await client.call_tool("get-tiny-image", {})
            kinds = [block.type for block in image.content]
            assert "image" in kinds
            block = image.content[kinds.index("image")]
            assert block.mime_type == "image/png" and len(block.data) > 100  # type: ignore[union-attr]
            structured = await client.call_tool("get-structured-content", {"location": "New York"})
            assert structured.is_error is False and structured.structured_content is not None
            assert "temperature" in structured.structured_content
            environment = await client.call_tool("get-env", {})
            shown = json.loads(environment.content[0].text)  # type: ignore[union-attr]
            assert shown["DECLARED"] == "yes" and shown["TOKEN"] == "tok-123456"
            assert "LORENZ_TEST_HOST_SECRET" not in shown and "MCP_TEST_API_TOKEN" not in shown
            done = await client.call_tool(
                "trigger-long-running-operation", {"duration": 0.6, "steps": 3}, progress_callback=on_progress
            )
            assert done.is_error is False
            assert progress == [(1, 3), (2, 3), (3, 3)]

            # Killed mid-call: the call gets an error, the server is restarted, the next call works.
            async with anyio.create_task_group() as group:

                async def kill_soon() -> None:
                    await anyio.sleep(0.5)
                    now = _children(served.process.pid, "server-everything")
                    assert now == upstream, (now, upstream, served.stderr())
                    os.kill(upstream[0], signal.SIGKILL)

                group.start_soon(kill_soon)
                killed = await client.call_tool("trigger-long-running-operation", {"duration": 5, "steps": 5})
            assert killed.is_error is True
            assert "ended during the call; it is being restarted" in killed.content[0].text  # type: ignore[union-attr]
            again = await client.call_tool("echo", {"message": "back"})
            assert again.is_error is False, again

    anyio.run(scenario)
    restarted = _children(served.process.pid, "server-everything")
    assert len(restarted) == 1 and restarted != upstream
    assert "tok-123456" not in served.stderr()
    # Killed unasked, it is said with what it wrote last (server-everything says it is running).
    served.until_stderr("exited; its stderr ended with: ")
    records = _calls(served, tmp_path, 7)
    assert [r["tool"] for r in records][:2] == ["echo", "get-tiny-image"]


#: Set when the upstream's `hang` is cancelled: the host's timeout reached the upstream.
HANG_CANCELLED = threading.Event()
#: Set when the upstream's `stall` is cancelled: a client's cancellation reached the upstream.
STALL_CANCELLED = threading.Event()


def _http_upstream() -> Any:
    server = MCPServer("lorenz-mcp-test-upstream")

    @server.tool()
    def add(a: int, b: int) -> dict[str, int]:
        """Add two numbers."""
        return {"sum": a + b}

    @server.tool()
    async def steps(n: int, ctx: Context) -> str:  # type: ignore[type-arg]
        """Count to n, reporting progress."""
        for i in range(n):
            await ctx.report_progress(i + 1, n)
        return f"counted to {n}"

    @server.tool()
    async def hang() -> str:
        """Never answer."""
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            HANG_CANCELLED.set()
            raise
        return "unreachable"

    @server.tool()
    async def stall() -> str:
        """Never answer (until cancelled)."""
        try:
            await anyio.sleep(3600)
        except anyio.get_cancelled_exc_class():
            STALL_CANCELLED.set()
            raise
        return "unreachable"

    return server.streamable_http_app()


@pytest.fixture(scope="module")
def http_upstream() -> Iterator[str]:
    with loopback_server(_http_upstream()) as server:
        yield f"{server.base_url}/mcp"


def test_mcpserver_over_streamable_http(http_upstream: str, serve: Any, tmp_path: Path) -> None:
    options = {"url": http_upstream, "headers": {"Authorization": "Bearer $MCP_TEST_VENDOR_TOKEN"}}
    served = serve(_workflow(options, "  tool_timeout_seconds: 2\n"), {"MCP_TEST_VENDOR_TOKEN": "vendor-token-abcdef"})
    served.until_listed({"add", "stall"})
    progress: list[tuple[float, float | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total))

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == {"add", "steps", "hang", "stall"}
            assert tools["add"].output_schema is not None
            added = await client.call_tool("add", {"a": 2, "b": 3})
            assert added.is_error is False and added.structured_content == {"sum": 5}
            counted = await client.call_tool("steps", {"n": 3}, progress_callback=on_progress)
            assert counted.is_error is False and progress[-1] == (3, 3)
            # Coalesced: the latest report of each 50 ms is relayed, in order, and the last always.
            assert set(progress) <= {(1, 3), (2, 3), (3, 3)} and progress == sorted(set(progress))
            hung = await client.call_tool("hang", {})
            assert hung.is_error is True and "did not finish within 2 s" in hung.content[0].text  # type: ignore[union-attr]
            assert (await client.call_tool("add", {"a": 1, "b": 1})).structured_content == {"sum": 2}

    anyio.run(scenario)
    assert [r["tool"] for r in _calls(served, tmp_path, 4)] == ["add", "steps", "hang", "add"]
    assert HANG_CANCELLED.wait(30), "the timed-out call was not cancelled upstream"


def test_an_upstream_that_cannot_start_degrades_the_host(serve: Any, tmp_path: Path) -> None:
    served = serve(_workflow({"command": ["/nonexistent/mcp-server"]}))
    health = httpx.get(served.base + "/healthz").json()
    assert health["status"] == "degraded"
    failure = health["failed"]["packs"][0]
    assert failure["pack"] == "mcp" and "/nonexistent/mcp-server" in failure["error"]


def test_an_upstream_that_never_answers_is_bounded_by_its_start_timeout(serve: Any, tmp_path: Path) -> None:
    silent = [os.environ.get("PYTHON", "python3"), "-c", "import time; time.sleep(600)"]
    served = serve(_workflow({"command": silent, "start_timeout_seconds": 1}))
    # "starting" until the start timeout has run out in the upstream's own loop, then the timeout.
    deadline = time.monotonic() + 30
    while True:
        health = httpx.get(served.base + "/healthz").json()
        assert health["status"] == "degraded"
        error = health["failed"]["packs"][0]["error"]
        if "starting" not in error or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert "did not answer within 1 s" in error


def test_a_call_the_client_cancels_is_cancelled_upstream(http_upstream: str, serve: Any, tmp_path: Path) -> None:
    served = serve(_workflow({"url": http_upstream}, "  tool_timeout_seconds: 600\n"))
    served.until_listed({"stall"})

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            # The SDK client gives up after 1 s and sends notifications/cancelled for its request.
            with pytest.raises(mcp.MCPError):
                await client.call_tool("stall", {}, read_timeout_seconds=1.0)
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"sum": 3}

    anyio.run(scenario)
    assert STALL_CANCELLED.wait(30), "the call the client cancelled was not cancelled upstream"
    assert [r["tool"] for r in _calls(served, tmp_path, 2)] == ["stall", "add"]
