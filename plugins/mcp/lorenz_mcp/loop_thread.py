"""An upstream's own event loop, run forever in a daemon thread (:class:`LoopThread`).

What the thread imports is imported first by the thread starting it; work from any other loop runs
on it (:meth:`LoopThread.across`), and cancelling the caller cancels that work there; stopping it
waits a bounded time for the thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
from collections.abc import Coroutine
from typing import Any

__all__ = ["LoopThread"]

#: What the upstream's thread imports, imported by the thread starting it first: two threads
#: importing one package at once (the SDK's client pulls in its server) can deadlock on its locks.
_THREAD_IMPORTS = (
    "anyio",
    "httpx2",
    "mcp",
    "mcp.client.streamable_http",
    "mcp.shared.exceptions",
    "mcp_types",
    "lorenz_mcp.retry",
    "lorenz_mcp.stdio",
)


class LoopThread:
    """A new event loop, running in a daemon thread named ``name``."""

    def __init__(self, name: str) -> None:
        for module in _THREAD_IMPORTS:
            importlib.import_module(module)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    async def across(self, work: Coroutine[Any, Any, Any]) -> Any:
        """Run ``work`` on the upstream's loop; cancelling the caller cancels it there (and the SDK
        tells the upstream, ``notifications/cancelled``)."""
        future = asyncio.run_coroutine_threadsafe(work, self.loop)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    def stop(self, timeout: float) -> None:
        """Stop the loop and wait up to ``timeout`` seconds for its thread to end."""
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
