"""The event-loop watchdog: names the pack whose code blocks the loop.

A thread pings the loop; when a ping goes unanswered within :data:`BLOCKED_AFTER_SECONDS`, it reads
the loop thread's stack, finds the tool call running there (the :func:`lorenz.toolcall.execution._guarded`
frame) and logs a warning naming the pack and the tool. Also here: the loop's thread pools, set up
so that a pack's threads run on its own tokens (:mod:`lorenz.toolcall.pack_threads`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import threading
import time
import traceback
from types import FrameType

import anyio.to_thread

from lorenz.toolcall.execution import ToolRunner, _guarded
from lorenz.toolcall.pack_threads import HostExecutor, route_anyio_threads

__all__ = ["BLOCKED_AFTER_SECONDS", "LoopWatchdog", "exit_if_stuck", "exit_past_stuck_threads", "size_thread_pools"]

logger = logging.getLogger("lorenz.host")

#: A loop that does not answer a ping within this long is reported as blocked.
BLOCKED_AFTER_SECONDS = 0.25
_PROBE_EVERY_SECONDS = 0.1
#: Threads for the host's own work (DNS lookups, reading files) outside any pack's call: far
#: more than the 40 (anyio) and ``cpu + 4`` (asyncio) defaults.
SHARED_THREADS = 200


def size_thread_pools(loop: asyncio.AbstractEventLoop) -> None:
    """Give the host's own work a pool of :data:`SHARED_THREADS`, and send a pack's threads
    (``asyncio.to_thread``, ``run_in_executor(None, …)``, ``anyio.to_thread``) to its own tokens."""
    limiter = anyio.to_thread.current_default_thread_limiter()
    limiter.total_tokens = max(limiter.total_tokens, SHARED_THREADS)
    loop.set_default_executor(HostExecutor(max_workers=SHARED_THREADS, thread_name_prefix="lorenz-io"))
    route_anyio_threads()


def exit_if_stuck(runner: ToolRunner, *, grace_seconds: float = 2.0) -> None:
    """At shutdown: a tool call stuck in a thread would hold the process forever (Python cannot
    stop a thread), so unless it returns within ``grace_seconds`` the process exits without it."""
    stuck = runner.abandoned()
    if not stuck:
        return
    logger.warning(
        "lorenz: %d tool calls are still stuck (%s); exiting in %g s without them",
        len(stuck),
        ", ".join(sorted(set(stuck))),
        grace_seconds,
    )

    def leave() -> None:
        time.sleep(grace_seconds)
        if runner.abandoned():
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os._exit(0)

    threading.Thread(target=leave, name="lorenz-exit-stuck", daemon=True).start()


#: How long ``lorenz serve`` waits at exit for threads to end before it leaves them behind.
STOP_GRACE_SECONDS = 2.0


def exit_past_stuck_threads(code: int) -> int:
    """``code``, once the server has stopped; but when threads that tool calls started are still
    running (a pack's thread blocked for good), they would keep the interpreter from exiting, so
    say so and exit. Idle worker threads finishing their shutdown get a moment first."""
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join(max(0.0, deadline - time.monotonic()))
    stuck = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if not stuck:
        return code
    names = ", ".join(sorted({thread.name for thread in stuck}))
    print(
        f"lorenz: {len(stuck)} threads of tool calls are still running ({names}); exiting without them", file=sys.stderr
    )
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _blocking_call(frame: FrameType | None) -> tuple[str, str, str] | None:
    """``(pack, tool, where)`` of the tool call on this stack, ``where`` being the innermost line."""
    where = ""
    if frame is not None:
        summary = traceback.extract_stack(frame, limit=1)
        if summary:
            where = f"{summary[-1].filename}:{summary[-1].lineno} in {summary[-1].name}"
    while frame is not None:
        if frame.f_code is _guarded.__code__:
            call = frame.f_locals.get("call")
            return str(getattr(call, "pack", "?")), str(getattr(call, "tool", "?")), where
        frame = frame.f_back
    return None


class LoopWatchdog:
    """Watches one event loop from a daemon thread; :meth:`start` on the loop, :meth:`stop` to end."""

    def __init__(self, loop: asyncio.AbstractEventLoop, *, blocked_after: float = BLOCKED_AFTER_SECONDS) -> None:
        self._loop = loop
        self._blocked_after = blocked_after
        self._loop_thread = threading.get_ident()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="lorenz-loop-watchdog", daemon=True)
        #: Blocks seen so far (for tests and /healthz).
        self.blocks = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()

    def _watch(self) -> None:
        while not self._stopped.wait(_PROBE_EVERY_SECONDS):
            answered = threading.Event()
            started = time.monotonic()
            try:
                self._loop.call_soon_threadsafe(answered.set)
            except RuntimeError:  # the loop closed
                return
            if answered.wait(self._blocked_after) or self._stopped.is_set():
                continue
            self.blocks += 1
            culprit = _blocking_call(sys._current_frames().get(self._loop_thread))
            if culprit is None:
                logger.warning("lorenz: the event loop is blocked (not by a tool call)")
            else:
                pack, tool, where = culprit
                logger.warning(
                    "lorenz: pack %s blocks the event loop in tool %s (%s): every request waits; "
                    "use `await` or lorenz.run_in_thread for blocking work",
                    pack,
                    tool,
                    where,
                )
            while not answered.wait(1.0):
                if self._stopped.is_set():
                    return
            logger.warning("lorenz: the event loop was blocked for %.2f s", time.monotonic() - started)
