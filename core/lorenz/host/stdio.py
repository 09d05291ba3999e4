"""``lorenz serve --stdio``: the same MCP server over stdin/stdout.

The SDK's ``stdio_server()`` points fd 1 at stderr while it serves, so a stray ``print`` in a
pack cannot corrupt the protocol stream; logs go to stderr. Input lines that are not one JSON-RPC
message get their error (:mod:`lorenz.host.mcp.checked_input`).
"""

from __future__ import annotations

import asyncio
import gc
import signal
import threading

import anyio

from lorenz.host.app import RELOAD_POLL_SECONDS
from lorenz.host.grants import FULL
from lorenz.host.mcp.checked_input import checked_stdio_server
from lorenz.host.mcp.server import build_server
from lorenz.host.mcp.state import HostState
from lorenz.host.ops.watchdog import LoopWatchdog, exit_if_stuck, exit_past_stuck_threads, size_thread_pools
from lorenz.host.reload.live import LiveWorkspace
from lorenz.host.tracing import configure_server
from lorenz.plugins.containment import note_host_signal

__all__ = ["run_stdio"]


async def serve_stdio(live: LiveWorkspace) -> None:
    """Serve one client on stdin/stdout until it closes stdin; reloads, and packs whose tools
    changed, are pushed to it."""
    # The client started this process: it may use every tool, as the operator who configured it.
    state = HostState(live, list_changed=True, listen=True, local_grant=FULL)
    server = build_server(state)
    configure_server(server, live.env)
    gc.freeze()  # as settle_startup_heap, without a collection before the first answer

    async def watch() -> None:
        while True:
            await anyio.sleep(RELOAD_POLL_SECONDS)
            await live.current_async()  # a reload runs in a thread of its own
            await state.notify_if_changed()

    async def stop_on_signal(scope: anyio.CancelScope) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                note_host_signal(signum)
                scope.cancel()
                return

    loop = asyncio.get_running_loop()
    size_thread_pools(loop)
    watchdog = LoopWatchdog(loop)
    watchdog.start()
    try:
        await state.lifespan.start()  # plugins' lorenz_startup, bounded: a failing one is logged
        async with checked_stdio_server() as (read_stream, write_stream), anyio.create_task_group() as tg:
            tg.start_soon(watch)
            if threading.current_thread() is threading.main_thread():
                tg.start_soon(stop_on_signal, tg.cancel_scope)
            await server.run(read_stream, write_stream, server.create_initialization_options())
            tg.cancel_scope.cancel()
    finally:
        watchdog.stop()
        exit_if_stuck(state.runner)
        await state.aclose()


def run_stdio(live: LiveWorkspace) -> int:
    """Serve until stdin closes or SIGINT/SIGTERM arrives; exit code 0 either way."""
    live.run_host(serve_stdio(live))  # on the loop the isolated packs live on
    return exit_past_stuck_threads(0)
