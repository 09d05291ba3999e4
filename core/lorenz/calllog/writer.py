"""Recording every ``tools/call``: a JSON-lines call log and an in-memory window for the landing page.

A failing tool is an HTTP 200 with ``isError``, so HTTP dashboards see health while agents see
failures: this is where the host says which tool failed, how often, how slowly, for whom.
Argument *values* are never recorded (only their size), and every message is redacted.

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
import statistics
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from attrs import asdict, frozen

from lorenz.redact import redact_text

__all__ = ["CALL_LOG_ENV", "CallLog", "CallRecord", "CallStats", "ToolStats"]

logger = logging.getLogger("lorenz.host")

#: Where the call log goes when ``server.call_log`` is not set (``-`` for stderr).
CALL_LOG_ENV = "LORENZ_CALL_LOG"
#: How often the writer thread writes what calls queued.
WRITE_EVERY_SECONDS = 0.05
#: Characters of an error message kept in a record.
MAX_ERROR_CHARS = 500
#: Characters of any other text field (a tool name, a client's name) kept in a record.
MAX_FIELD_CHARS = 256
#: Characters of an error message redacted before it is cut to MAX_ERROR_CHARS.
_REDACTED_HEAD = 64 * 1024
#: Calls the landing page's "Recent calls" table shows.
RECENT_CALLS = 50
#: Durations kept per tool for its percentiles.
_DURATIONS_KEPT = 1024


#: Keys left out of a line when there is nothing to say (the others are always there, maybe null).
_WHEN_KNOWN = frozenset({"client", "sessionId", "traceId", "token", "clientGone"})


#: The second :meth:`CallRecord.stamp` last formatted, and its text (a race only formats it twice).
_STAMP: list[Any] = [None, ""]


@frozen(kw_only=True)
class CallRecord:
    """One ``tools/call`` as the call log writes it (camelCase keys on the wire)."""

    ts: str
    tool: str
    pack: str | None
    distribution: str | None
    duration_ms: float
    outcome: str
    error: str | None = None
    argument_bytes: int = 0
    result_bytes: int = 0
    protocol_version: str | None = None
    client: dict[str, str] | None = None
    session_id: str | None = None
    request_id: str | int | None = None
    trace_id: str | None = None
    token: str | None = None
    #: The client stopped waiting (dropped the connection, cancelled) before the call ended;
    #: ``outcome`` is still how the call ended.
    client_gone: bool | None = None

    @staticmethod
    def now() -> str:
        """The current UTC time, ``2026-12-01T12:00:00.123Z``."""
        return CallRecord.stamp(time.time())

    @staticmethod
    def stamp(now: float) -> str:
        """``now`` (seconds since the epoch) as ``2026-12-01T12:00:00.123Z``: every call is
        stamped, so the part up to the second is formatted once per second."""
        second = int(now)
        if second != _STAMP[0]:
            _STAMP[:] = [second, datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")]
        return f"{_STAMP[1]}.{int((now - second) * 1000):03d}Z"

    def to_json(self) -> dict[str, Any]:
        names = {
            "duration_ms": "durationMs",
            "argument_bytes": "argumentBytes",
            "result_bytes": "resultBytes",
            "protocol_version": "protocolVersion",
            "session_id": "sessionId",
            "request_id": "requestId",
            "trace_id": "traceId",
            "client_gone": "clientGone",
        }
        # The error is capped by clean_error, at its own length.
        out = {names.get(key, key): value if key == "error" else _field(value) for key, value in asdict(self).items()}
        return {key: value for key, value in out.items() if value is not None or key not in _WHEN_KNOWN}


def _field(value: Any) -> Any:
    """A record's field as written: texts the client chose (a tool name, its own name) capped."""
    if isinstance(value, str):
        return _capped(value, MAX_FIELD_CHARS)
    if isinstance(value, dict):
        return {_capped(str(key), MAX_FIELD_CHARS): _field(item) for key, item in value.items()}
    return value


def clean_error(message: str | None, secrets: Iterable[str], arguments: Any = None) -> str | None:
    """A record's ``error``: redacted (``arguments``' values included: a message may quote the
    argument it refuses), one line, at most :data:`MAX_ERROR_CHARS` characters."""
    if message is None:
        return None
    # Only the first MAX_ERROR_CHARS are kept: a generous head bounds the redaction's work.
    text = " ".join(redact_text(message[:_REDACTED_HEAD], secrets, arguments=arguments).split())
    return _capped(text, MAX_ERROR_CHARS)


def _capped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


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


@frozen
class ToolStats:
    tool: str
    calls: int
    failures: int
    p50_ms: float
    p95_ms: float


class CallStats:
    """Counters since start and the most recent calls, for the landing page (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: The newest calls: a record, or how to build one (made only when a page shows it).
        self.recent: deque[CallRecord | Callable[[], CallRecord]] = deque(maxlen=RECENT_CALLS)
        self._calls: dict[str, int] = {}
        self._failures: dict[str, int] = {}
        self._durations: dict[str, deque[float]] = {}

    def count(self, tool: str, outcome: str, duration_ms: float, record: CallRecord | Callable[[], CallRecord]) -> None:
        """Count one call of ``tool``; ``record`` is its record or a function building it."""
        with self._lock:
            self.recent.append(record)
            self._calls[tool] = self._calls.get(tool, 0) + 1
            if outcome != "success":
                self._failures[tool] = self._failures.get(tool, 0) + 1
            durations = self._durations.get(tool)
            if durations is None:
                durations = self._durations[tool] = deque(maxlen=_DURATIONS_KEPT)
            durations.append(duration_ms)

    def snapshot(self) -> tuple[list[CallRecord], list[ToolStats]]:
        """``(recent calls, newest first; per-tool counters, busiest first)``."""
        with self._lock:
            recent = [item if isinstance(item, CallRecord) else item() for item in reversed(self.recent)]
            tools = [
                ToolStats(
                    tool=tool,
                    calls=count,
                    failures=self._failures.get(tool, 0),
                    p50_ms=_percentile(self._durations[tool], 50),
                    p95_ms=_percentile(self._durations[tool], 95),
                )
                for tool, count in self._calls.items()
            ]
        tools.sort(key=lambda stats: (-stats.calls, stats.tool))
        return recent, tools


def _percentile(samples: Iterable[float], q: int) -> float:
    values = sorted(samples)
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]
