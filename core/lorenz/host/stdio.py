"""``lorenz serve --stdio``: the same MCP server over stdin/stdout.

The SDK's ``stdio_server()`` points fd 1 at stderr while it serves, so a stray ``print`` in a
pack cannot corrupt the protocol stream; logs go to stderr. fd 0 likewise points at the null
device while the protocol is read from a private copy, each line checked first: one that is not
a well-formed JSON-RPC message gets its error here (:mod:`lorenz.host.jsonrpc`), where the SDK
would drop it without a word (or take a request whose id is ``1.5`` for a notification).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any, TextIO

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter

from .app import RELOAD_POLL_SECONDS
from .jsonrpc import rejection
from .mcp_server import HostState, build_server
from .reload import LiveWorkspace

__all__ = ["run_stdio"]


@contextlib.contextmanager
def _protocol_input() -> Iterator[TextIO]:
    """stdin on a private duplicate of fd 0, fd 0 itself pointing at the null device until the
    block exits, so neither a pack nor a process it starts can read the protocol stream."""
    try:
        private = os.dup(0)
    except OSError:  # no fd 0 to claim: read what there is in place
        yield sys.stdin
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        # closefd=False: a worker thread may still be blocked reading it after serving ends.
        yield open(private, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    finally:
        os.dup2(private, 0)


class CheckedLines(anyio.AsyncFile[str]):
    """Protocol input lines, each that is not one well-formed JSON-RPC message answered with its
    error on ``replies`` (set once the transport is up) instead of reaching the SDK."""

    def __init__(self, file: TextIO) -> None:
        super().__init__(file)
        self.replies: Any = None
        self.ready = anyio.Event()

    async def __aiter__(self) -> AsyncIterator[str]:
        while line := await self.readline():
            error = rejection(line.encode("utf-8")) if line.strip() else None
            if error is None:
                yield line
                continue
            await self.ready.wait()
            await self.replies.send(SessionMessage(jsonrpc_message_adapter.validate_python(error)))


async def serve_stdio(live: LiveWorkspace) -> None:
    """Serve one client on stdin/stdout until it closes stdin; reloads are pushed to it."""
    state = HostState(live, list_changed=live.reloads, listen=live.reloads)
    server = build_server(state)
    server.middleware = []

    async def watch() -> None:
        while True:
            await anyio.sleep(RELOAD_POLL_SECONDS)
            await live.current_async()  # a reload runs in a thread of its own
            await state.notify_if_changed()

    async def stop_on_signal(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                scope.cancel()
                return

    try:
        with _protocol_input() as file:
            stdin = CheckedLines(file)
            async with stdio_server(stdin=stdin) as (read_stream, write_stream), anyio.create_task_group() as tg:
                stdin.replies = write_stream
                stdin.ready.set()
                if live.reloads:
                    tg.start_soon(watch)
                if threading.current_thread() is threading.main_thread():
                    tg.start_soon(stop_on_signal, tg.cancel_scope)
                await server.run(read_stream, write_stream, server.create_initialization_options())
                tg.cancel_scope.cancel()
    finally:
        await state.aclose()


def run_stdio(live: LiveWorkspace) -> int:
    """Serve until stdin closes or SIGINT/SIGTERM arrives; exit code 0 either way."""
    anyio.run(serve_stdio, live)
    return 0
