"""Where an upstream's connection runs: the loop the host serves on (:class:`HostLoop`, when
``lorenz.serving_loop()`` names one while the pack mounts), or else an event loop of its own run
forever in a daemon thread (:class:`LoopThread`: ``lorenz call``, an app another server's loop runs).

Work from the home loop itself runs inline; from any other loop it crosses over
(:meth:`across`), and cancelling the caller cancels that work there. What a thread imports is
imported first by the thread starting it; stopping a thread waits a bounded time for it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import importlib
import threading
from collections.abc import Coroutine
from typing import Any

__all__ = ["HostLoop", "LoopThread", "home_for", "start", "wait_ended"]

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


def start(work: Coroutine[Any, Any, Any], loop: asyncio.AbstractEventLoop) -> Any:
    """``work`` as a task of ``loop`` (from any thread), in a context of its own: not the mount's
    or the call's that happened to start it (a tool call's tracing, its pack's threads)."""
    return contextvars.Context().run(asyncio.run_coroutine_threadsafe, work, loop)


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The loop running in this thread, if any."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class HostLoop:
    """The host's serving loop, shared: the host starts and stops it."""

    owned = False

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    async def across(self, work: Coroutine[Any, Any, Any]) -> Any:
        """Run ``work`` on the home loop: inline from it, else crossing over (see the module docstring)."""
        if running_loop() is self.loop:
            return await work
        return await _cross(work, self.loop)

    def stop(self, timeout: float) -> None:
        """Nothing to stop: the loop is the host's."""


class LoopThread:
    """A new event loop, running in a daemon thread named ``name``."""

    owned = True

    def __init__(self, name: str) -> None:
        for module in _THREAD_IMPORTS:
            importlib.import_module(module)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    async def across(self, work: Coroutine[Any, Any, Any]) -> Any:
        """Run ``work`` on the upstream's loop; cancelling the caller cancels it there (and the SDK
        tells the upstream, ``notifications/cancelled``)."""
        return await _cross(work, self.loop)

    def stop(self, timeout: float) -> None:
        """Stop the loop and wait up to ``timeout`` seconds for its thread to end."""
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)


def home_for(host: asyncio.AbstractEventLoop | None, name: str) -> HostLoop | LoopThread:
    """The host's loop (``lorenz.serving_loop()``) when it names an open one, else a thread ``name``."""
    return HostLoop(host) if host is not None and not host.is_closed() else LoopThread(name)


def wait_ended(home: HostLoop | LoopThread, work: concurrent.futures.Future[Any], timeout: float) -> None:
    """Wait up to ``timeout`` seconds for ``work`` (a task on ``home``'s loop) to end, then stop
    ``home``. Not on the home loop itself (the work then ends while the loop runs on); a host loop
    no longer (or not yet) serving is run until then."""
    loop, running = home.loop, running_loop()
    with contextlib.suppress(concurrent.futures.TimeoutError, concurrent.futures.CancelledError, Exception):
        if home.owned or (loop.is_running() and running is not loop):
            work.result(timeout)
        elif running is None:
            loop.run_until_complete(asyncio.wait_for(asyncio.wrap_future(work, loop=loop), timeout))
    home.stop(timeout)


async def _cross(work: Coroutine[Any, Any, Any], loop: asyncio.AbstractEventLoop) -> Any:
    future = asyncio.run_coroutine_threadsafe(work, loop)
    try:
        return await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        future.cancel()
        raise
