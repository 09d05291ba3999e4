"""A stdio upstream's stderr: read 8 KiB at a time on a thread of its own and logged through
:class:`lorenz.StderrRelay` (redacted, under the instance's name read per line, a few lines a
second; the rest counted and noted as dropped), and its end reported with its last lines, since
it ends when the server does.

A server's stderr is its ordinary log (MCP lets a server write anything there), so its lines are
logged at INFO: ``lorenz serve`` shows them, while ``lorenz call``, ``tools`` and ``check`` do not
echo them; what a server wrote last is said at WARNING when it ends unasked."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence

from lorenz import StderrLimits, StderrRelay

__all__ = ["LIMITS", "StderrPipe"]

#: Under ``lorenz``, so that ``lorenz serve`` shows these INFO lines as it shows its own.
logger = logging.getLogger("lorenz.stderr")

#: 20 lines a second per upstream (no byte bound), each cut at 2,000 characters.
LIMITS = StderrLimits(line_burst=20, lines_per_second=20, byte_burst=None, bytes_per_second=None, max_line_chars=2000)
#: Bytes read at once: a longer line's rest is read and skipped in pieces this size.
_READ = 8192


class StderrPipe:
    """A pipe whose write end a server inherits as its stderr; :meth:`start` reads the other end."""

    def __init__(
        self, label: Callable[[], str], secrets: Sequence[str], on_end: Callable[[Sequence[str]], None]
    ) -> None:
        read_fd, write_fd = os.pipe()
        self._reader = os.fdopen(read_fd, "rb")
        #: What to hand the process as its stderr (closed here once it is spawned).
        self.writer = os.fdopen(write_fd, "w")
        self._label = label
        self._relay = StderrRelay(logger, lambda: f"pack {label()}", tuple(secrets), LIMITS, level=logging.INFO, keep=5)
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
        try:
            while chunk := self._reader.read1(_READ):
                self._relay.feed(chunk)
            self._relay.flush()
        except (OSError, ValueError):
            pass
        finally:
            self._reader.close()
            self._on_end(tuple(self._relay.recent))
