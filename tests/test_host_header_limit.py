"""The 16 KiB request-head limit on real loopback sockets: it holds for a head sent at once, in
pieces and pipelined behind another request, and is answered 431 before the connection closes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import anyio
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from lorenz.host import RunningServer
from lorenz.host.http.heads import MAX_HEAD_BYTES
from lorenz.host.http.loopback import serve_app_in_thread
from lorenz.host.http.protocol import HostConfig

pytestmark = pytest.mark.anyio


async def echo(request: Request) -> PlainTextResponse:
    return PlainTextResponse("ok:" + str(len(await request.body())))


@pytest.fixture(scope="module")
def server() -> Iterator[RunningServer]:
    app = Starlette(routes=[Route("/{path}", echo, methods=["POST"])])
    with serve_app_in_thread(app, config=HostConfig, read_timeout=lambda: 30.0, ws="none") as running:
        yield running


def head(size: int, *, body: bytes = b"x") -> bytes:
    """A request whose head (request line to blank line) is exactly ``size`` bytes."""
    start = b"POST /now HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\nX-Pad: " % len(body)
    pad = size - len(start) - len(b"\r\n\r\n")
    return start + b"p" * pad + b"\r\n\r\n" + body


async def exchange(port: int, *pieces: bytes, until: bytes | None = None) -> bytes:
    """Send ``pieces`` one write each, then read until ``until`` comes or the server closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        for piece in pieces:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0)
        with anyio.fail_after(10):
            return await (reader.readuntil(until) if until else reader.read())
    finally:
        writer.close()


@pytest.mark.parametrize("size", [MAX_HEAD_BYTES + 1, 24 * 1024, 93 * 1024])
async def test_a_head_past_the_limit_sent_at_once_is_refused_431(server: RunningServer, size: int) -> None:
    reply = await exchange(server.port, head(size))
    assert reply.startswith(b"HTTP/1.1 431 ")
    assert b"connection: close" in reply
    assert b"ok:" not in reply


async def test_a_head_at_the_limit_is_served(server: RunningServer) -> None:
    reply = await exchange(server.port, head(MAX_HEAD_BYTES), until=b"ok:1")
    assert reply.startswith(b"HTTP/1.1 200 ")


async def test_a_head_past_the_limit_in_pieces_is_refused_431(server: RunningServer) -> None:
    whole = head(MAX_HEAD_BYTES + 1)
    pieces = [whole[i : i + 1000] for i in range(0, len(whole), 1000)]
    reply = await exchange(server.port, *pieces)
    assert reply.startswith(b"HTTP/1.1 431 ")


async def test_a_blank_line_split_across_pieces_ends_the_head(server: RunningServer) -> None:
    whole = head(MAX_HEAD_BYTES)
    cut = len(whole) - len(b"\n\r\nx")  # between the CR and the LF of the last header line's end
    reply = await exchange(server.port, whole[:cut], whole[cut:], until=b"ok:1")
    assert reply.startswith(b"HTTP/1.1 200 ")


async def test_a_pipelined_head_past_the_limit_is_refused_after_the_first_answer(server: RunningServer) -> None:
    reply = await exchange(server.port, head(200) + head(40 * 1024))
    first, _, rest = reply.partition(b"ok:1")
    assert first.startswith(b"HTTP/1.1 200 ")
    assert rest.startswith(b"HTTP/1.1 431 ")


async def test_keep_alive_requests_each_get_the_whole_limit(server: RunningServer) -> None:
    """The count starts again for every request on a connection."""
    reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        for _ in range(3):
            writer.write(head(MAX_HEAD_BYTES))
            with anyio.fail_after(10):
                assert (await reader.readuntil(b"ok:1")).startswith(b"HTTP/1.1 200 ")
    finally:
        writer.close()
