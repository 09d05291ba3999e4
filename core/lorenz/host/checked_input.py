"""The stdio transport with its input checked: each line that is not one well-formed JSON-RPC
message, or that holds a lone surrogate escape, gets its error (:mod:`lorenz.host.jsonrpc`), where
the SDK's ``stdio_server()`` would drop it without a word (or take a request whose id is ``1.5``
for a notification).

The protocol is read from a private duplicate of fd 0 while fd 0 itself points at the null device
(as the SDK does for the stdin it reads itself), so neither a pack nor a process it starts can
read the protocol stream; the SDK still claims fd 1.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any, TextIO

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter

from .jsonrpc import rejection

__all__ = ["CheckedLines", "checked_stdio_server"]


@contextlib.contextmanager
def _protocol_input() -> Iterator[TextIO]:
    """stdin on a private duplicate of fd 0, fd 0 pointing at the null device until the block exits."""
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
    """Protocol input lines; each that is not one well-formed JSON-RPC message is answered with
    its error on ``replies`` (set once the transport is up) instead of reaching the SDK."""

    def __init__(self, file: TextIO) -> None:
        super().__init__(file)
        self.replies: Any = None
        self.ready = anyio.Event()

    async def __aiter__(self) -> AsyncIterator[str]:
        while line := await self.readline():
            error = rejection(line.encode("utf-8"), refuse_lone_surrogates=True) if line.strip() else None
            if error is None:
                yield line
                continue
            await self.ready.wait()
            await self.replies.send(SessionMessage(jsonrpc_message_adapter.validate_python(error)))


@contextlib.asynccontextmanager
async def checked_stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    """``mcp.server.stdio.stdio_server()`` reading :class:`CheckedLines`: the same
    ``(read_stream, write_stream)``."""
    with _protocol_input() as file:
        stdin = CheckedLines(file)
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            stdin.replies = write_stream
            stdin.ready.set()
            yield read_stream, write_stream
