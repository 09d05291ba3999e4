"""The stdio transport with its input checked: each line that is not one well-formed JSON-RPC
message, or that holds a lone surrogate escape, gets its error (:mod:`lorenz.host.http.jsonrpc`).

When the input ends, what was asked before is answered first (within :data:`EOF_GRACE_SECONDS`).
The protocol is read from a private duplicate of fd 0 while fd 0 points at the null device, so no
pack (nor a process it starts) can read the protocol stream.

A pipe, socket or terminal is read and written by the event loop itself: the SDK's transport reads
each line and writes each message in worker threads (three thread hops a call, each a handover of
the GIL, which other threads such as an upstream's loop then wait for). A regular file, or an
output shared with stderr (whose writes must not become non-blocking), keeps the SDK's way.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import stat
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
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


class CheckedLines:
    """Protocol input lines (``readline`` returns ``""`` at the end); each that is not one
    well-formed JSON-RPC message is answered with its error on ``replies`` (set once the transport
    is up) instead of reaching the SDK."""

    def __init__(self, readline: Callable[[], Awaitable[str]]) -> None:
        self.readline = readline
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
    with _protocol_input() as file, _protocol_output() as out_fd:
        async with _loop_reader(file) as readline, _loop_writer(out_fd) as stdout:
            stdin = CheckedLines(readline or anyio.wrap_file(file).readline)
            # No stdout given: the SDK claims fd 1 itself (stray prints go to stderr) and writes in threads.
            async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
                stdin.replies = write_stream
                stdin.ready.set()
                yield read_stream, _Watched(write_stream, stdin.answers)


#: What the loop reads ahead of the server at most, about twice this: a client that writes faster
#: than it is answered waits in its pipe, as it did for the SDK's transport (a line itself is read
#: whole, however long, as there).
_READ_AHEAD = 64 * 1024


def _loop_capable(fd: int) -> bool:
    """Whether the event loop can watch ``fd``: a pipe, a socket or a terminal (not a regular file)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@contextlib.asynccontextmanager
async def _loop_reader(file: TextIO) -> AsyncIterator[Callable[[], Awaitable[str]] | None]:
    """``readline`` of ``file``'s descriptor read by the event loop, or ``None`` when it cannot be."""
    try:
        fd = file.fileno()
    except (OSError, ValueError):
        fd = -1
    if fd < 0 or not _loop_capable(fd):
        yield None
        return
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_READ_AHEAD, loop=loop)
    pipe = os.fdopen(fd, "rb", buffering=0, closefd=False)
    blocking = os.get_blocking(fd)
    try:
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe)
    except (OSError, ValueError):
        yield None
        return

    async def readline() -> str:
        parts: list[bytes] = []
        while True:
            try:
                parts.append(await reader.readuntil(b"\n"))
            except asyncio.IncompleteReadError as end:  # the input ended (mid-line, or not)
                parts.append(end.partial)
            except asyncio.LimitOverrunError as long:  # a line longer than the read-ahead: take what is there
                parts.append(await reader.readexactly(long.consumed))
                continue
            break
        # As the text file it replaces read it (universal newlines): a CRLF ends a line as LF does.
        return b"".join(parts).decode("utf-8", errors="replace").replace("\r\n", "\n")

    try:
        yield readline
    finally:
        transport.close()
        with contextlib.suppress(OSError):
            os.set_blocking(fd, blocking)  # the description is shared with whoever gave us stdin


@contextlib.contextmanager
def _protocol_output() -> Iterator[int | None]:
    """A private duplicate of fd 1 with fd 1 pointing at stderr until the block exits (as the
    SDK's own claim does), when the loop can write it and stderr is not the same file; else
    ``None`` and fd 1 left for the SDK to claim."""
    if not _loop_capable(1) or _same_file(1, 2):
        yield None
        return
    try:
        private = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    except OSError:
        yield None
        return
    try:
        os.dup2(2, 1)
    except OSError:
        os.close(private)
        yield None
        return
    try:
        yield private
    finally:
        with contextlib.suppress(OSError):
            os.dup2(private, 1)
        os.close(private)


def _same_file(a: int, b: int) -> bool:
    try:
        first, second = os.fstat(a), os.fstat(b)
    except OSError:
        return True
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


class _LoopOutput:
    """The SDK transport's ``stdout``: each message handed to the loop's pipe transport, and
    ``flush`` waiting only while the reader is behind (the transport's flow control)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@contextlib.asynccontextmanager
async def _loop_writer(fd: int | None) -> AsyncIterator[_LoopOutput | None]:
    """The loop's writer of ``fd`` (from :func:`_protocol_output`), ``None`` without one."""
    if fd is None:
        yield None
        return
    loop = asyncio.get_running_loop()
    blocking = os.get_blocking(fd)
    pipe = os.fdopen(fd, "wb", buffering=0, closefd=False)
    transport, protocol = await loop.connect_write_pipe(lambda: asyncio.streams.FlowControlMixin(loop=loop), pipe)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    try:
        yield _LoopOutput(writer)
    finally:
        with contextlib.suppress(Exception):  # what the client never read is not ours to wait for
            await asyncio.wait_for(writer.drain(), 1.0)
        transport.close()
        with contextlib.suppress(OSError):
            os.set_blocking(fd, blocking)
