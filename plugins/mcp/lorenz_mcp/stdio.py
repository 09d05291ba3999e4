"""A stdio upstream's transport: the SDK's stdio client's, with each line the server writes bounded.

The SDK's client reads a whole line before it parses it, however long; this one reads through
:class:`~lorenz_mcp.limits.Lines`, which keeps at most the cap of one message in memory. The child
runs in a session (and process group) of its own with only the SDK's basic environment variables
and ``env``; stopping it closes its stdin, then signals its process group (SIGTERM, SIGKILL).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import IO, Any

import anyio
from mcp.client.stdio import get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

from .limits import Lines

__all__ = ["bounded_stdio"]

#: How long a server whose stdin closed may take to exit before its process group is signalled.
_EXIT_GRACE = 2.0
_GONE = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError)


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
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def read() -> None:
        assert process.stdout is not None
        lines, delivering = Lines(limit, label), True
        async with read_writer:
            with contextlib.suppress(*_GONE):
                async for chunk in process.stdout:
                    for message in lines.feed(chunk):
                        if not delivering:  # the session is gone: drain, so the server can exit
                            break
                        try:
                            await read_writer.send(message)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            delivering = False

    async def write() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode("utf-8"))
        except _GONE:
            await read_writer.aclose()  # the session sees the connection end, not a hanging request

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(write)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                read_stream.close()
                write_stream.close()
                assert process.stdin is not None
                with contextlib.suppress(*_GONE):
                    await process.stdin.aclose()
                with anyio.move_on_after(_EXIT_GRACE):
                    await process.wait()
                if process.returncode is None:
                    await terminate_posix_process_tree(process, _EXIT_GRACE)
            group.cancel_scope.cancel()
