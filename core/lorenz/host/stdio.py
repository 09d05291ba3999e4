"""``lorenz serve --stdio``: the same MCP server over stdin/stdout.

The SDK's ``stdio_server()`` points fd 1 at stderr while it serves, so a stray ``print`` in a
pack cannot corrupt the protocol stream; logs go to stderr.
"""

from __future__ import annotations

import anyio
from mcp.server.stdio import stdio_server

from .app import RELOAD_POLL_SECONDS
from .mcp_server import HostState, build_server
from .reload import LiveWorkspace

__all__ = ["run_stdio"]


async def serve_stdio(live: LiveWorkspace) -> None:
    """Serve one client on stdin/stdout until it closes stdin; reloads are pushed to it."""
    state = HostState(live, list_changed=live.reloads)
    server = build_server(state)
    server.middleware = []

    async def watch() -> None:
        while True:
            await anyio.sleep(RELOAD_POLL_SECONDS)
            await anyio.to_thread.run_sync(live.check)
            await state.notify_if_changed()

    try:
        async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as tg:
            if live.reloads:
                tg.start_soon(watch)
            await server.run(read_stream, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()
    finally:
        await state.aclose()


def run_stdio(live: LiveWorkspace) -> int:
    anyio.run(serve_stdio, live)
    return 0
