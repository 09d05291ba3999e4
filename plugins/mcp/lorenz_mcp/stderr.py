"""A stdio upstream's stderr: read on a thread of its own, each line logged redacted under the
instance's name (its ``tools:`` key, read per line) within a rate limit (a flooding server gets a
few lines a second logged and the rest counted), and its end reported, since it ends when the
server does."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence

from lorenz import redact_text

__all__ = ["LINES_PER_SECOND", "StderrPipe"]

logger = logging.getLogger("lorenz_mcp")

#: Lines logged per second and upstream; the rest are counted and reported as dropped.
LINES_PER_SECOND = 20
_MAX_LINE = 2000
#: Bytes of a line read at once: the rest of a longer line is read and skipped in pieces this size.
_READ = 8192


class StderrPipe:
    """A pipe whose write end a server inherits as its stderr; :meth:`start` reads the other end."""

    def __init__(self, label: Callable[[], str], secrets: Sequence[str], on_end: Callable[[], None]) -> None:
        read_fd, write_fd = os.pipe()
        self._reader = os.fdopen(read_fd, "rb")
        #: What to hand the process as its stderr (closed here once it is spawned).
        self.writer = os.fdopen(write_fd, "w")
        self._label = label
        self._secrets = tuple(secrets)
        self._on_end = on_end

    def start(self) -> None:
        """Close this side's write end (the child holds its own) and read until the pipe ends."""
        self.writer.close()
        threading.Thread(target=self._read, name=f"lorenz-mcp stderr {self._label()}", daemon=True).start()

    def close(self) -> None:
        """For a process that never started: close both ends."""
        self.writer.close()
        self._reader.close()

    def _read(self) -> None:
        window, logged, dropped, rest_of_line = time.monotonic(), 0, 0, False
        try:
            while raw := self._reader.readline(_READ):
                if rest_of_line:  # the end of a line longer than _READ: not logged
                    rest_of_line = not raw.endswith(b"\n")
                    continue
                rest_of_line = not raw.endswith(b"\n")
                now = time.monotonic()
                if now - window >= 1.0:
                    if dropped:
                        logger.warning("pack %s: %d stderr lines dropped (rate limit)", self._label(), dropped)
                    window, logged, dropped = now, 0, 0
                if logged >= LINES_PER_SECOND:
                    dropped += 1
                    continue
                logged += 1
                line = raw.decode("utf-8", "replace").rstrip()[:_MAX_LINE]
                if line:
                    logger.warning("pack %s: %s", self._label(), redact_text(line, self._secrets))
        except (OSError, ValueError):
            pass
        finally:
            self._reader.close()
            self._on_end()
