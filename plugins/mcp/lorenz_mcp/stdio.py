"""A stdio upstream's transport: the SDK's stdio client's, with each line the server writes bounded,
and no task between the session and the pipes.

The SDK's client reads a whole line before it parses it, however long; this one reads through
:class:`~lorenz_mcp.limits.Lines`, which keeps at most the cap of one message in memory. The
session's reader reads the server's stdout itself, and each message the session sends is written
to its stdin by the sender: no memory stream and no task hop between them, two fewer turns of the
event loop a call (it may be the host's). The child runs in a session (and process group) of its
own with only the SDK's basic environment variables and ``env``; stopping it closes its stdin,
drains its stdout (so a server blocked writing can exit), then signals its process group
(SIGTERM, SIGKILL).
"""

from __future__ import annotations

import collections
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import IO, Any

import anyio
import anyio.abc
import anyio.lowlevel
from mcp.client.stdio import get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

from .limits import Lines

__all__ = ["bounded_stdio"]

#: How long a server whose stdin closed may take to exit before its process group is signalled.
_EXIT_GRACE = 2.0
_GONE = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError)


class _Input:
    """The session's read stream: the server's stdout, cut into messages as the session reads."""

    def __init__(self, stdout: anyio.abc.ByteReceiveStream, lines: Lines) -> None:
        self._stdout = stdout
        self._lines = lines
        self._ready: collections.deque[Any] = collections.deque()
        self._closed = False

    async def receive(self) -> Any:
        if self._ready:
            # A turn of the loop between two messages of one read, as a memory stream gives: what the
            # session spawns for a notification (a log line's relay) runs before what followed it.
            await anyio.lowlevel.checkpoint()
        while not self._ready:
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                chunk = await self._stdout.receive()
            except _GONE:
                raise anyio.EndOfStream from None
            self._ready.extend(self._lines.feed(chunk))
        return self._ready.popleft()

    def __aiter__(self) -> _Input:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        self._closed = True

    async def __aenter__(self) -> _Input:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Output:
    """The session's write stream: each message written to the server's stdin by its sender."""

    def __init__(self, stdin: anyio.abc.ByteSendStream) -> None:
        self._stdin = stdin

    async def send(self, message: SessionMessage) -> None:
        data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
        try:
            await self._stdin.send(data.encode("utf-8"))
        except _GONE:  # the session answers the request "connection closed", not a hanging one
            raise anyio.BrokenResourceError from None

    async def aclose(self) -> None:
        """The stdin is closed when the server is stopped (:func:`bounded_stdio`)."""

    async def __aenter__(self) -> _Output:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@contextlib.asynccontextmanager
async def bounded_stdio(
    command: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    errlog: IO[str],
    limit: int,
    label: Callable[[], str],
) -> AsyncIterator[Any]:
    """Start ``command`` and yield the SDK's transport streams to it (``limit``: bytes a line)."""
    process = await anyio.open_process(
        list(command), env=get_default_environment() | dict(env), stderr=errlog, cwd=cwd, start_new_session=True
    )
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout = process.stdin, process.stdout

    async def drain() -> None:  # the session is gone: what the server still writes is dropped
        with contextlib.suppress(*_GONE):
            async for _ in stdout:
                pass

    try:
        yield _Input(stdout, Lines(limit, label)), _Output(stdin)
    finally:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(*_GONE):
                await stdin.aclose()
            async with anyio.create_task_group() as group:
                group.start_soon(drain)
                with anyio.move_on_after(_EXIT_GRACE):
                    await process.wait()
                if process.returncode is None:
                    await terminate_posix_process_tree(process, _EXIT_GRACE)
                group.cancel_scope.cancel()
