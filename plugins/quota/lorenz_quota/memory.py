"""The counters of one call's limits, and the in-process backend that keeps them.

A call passes when every check it is subject to passes, and only then is anything counted: a
token bucket (``rate`` per second refilling up to ``burst``), a fixed window aligned to the clock
(``quota`` calls per ``window`` seconds: a day starts at 00:00 UTC), a concurrency cap (slots
held until the call ends, or until a lease runs out if the worker died). The memory backend
counts per worker process; :mod:`.redis_backend` runs the same rules atomically in Redis.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Literal

from attrs import frozen

__all__ = ["Check", "Decision", "MemoryBackend"]


@frozen
class Check:
    """One counter a call must pass: ``bucket`` (a=rate, b=burst), ``window`` (a=quota,
    b=seconds), ``concurrency`` (a=cap, b=lease seconds)."""

    key: str
    kind: Literal["bucket", "window", "concurrency"]
    a: float
    b: float


@frozen
class Decision:
    """Whether the call may run; when not, which check refused it and in how many seconds it may."""

    allowed: bool
    retry_after: float = 0.0
    failed: int = -1


#: When a full concurrency cap may free a slot is unknown: the agent is told to wait this long.
CONCURRENCY_RETRY_SECONDS = 1.0
#: Every this many decisions, counters that hold nothing an absent one would not are dropped, so
#: memory follows the callers and tools active lately, not every one ever seen.
SWEEP_EVERY = 10_000


class MemoryBackend:
    """Counters in this process (each worker of ``--workers N`` has its own)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._buckets: dict[str, tuple[float, float, float]] = {}  # key -> (tokens, at, when full)
        self._windows: dict[str, tuple[float, int, float]] = {}  # key -> (window start, count, end)
        self._leases: dict[str, dict[str, float]] = {}  # key -> {lease: expires}
        self._lock = threading.Lock()
        self._decisions = 0

    async def acquire(self, checks: Sequence[Check], lease: str) -> Decision:
        with self._lock:
            return self.acquire_now(checks, lease)

    def acquire_now(self, checks: Sequence[Check], lease: str) -> Decision:
        now = self.clock()
        self._decisions += 1
        if self._decisions % SWEEP_EVERY == 0:
            self.sweep(now)
        retry, failed = -1.0, -1
        pending: list[Callable[[], None]] = []
        for index, check in enumerate(checks):
            wait, commit = self._check(check, now, lease)
            if wait is not None and wait > retry:
                retry, failed = wait, index
            pending.append(commit)
        if failed >= 0:
            return Decision(False, retry, failed)
        for commit in pending:
            commit()
        return Decision(True)

    def _check(self, check: Check, now: float, lease: str) -> tuple[float | None, Callable[[], None]]:
        """How long until ``check`` passes (``None``: it passes now), and how to count the call."""
        key = check.key
        if check.kind == "bucket":
            rate, burst = check.a, check.b
            tokens, at, _ = self._buckets.get(key, (burst, now, now))
            if now > at:
                tokens = min(burst, tokens + (now - at) * rate)
            wait = (1 - tokens) / rate if tokens < 1 else None
            at = max(now, at)
            full = at + (burst - tokens + 1) / rate
            return wait, lambda: self._buckets.__setitem__(key, (tokens - 1, at, full))
        if check.kind == "window":
            quota, seconds = check.a, check.b
            start = math.floor(now / seconds) * seconds
            began, count, _ = self._windows.get(key, (start, 0, 0.0))
            if began != start:
                count = 0
            wait = start + seconds - now if count >= quota else None
            return wait, lambda: self._windows.__setitem__(key, (start, count + 1, start + seconds))
        held = {name: until for name, until in self._leases.get(key, {}).items() if until > now}
        self._leases[key] = held
        wait = CONCURRENCY_RETRY_SECONDS if len(held) >= check.a else None
        return wait, lambda: held.__setitem__(lease, now + check.b)

    def sweep(self, now: float) -> None:
        """Drop the buckets that refilled (a full bucket is an absent one), the windows that ended
        and the caps no call holds."""
        self._buckets = {key: bucket for key, bucket in self._buckets.items() if bucket[2] > now}
        self._windows = {key: window for key, window in self._windows.items() if window[2] > now}
        self._leases = {key: held for key, held in self._leases.items() if any(t > now for t in held.values())}

    async def release(self, keys: Sequence[str], lease: str) -> None:
        with self._lock:
            for key in keys:
                self._leases.get(key, {}).pop(lease, None)

    async def aclose(self) -> None:
        """Nothing to close."""
