"""Slow clients on real loopback sockets: connections that trickle a request's headers or body do
not lock real requests out, and the server closes them with a 408 once the read timeout passes;
at the connection cap the longest-waiting connection makes room for a new one."""

from __future__ import annotations

import asyncio
import contextlib
import json
import resource
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from lorenz.host import RunningServer, serve_in_thread
from lorenz.host.http.loopback import serve_app_in_thread
from lorenz.host.http.protocol import HostConfig

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-local"}
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
SLOW = 1000  # of each kind


class Trickler:
    """A connection that starts a request (headers only, or headers and part of a body) and then
    sends one more byte every half second, until the server closes it."""

    def __init__(self, port: int, *, body: bool) -> None:
        self.port = port
        self.body = body
        self.reply = b""
        self.held: float | None = None

    async def open(self) -> None:
        self.opened = time.monotonic()  # before the server can have seen the connection
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nContent-Type: application/json\r\n"
        if self.body:
            head += "Accept: application/json\r\nContent-Length: 100000\r\n\r\n{"
        self.writer.write(head.encode())
        await self.writer.drain()

    @property
    def open_now(self) -> bool:
        return self.held is None and not self.reader.at_eof()

    async def trickle(self) -> None:
        try:
            self.reply = await trickle_until_closed(self.reader, self.writer, b" " if self.body else b"X")
        finally:
            self.held = time.monotonic() - self.opened


async def trickle_until_closed(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, byte: bytes) -> bytes:
    """Send ``byte`` every half second until the server closes the connection; what it sent."""
    reply = b""
    try:
        while True:
            try:
                chunk = await asyncio.wait_for(reader.read(4096), timeout=0.5)
            except TimeoutError:
                writer.write(byte)
                continue
            reply += chunk
            if not chunk:
                break
    except OSError:  # reset by the server
        pass
    finally:
        writer.close()
    return reply


async def open_tricklers(port: int) -> tuple[list[Trickler], list[asyncio.Task[None]]]:
    slow = [Trickler(port, body=index % 2 == 1) for index in range(2 * SLOW)]
    for start in range(0, len(slow), 200):
        await asyncio.gather(*(trickler.open() for trickler in slow[start : start + 200]))
    return slow, [asyncio.create_task(trickler.trickle()) for trickler in slow]


@pytest.fixture(autouse=True)
def enough_file_descriptors() -> None:
    """Both ends of every connection live in this process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 4 * 2 * SLOW + 1000
    if soft < needed:
        assert hard >= needed, f"this test needs {needed} open files; the hard limit is {hard}"
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


@contextlib.contextmanager
def local_board(tmp_path: Path, read_timeout: float) -> Iterator[RunningServer]:
    workflow = tmp_path / "WORKFLOW.md"
    board = json.dumps(str(tmp_path / "board"))
    workflow.write_text(
        f"---\ntracker:\n  kind: local\n  path: {board}\nserver:\n  read_timeout_seconds: {read_timeout}\n---\n"
    )
    with serve_in_thread(workflow, cwd=tmp_path, env=ENV) as server:
        yield server


async def test_tricklers_do_not_lock_out_real_calls(tmp_path: Path) -> None:
    """While 1,000 header-tricklers and 1,000 body-tricklers are held open, 100 tools/call on new
    connections all succeed (before, each got 503)."""
    with local_board(tmp_path, read_timeout=120) as server:  # none is timed out, however long this takes
        slow, tasks = await open_tricklers(int(server.base_url.rsplit(":", 1)[1]))
        await asyncio.sleep(0.6)  # every trickler has sent a byte more
        replies = []
        call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "local_query", "arguments": {}}}
        async with httpx.AsyncClient(headers=HEADERS, limits=httpx.Limits(max_keepalive_connections=0)) as http:
            for index in range(100):
                replies.append(await http.post(server.url, json={**call, "id": index}, timeout=10))
        still_open = sum(trickler.open_now for trickler in slow)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert [reply.status_code for reply in replies] == [200] * 100
    assert all(reply.json()["result"]["isError"] is False for reply in replies)
    assert still_open == 2 * SLOW


async def test_tricklers_are_closed_after_the_read_timeout(tmp_path: Path) -> None:
    """With server.read_timeout_seconds: 1, every trickler gets a 408 and is closed, no sooner."""
    with local_board(tmp_path, read_timeout=1) as server:
        slow, tasks = await open_tricklers(int(server.base_url.rsplit(":", 1)[1]))
        with anyio.fail_after(20):  # generous: each should be closed after about a second
            await asyncio.gather(*tasks)
        async with httpx.AsyncClient(headers=HEADERS) as http:
            after = await http.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert all(trickler.reply.startswith(b"HTTP/1.1 408 ") for trickler in slow)
    assert min(trickler.held or 0 for trickler in slow) >= 1
    assert after.status_code == 200


#: Released by each request to /hold, which then waits for RELEASE (the app runs in the server's thread).
ARRIVED = threading.Semaphore(0)
RELEASE = threading.Event()


async def slow_app(request: Request) -> PlainTextResponse:
    await request.body()
    if request.url.path == "/hold":
        ARRIVED.release()
        await anyio.to_thread.run_sync(RELEASE.wait, 10)
    return PlainTextResponse("ok")


def capped(max_connections: int, read_timeout: float = 30) -> Any:
    app = Starlette(routes=[Route("/{path}", slow_app, methods=["POST"])])
    return serve_app_in_thread(
        app, config=HostConfig, read_timeout=lambda: read_timeout, max_connections=max_connections, ws="none"
    )


async def test_at_the_cap_the_longest_waiting_connection_makes_room() -> None:
    """With every slot taken by tricklers, a new real request is served and the oldest trickler
    is the one closed (with a 408); the others are kept."""
    with capped(max_connections=5) as server:
        slow = [Trickler(server.port, body=False) for _ in range(5)]
        for trickler in slow:
            await trickler.open()
        tasks = [asyncio.create_task(trickler.trickle()) for trickler in slow]
        async with httpx.AsyncClient() as http:
            reply = await http.post(server.base_url + "/now", content=b"x", timeout=10)
        with anyio.fail_after(10):
            await tasks[0]
        await asyncio.sleep(0.3)
        kept = [trickler.open_now for trickler in slow[1:]]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert reply.status_code == 200
    assert slow[0].reply.startswith(b"HTTP/1.1 408 ")
    assert kept == [True] * 4


async def test_at_the_cap_with_every_request_in_flight_a_new_one_gets_503() -> None:
    """Connections whose requests the app is working on are never closed to make room."""
    RELEASE.clear()
    with capped(max_connections=2) as server:
        held: list[int] = []
        async with httpx.AsyncClient(base_url=server.base_url, timeout=10) as http, anyio.create_task_group() as group:

            async def hold() -> None:
                held.append((await http.post("/hold", content=b"x")).status_code)

            group.start_soon(hold)
            group.start_soon(hold)
            for _ in range(2):
                assert await anyio.to_thread.run_sync(ARRIVED.acquire, True, 10)
            async with httpx.AsyncClient() as other:
                refused = await other.post(server.base_url + "/now", content=b"x")
            RELEASE.set()
    assert refused.status_code == 503
    assert held == [200, 200]


async def test_a_keep_alive_connection_trickling_its_next_request_is_closed() -> None:
    """The header deadline also runs for a keep-alive connection's next request, from its first
    byte (uvicorn's keep-alive timeout stops counting once a byte arrives)."""
    with capped(max_connections=10, read_timeout=1) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"POST /now HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n\r\nx")
        first = await reader.readuntil(b"ok")
        writer.write(b"POST /now HTTP/1.1\r\n")
        with anyio.fail_after(10):
            reply = await trickle_until_closed(reader, writer, b"X")
    assert first.startswith(b"HTTP/1.1 200 ")
    assert reply.startswith(b"HTTP/1.1 408 ")


async def test_a_shortened_read_timeout_applies_to_the_next_deadline() -> None:
    """A reload that shortens the read timeout holds for a connection whose earlier request armed
    a later deadline: its next request is not given the old, longer one."""
    timeout = [30.0]
    app = Starlette(routes=[Route("/{path}", slow_app, methods=["POST"])])
    with serve_app_in_thread(app, config=HostConfig, read_timeout=lambda: timeout[0], ws="none") as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"POST /now HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n\r\nx")
        first = await reader.readuntil(b"ok")
        timeout[0] = 1.0
        writer.write(b"POST /now HTTP/1.1\r\n")
        started = time.monotonic()
        with anyio.fail_after(10):
            reply = await trickle_until_closed(reader, writer, b"X")
    assert first.startswith(b"HTTP/1.1 200 ")
    assert reply.startswith(b"HTTP/1.1 408 ")
    assert 1 <= time.monotonic() - started < 10


async def test_an_idle_keep_alive_connection_is_closed_quietly_after_the_keep_alive_timeout() -> None:
    """Between requests a connection has uvicorn's keep-alive timeout (here 1 s), then is closed
    without a word; each request starts the count again."""
    app = Starlette(routes=[Route("/{path}", slow_app, methods=["POST"])])
    options = {"read_timeout": lambda: 30.0, "timeout_keep_alive": 1, "ws": "none"}
    with serve_app_in_thread(app, config=HostConfig, **options) as server:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        for _ in range(3):  # kept open while requests come sooner than the timeout
            writer.write(b"POST /now HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1\r\n\r\nx")
            assert (await reader.readuntil(b"ok")).startswith(b"HTTP/1.1 200 ")
            await asyncio.sleep(0.6)
        idle = time.monotonic()
        with anyio.fail_after(10):
            rest = await reader.read()
        writer.close()
    assert rest == b""
    assert 0.4 <= time.monotonic() - idle < 5  # 1 s after the last answer, 0.6 s of it slept above
