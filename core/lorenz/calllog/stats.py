"""The landing page's view of the calls: counters since start and the most recent calls."""

from __future__ import annotations

import statistics
import threading
from collections import deque
from collections.abc import Callable, Iterable

from attrs import frozen

from .record import CallRecord

__all__ = ["CallStats", "ToolStats", "tail_view"]

#: Calls the landing page's "Recent calls" table shows.
RECENT_CALLS = 50
#: Durations kept per tool for its percentiles.
_DURATIONS_KEPT = 1024


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
            if outcome not in ("success", "input_required"):  # a round of questions is no failure
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


#: How much of the end of a call log the landing page reads for its tables.
TAIL_BYTES = 512 * 1024


def tail_view(path: str) -> tuple[list[CallRecord], list[ToolStats]]:
    """:meth:`CallStats.snapshot` read from the end of the call log at ``path`` (the newest
    :data:`TAIL_BYTES`), so every worker writing that log shows the same tables; empty when the
    log does not exist yet."""
    import json

    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - TAIL_BYTES))
            data = handle.read()
    except OSError:
        return [], []
    lines = data.decode("utf-8", "replace").splitlines()
    if size > TAIL_BYTES:
        lines = lines[1:]  # the first line may be cut
    stats = CallStats()
    for line in lines:
        try:
            record = _record(json.loads(line))
        except (ValueError, TypeError, KeyError):
            continue
        stats.count(record.tool, record.outcome, record.duration_ms, record)
    return stats.snapshot()


def _record(data: dict[str, object]) -> CallRecord:
    def text(key: str) -> str | None:
        value = data.get(key)
        return value if isinstance(value, str) else None

    duration = data["durationMs"]
    if not isinstance(duration, int | float) or text("tool") is None or text("outcome") is None:
        raise TypeError("not a call record")
    return CallRecord(
        ts=text("ts") or "",
        tool=str(data["tool"]),
        pack=text("pack"),
        distribution=text("distribution"),
        duration_ms=float(duration),
        outcome=str(data["outcome"]),
        error=text("error"),
        token=text("token"),
    )
