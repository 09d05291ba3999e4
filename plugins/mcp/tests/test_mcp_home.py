"""An upstream mounted by a host that owns its event loop (``lorenz serve``) runs on that loop: no
thread of its own, calls inline; waiting for its first listing runs the loop before it serves;
other loops' calls cross over; a hung or crashing upstream does not stop that loop."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import lorenz_mcp.upstream
from lorenz_mcp.errors import UpstreamError
from lorenz_mcp.options import parse_options
from lorenz_mcp.upstream import Upstream

pytestmark = pytest.mark.slow

#: ``add(a, b)``; ``hang()`` never answers; ``die()`` ends the server mid-call.
UPSTREAM = """
import os
import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("lorenz-mcp-test-home")

@server.tool()
def add(a: int, b: int) -> int:
    return a + b

@server.tool()
async def hang() -> str:
    await anyio.sleep_forever()
    return "never"

@server.tool()
def die() -> str:
    os._exit(3)

server.run("stdio")
"""


@pytest.fixture
def host_loop(monkeypatch: pytest.MonkeyPatch) -> Iterator[asyncio.AbstractEventLoop]:
    """The loop a host serving on its own loop names while it mounts (``lorenz.serving_loop()``)."""
    loop = asyncio.new_event_loop()
    monkeypatch.setattr(lorenz_mcp.upstream, "serving_loop", lambda: loop)
    yield loop
    loop.close()


@pytest.fixture
def upstream(tmp_path: Path, host_loop: asyncio.AbstractEventLoop) -> Iterator[Upstream]:
    script = tmp_path / "upstream.py"
    script.write_text(UPSTREAM, encoding="utf-8")
    options = parse_options({"command": [sys.executable, str(script)], "start_timeout_seconds": 60})
    one = Upstream(options, "home", (), os.environ, 100_000)
    yield one
    one.close()


def _own_threads() -> list[str]:
    return [thread.name for thread in threading.enumerate() if thread.name == "lorenz-mcp home"]


def _server_pids(marker: str) -> list[int]:
    """The processes whose command line names ``marker`` (the upstream's script)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline:
            found.append(int(pid))
    return found


async def _until_served(upstream: Upstream) -> Any:
    """A call once the upstream serves again: a call meets the broken connection until its
    supervisor lets it go, then waits for the restarted one."""
    while True:
        try:
            return await upstream.call("add", {"a": 4, "b": 5}, None)
        except UpstreamError:
            continue


def test_waiting_for_the_first_listing_runs_the_hosts_loop_and_calls_run_inline(
    upstream: Upstream, host_loop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    # ``lorenz serve`` mounting before its loop serves: the mount's wait runs that loop.
    assert [tool["name"] for tool in upstream.listed(60)] == ["add", "hang", "die"]
    assert _own_threads() == []

    async def call() -> tuple[object, object]:
        result = await upstream.call("add", {"a": 2, "b": 3}, None)
        return result.structured_content, upstream.restarts

    assert host_loop.run_until_complete(call()) == ({"result": 5}, 0)
    assert _server_pids(str(tmp_path)), "the upstream should be running"
    upstream.close()  # the host's loop is not running: closing runs it until the server ended
    assert _server_pids(str(tmp_path)) == []


def test_asked_on_the_hosts_loop_a_listing_does_not_wait_and_a_call_waits_without_blocking(
    upstream: Upstream, host_loop: asyncio.AbstractEventLoop
) -> None:
    async def on_the_loop() -> tuple[object, ...]:
        listed = upstream.listed(60)  # what it waits for runs on this loop: it must not block it
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.01)

        ticker = asyncio.ensure_future(tick())
        tools = await upstream.callable_tools()
        result = await upstream.call("add", {"a": 1, "b": 1}, None)
        ticker.cancel()
        return listed, [tool["name"] for tool in tools], result.structured_content, ticks > 1

    assert host_loop.run_until_complete(on_the_loop()) == ((), ["add", "hang", "die"], {"result": 2}, True)


def test_a_hung_or_crashing_upstream_does_not_stop_the_hosts_loop_and_other_loops_cross_over(
    upstream: Upstream, host_loop: asyncio.AbstractEventLoop
) -> None:
    serving = threading.Thread(target=host_loop.run_forever, name="test host loop", daemon=True)
    serving.start()
    try:
        assert [tool["name"] for tool in upstream.listed(60)] == ["add", "hang", "die"]
        beats: list[float] = []

        def beat() -> None:
            beats.append(host_loop.time())
            host_loop.call_later(0.01, beat)

        host_loop.call_soon_threadsafe(beat)

        async def from_another_loop() -> tuple[object, ...]:
            with anyio.move_on_after(0.5) as hung:  # the host's tool timeout, in short
                await upstream.call("hang", {}, None)
            during = len(beats)
            with pytest.raises(UpstreamError, match="ended during the call"):
                await upstream.call("die", {}, None)
            with anyio.fail_after(60):
                again = await _until_served(upstream)
            return hung.cancelled_caught, during > 10, again.structured_content, upstream.restarts

        assert anyio.run(from_another_loop) == (True, True, {"result": 9}, 1)
        assert _own_threads() == []
    finally:
        upstream.close()  # from this thread while the host's loop serves: waits for the server's end
        host_loop.call_soon_threadsafe(host_loop.stop)
        serving.join(10)
