"""The stdio transport with its input checked: each line that is not one well-formed JSON-RPC
message, or that holds a lone surrogate escape, gets its error (:mod:`lorenz.host.http.jsonrpc`).

When the input ends, what was asked before is answered first (within :data:`EOF_GRACE_SECONDS`).
The protocol is read from a private duplicate of fd 0 while fd 0 points at the null device, so no
pack (nor a process it starts) can read the protocol stream.
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

from lorenz.host.http.jsonrpc import parse_message

__all__ = ["EOF_GRACE_SECONDS", "Answers", "CheckedLines", "checked_stdio_server"]


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
        self.answers = Answers()

    async def __aiter__(self) -> AsyncIterator[str]:
        while line := await self.readline():
            message, error = (
                parse_message(line.encode("utf-8"), refuse_lone_surrogates=True) if line.strip() else (None, None)
            )
            if error is None:
                self.answers.asked(message)
                yield line
                continue
            await self.ready.wait()
            await self.replies.send(SessionMessage(jsonrpc_message_adapter.validate_python(error)))
        # The end of the input: answer what was asked before it (the SDK cancels what is still
        # running once its input ends), within a grace period.
        await self.answers.settled(EOF_GRACE_SECONDS)


#: How long the server goes on answering requests after its input ended.
EOF_GRACE_SECONDS = 10.0


def _key(id: Any) -> tuple[str, Any]:
    return (type(id).__name__, id)


class Answers:
    """The requests read and not yet answered."""

    def __init__(self) -> None:
        self.pending: set[tuple[str, Any]] = set()
        self._changed = anyio.Event()

    def asked(self, message: Any) -> None:
        if isinstance(message, dict) and "id" in message and "method" in message:
            self.pending.add(_key(message["id"]))

    def answered(self, message: Any) -> None:
        id = getattr(getattr(message, "message", None), "id", None)
        if id is not None and _key(id) in self.pending:
            self.pending.discard(_key(id))
            self._changed.set()
            self._changed = anyio.Event()

    async def settled(self, grace: float) -> None:
        with anyio.move_on_after(grace):
            while self.pending:
                await self._changed.wait()


class _Watched:
    """A write stream that tells :class:`Answers` what it carries."""

    def __init__(self, stream: Any, answers: Answers) -> None:
        self._stream = stream
        self._answers = answers

    async def send(self, message: Any) -> None:
        await self._stream.send(message)
        self._answers.answered(message)

    async def __aenter__(self) -> _Watched:
        await self._stream.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._stream.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.asynccontextmanager
async def checked_stdio_server() -> AsyncIterator[tuple[Any, Any]]:
    """``mcp.server.stdio.stdio_server()`` reading :class:`CheckedLines`: the same
    ``(read_stream, write_stream)``."""
    with _protocol_input() as file:
        stdin = CheckedLines(file)
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            stdin.replies = write_stream
            stdin.ready.set()
            yield read_stream, _Watched(write_stream, stdin.answers)
