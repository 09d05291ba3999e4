"""The JSON-lines call log on disk (or stderr), written off the event loop and rotated by size.

A writer thread appends the queued lines in batches, rotating like
:class:`~logging.handlers.RotatingFileHandler` (``server.call_log_max_bytes``, keeping
``server.call_log_keep`` files), so a call only pays for putting one line on a queue. Several
processes may write one log (the workers of ``lorenz serve --workers``): each batch is appended,
and the file rotated, under an exclusive lock on ``<log>.lock`` (POSIX), and a file another process
rotated away is reopened, so no line is lost or torn.
"""

from __future__ import annotations

import contextlib
import json
import logging
import logging.handlers
import os
import queue
import sys
import threading
from collections.abc import Iterator

from .record import CallRecord

__all__ = ["CALL_LOG_ENV", "CallLog"]

logger = logging.getLogger("lorenz.host")

#: Where the call log goes when ``server.call_log`` is not set (``-`` for stderr).
CALL_LOG_ENV = "LORENZ_CALL_LOG"
#: How often the writer thread writes what calls queued.
WRITE_EVERY_SECONDS = 0.05


class CallLog:
    """The JSON-lines call log at ``path`` (``-``: stderr), rotated by size, written off the loop.

    A call only puts its line on a queue; a writer thread takes whatever is queued every
    :data:`WRITE_EVERY_SECONDS` and writes it in one go, so the log costs the event loop neither a
    syscall nor a thread wake-up per call.
    """

    def __init__(self, path: str, *, max_bytes: int, keep: int) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.keep = keep
        self._file: logging.handlers.RotatingFileHandler | None = None
        if path != "-":
            # Used for its stream and its rollover (rename .1 → .2 …, keep `keep`), not as a log handler.
            self._file = logging.handlers.RotatingFileHandler(
                path, maxBytes=max_bytes, backupCount=keep, encoding="utf-8"
            )
        self._queue: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="lorenz-call-log", daemon=True)
        self._thread.start()

    def same(self, path: str, max_bytes: int, keep: int) -> bool:
        return (self.path, self.max_bytes, self.keep) == (path, max_bytes, keep)

    def write(self, record: CallRecord) -> None:
        # ASCII only: a lone surrogate could not be encoded by the writer thread, and U+2028 or NEL
        # in a tool name would split the line for readers that split on every line break.
        self._queue.put(json.dumps(record.to_json(), separators=(",", ":")))

    def _run(self) -> None:
        while not self._stop.wait(WRITE_EVERY_SECONDS):
            self._drain()
        self._drain()

    def _drain(self) -> None:
        lines = []
        while True:
            try:
                lines.append(self._queue.get_nowait())
            except queue.Empty:
                break
        if not lines:
            return
        try:
            if self._file is None:
                sys.stderr.write("".join(f"{line}\n" for line in lines))
                sys.stderr.flush()
            else:
                self._append(lines)
        except OSError as exc:  # a full disk must not stop the host; say so once per batch
            logger.warning("lorenz: writing the call log %s failed: %s", self.path, exc)

    def _append(self, lines: list[str]) -> None:
        handler = self._file
        assert handler is not None
        with _exclusive(self.path + ".lock"):
            if handler.stream is not None and _moved(self.path, handler.stream.fileno()):
                handler.stream.close()  # another process rotated it: write to the current file
                handler.stream = None
            if handler.stream is None:
                handler.stream = handler._open()
            size = os.fstat(handler.stream.fileno()).st_size  # the other processes' lines included
            for line in lines:
                text = line + "\n"
                length = len(text.encode("utf-8"))
                if size and size + length > self.max_bytes:
                    handler.doRollover()
                    size = 0
                handler.stream.write(text)
                size += length
            handler.stream.flush()

    def close(self) -> None:
        """Write what is queued, then close the file."""
        self._stop.set()
        self._thread.join(timeout=5)
        if self._file is not None:
            self._file.close()


def _moved(path: str, fd: int) -> bool:
    """Whether ``path`` is no longer the file open as ``fd`` (rotated away, or deleted)."""
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return True
    opened = os.fstat(fd)
    return (current.st_dev, current.st_ino) != (opened.st_dev, opened.st_ino)


@contextlib.contextmanager
def _exclusive(lock_path: str) -> Iterator[None]:
    """An exclusive ``flock`` on ``lock_path`` while the block runs (nothing where there is none)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: one process per log
        yield
        return
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
