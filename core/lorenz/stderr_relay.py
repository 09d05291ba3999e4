"""An isolated pack's stderr in the host's log: line by line, redacted, and bounded.

A pack can write far faster than a log can take, and every logged line costs the host's event
loop (which serves the other packs) its formatting and its handlers. So each process gets a
token bucket: a burst of :data:`LINE_BURST` lines or :data:`BYTE_BURST` bytes, refilled at
:data:`LINES_PER_SECOND` and :data:`BYTES_PER_SECOND`. Lines past it are counted, not read one by
one, and dropped; a note says how many, at most every :data:`NOTE_SECONDS` and at the end.
A line is cut at :data:`MAX_LINE_CHARS`. While lines are being dropped the pipe is not read for
:data:`PAUSE_SECONDS` at a time: the pack's writes then wait on a full pipe instead of the host
reading, as fast as the pack can write, what it only throws away.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Collection

from lorenz.redact import redact_text

__all__ = ["BYTES_PER_SECOND", "BYTE_BURST", "LINES_PER_SECOND", "LINE_BURST", "MAX_LINE_CHARS", "StderrRelay"]

logger = logging.getLogger("lorenz.isolation")

LINE_BURST = 200
LINES_PER_SECOND = 20
BYTE_BURST = 256 * 1024
BYTES_PER_SECOND = 16 * 1024
MAX_LINE_CHARS = 4000
_MAX_LINE_BYTES = 4 * MAX_LINE_CHARS
NOTE_SECONDS = 10.0
PAUSE_SECONDS = 0.05


class StderrRelay:
    """One child's stderr, fed chunk by chunk from the event loop."""

    def __init__(self, pack: str, pid: int, secrets: Collection[str]) -> None:
        self.pack = pack
        #: Shown with every line (the host sets it to the pack's own process once it is known).
        self.pid = pid
        self._secrets = secrets
        self._lines: float = LINE_BURST
        self._bytes: float = BYTE_BURST
        self._filled_at = time.monotonic()
        self._partial = bytearray()
        #: Inside a line whose head was logged (cut) or dropped: its rest is dropped too.
        self._skipping = False
        #: Whether the line being skipped counts as dropped when it ends (its head was not logged).
        self._skipped_counts = False
        self._dropped = 0
        self._note: asyncio.TimerHandle | None = None
        #: The pipe's transport, paused while the bucket is empty (set once the pipe is connected).
        self.transport: asyncio.ReadTransport | None = None

    def feed(self, data: bytes) -> None:
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
        """At the child's end: the last line without a newline, and the note of what was dropped."""
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
        if len(self._partial) <= _MAX_LINE_BYTES:
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
        now = time.monotonic()
        elapsed, self._filled_at = now - self._filled_at, now
        self._lines = min(LINE_BURST, self._lines + elapsed * LINES_PER_SECOND)
        self._bytes = min(BYTE_BURST, self._bytes + elapsed * BYTES_PER_SECOND)

    def _spend(self) -> bool:
        """Whether the bucket allows a line now (blank ones count: they cost a loop turn too)."""
        if self._lines < 1 or self._bytes < 1:
            return False
        self._lines -= 1
        return True

    def _emit(self, line: bytes) -> None:
        text = line[:_MAX_LINE_BYTES].decode("utf-8", "replace").rstrip()[:MAX_LINE_CHARS]
        if text:
            self._bytes -= len(text)
            logger.warning("lorenz: pack %s [pid %d]: %s", self.pack, self.pid, redact_text(text, self._secrets))

    def _drop(self, lines: int) -> None:
        self._dropped += lines
        loop = asyncio.get_running_loop()
        if self._note is None:
            self._note = loop.call_later(NOTE_SECONDS, self._noted)
        transport = self.transport
        if transport is not None and transport.is_reading():
            transport.pause_reading()
            loop.call_later(PAUSE_SECONDS, transport.resume_reading)

    def _noted(self) -> None:
        self._note = None
        self._say_dropped()

    def _say_dropped(self) -> None:
        if self._dropped:
            logger.warning(
                "lorenz: pack %s [pid %d]: %d lines of its stderr dropped (more than %d lines or %d KiB a second)",
                self.pack,
                self.pid,
                self._dropped,
                LINES_PER_SECOND,
                BYTES_PER_SECOND // 1024,
            )
            self._dropped = 0
