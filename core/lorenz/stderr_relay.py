"""A child process's stderr in the host's log: line by line, redacted, and bounded.

A process can write far faster than a log can take, and every logged line costs its formatting
and its handlers. So each relay has a token bucket (:class:`StderrLimits`): a burst of lines (and
bytes), refilled at so many a second. Lines past it are counted, not read one by one, and dropped;
a note says how many, at most every ``note_seconds`` and at the end. A line is cut at
``max_line_chars``, and a longer line's rest is skipped without being held in memory.

A relay is fed chunk by chunk, from an event loop or from a thread reading the pipe. On a loop,
a pipe transport given as :attr:`StderrRelay.transport` is not read for ``pause_seconds`` at a
time while lines are being dropped: the process's writes then wait on a full pipe instead of the
host reading, as fast as it can write, what it only throws away.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Callable, Collection

from attrs import frozen

from lorenz.redact import redact_text

__all__ = ["StderrLimits", "StderrRelay"]


@frozen(kw_only=True)
class StderrLimits:
    """A relay's bucket: ``byte_burst``/``bytes_per_second`` ``None`` bound lines only."""

    line_burst: int = 200
    lines_per_second: int = 20
    byte_burst: int | None = 256 * 1024
    bytes_per_second: int | None = 16 * 1024
    max_line_chars: int = 4000
    note_seconds: float = 10.0
    pause_seconds: float = 0.05

    def rate(self) -> str:
        """``"20 lines or 16 KiB"``: what the drop note says a second allows."""
        if self.bytes_per_second is None:
            return f"{self.lines_per_second} lines"
        return f"{self.lines_per_second} lines or {self.bytes_per_second // 1024} KiB"


class StderrRelay:
    """One process's stderr, logged to ``logger`` at ``level`` as ``<name()>: <line>``; ``name`` is
    asked per line, so a renamed instance's lines carry its new name. ``keep`` > 0 keeps that many
    last lines in :attr:`recent`, to say what a process that failed wrote last."""

    def __init__(
        self,
        logger: logging.Logger,
        name: Callable[[], str],
        secrets: Collection[str],
        limits: StderrLimits | None = None,
        *,
        level: int = logging.WARNING,
        keep: int = 0,
    ) -> None:
        self._logger = logger
        self._level = level
        #: The last ``keep`` lines logged (redacted): what to show when the process fails.
        self.recent: collections.deque[str] = collections.deque(maxlen=keep)
        self._name = name
        self._secrets = secrets
        self.limits = limits = limits if limits is not None else StderrLimits()
        self._max_line_bytes = 4 * limits.max_line_chars
        self._lines: float = limits.line_burst
        self._bytes: float = limits.byte_burst if limits.byte_burst is not None else float("inf")
        self._filled_at = time.monotonic()
        self._partial = bytearray()
        #: Inside a line whose head was logged (cut) or dropped: its rest is dropped too.
        self._skipping = False
        #: Whether the line being skipped counts as dropped when it ends (its head was not logged).
        self._skipped_counts = False
        self._dropped = 0
        self._note: asyncio.TimerHandle | None = None
        #: Fed from a thread: when the note of the lines dropped is due (said with the next chunk).
        self._note_due: float | None = None
        #: The pipe's transport, paused while the bucket is empty (set once the pipe is connected).
        self.transport: asyncio.ReadTransport | None = None

    def feed(self, data: bytes) -> None:
        """Log the lines ``data`` ends (with what earlier chunks began) as the bucket allows."""
        if self._note_due is not None and time.monotonic() >= self._note_due:
            self._say_dropped()
        start = 0
        if self._skipping:
            end = data.find(b"\n")
            if end < 0:
                return
            if self._skipped_counts:
                self._drop(1)
            self._skipping = False
            start = end + 1
        self._refill()
        while start < len(data):
            end = data.find(b"\n", start)
            if end < 0:
                self._hold(data[start:])
                return
            if not self._spend():  # every line this chunk ends is dropped, counted but not split
                self._drop(data.count(b"\n", start))
                self._partial.clear()
                if not data.endswith(b"\n"):
                    self._skip(counts=True)
                return
            self._emit(bytes(self._partial) + data[start:end])
            self._partial.clear()
            start = end + 1

    def flush(self) -> None:
        """At the process's end: the last line without a newline, and the note of what was dropped."""
        if self._partial:
            self._refill()
            if self._spend():
                self._emit(bytes(self._partial))
            else:
                self._drop(1)
            self._partial.clear()
        if self._note is not None:
            self._note.cancel()
            self._note = None
        self._say_dropped()

    def _hold(self, tail: bytes) -> None:
        """Keep the start of a line until its end comes; one too long is logged cut (or dropped)."""
        self._partial += tail
        if len(self._partial) <= self._max_line_bytes:
            return
        if self._spend():
            self._emit(bytes(self._partial))
            self._skip(counts=False)
        else:
            self._skip(counts=True)
        self._partial.clear()

    def _skip(self, *, counts: bool) -> None:
        self._skipping, self._skipped_counts = True, counts

    def _refill(self) -> None:
        now, limits = time.monotonic(), self.limits
        elapsed, self._filled_at = now - self._filled_at, now
        self._lines = min(limits.line_burst, self._lines + elapsed * limits.lines_per_second)
        if limits.byte_burst is not None and limits.bytes_per_second is not None:
            self._bytes = min(limits.byte_burst, self._bytes + elapsed * limits.bytes_per_second)

    def _spend(self) -> bool:
        """Whether the bucket allows a line now (blank ones count: they cost a loop turn too)."""
        if self._lines < 1 or self._bytes < 1:
            return False
        self._lines -= 1
        return True

    def _emit(self, line: bytes) -> None:
        text = line[: self._max_line_bytes].decode("utf-8", "replace").rstrip()[: self.limits.max_line_chars]
        if text:
            self._bytes -= len(text)
            redacted = redact_text(text, self._secrets)
            self._logger.log(self._level, "%s: %s", self._name(), redacted)
            if self.recent.maxlen:
                self.recent.append(redacted)

    def _drop(self, lines: int) -> None:
        self._dropped += lines
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # fed from a thread: the note waits for a later chunk or the end
            if self._note_due is None:
                self._note_due = time.monotonic() + self.limits.note_seconds
            return
        if self._note is None:
            self._note = loop.call_later(self.limits.note_seconds, self._noted)
        transport = self.transport
        if transport is not None and transport.is_reading():
            transport.pause_reading()
            loop.call_later(self.limits.pause_seconds, transport.resume_reading)

    def _noted(self) -> None:
        self._note = None
        self._say_dropped()

    def _say_dropped(self) -> None:
        self._note_due = None
        if self._dropped:
            self._logger.log(
                self._level,
                "%s: %d lines of its stderr dropped (more than %s a second)",
                self._name(),
                self._dropped,
                self.limits.rate(),
            )
            self._dropped = 0
