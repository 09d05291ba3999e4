"""A reload run in a thread of its own while the requests that found the workflow changed wait
for it, each at most until :data:`RELOAD_WAIT_SECONDS` after it started: an edit is served at once,
and a slow reload (``op read``) does not hold requests up meanwhile."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import anyio

__all__ = ["RELOAD_WAIT_SECONDS", "BackgroundReload"]

logger = logging.getLogger("lorenz.host")

#: How long after a reload started requests wait for it before the last good snapshot is served.
RELOAD_WAIT_SECONDS = 1.0
#: How often a waiting request looks whether the reload finished.
_POLL_SECONDS = 0.005


class BackgroundReload:
    """At most one run of ``reload`` at a time, however many requests ask for one meanwhile."""

    def __init__(self, reload: Callable[[], object], what: Callable[[], object]) -> None:
        self._reload = reload
        #: What is reloaded, for the log of a defect.
        self._what = what
        #: While a reload runs: the event its thread sets when done, and until when requests wait
        #: for it (``time.monotonic()``).
        self._running: tuple[threading.Event, float] | None = None
        self._lock = threading.Lock()

    async def run(self) -> bool:
        """Start a reload unless one runs, and wait for it within its bound; whether it finished."""
        with self._lock:
            if self._running is None:
                finished = threading.Event()
                self._running = (finished, time.monotonic() + RELOAD_WAIT_SECONDS)
                # A thread of its own, not a worker from the pool: it must run and clear `_running`
                # even when the request that started it is cancelled first.
                threading.Thread(target=self._in_thread, args=(finished,), name="lorenz-reload", daemon=True).start()
            finished, deadline = self._running
        with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
            # Polled: the thread cannot set an event of this (or any other) event loop directly,
            # and the wait is short and only happens while a reload runs.
            while not finished.is_set():  # noqa: ASYNC110
                await anyio.sleep(_POLL_SECONDS)
        return finished.is_set()

    def _in_thread(self, finished: threading.Event) -> None:
        try:
            self._reload()
        except Exception:  # the reload reports load errors itself; this is a defect, never fatal
            logger.exception("lorenz: reloading %s failed", self._what())
        finally:
            with self._lock:
                self._running = None
            finished.set()
