"""``lorenz calls``: summaries of a call log (the JSON lines ``server.call_log`` writes).

Per tool: calls, failure rate (anything but ``success``), p50/p95/max duration and the most
frequent errors; filtered by age (``--since 1h``) and tool; ``--follow`` tails the log live.
A line that is not a call record (not UTF-8, not JSON, not a record) is skipped and counted.
A log's texts came from clients and packs: what is printed of them is capped, and on a terminal
their control characters are shown as escapes.
"""

from __future__ import annotations

import json
import re
import statistics
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TextIO

from attrs import define, frozen

from .record import MAX_ERROR_CHARS, capped
from .tail import tail_lines

__all__ = [
    "MAX_TOOL_CHARS",
    "Skipped",
    "ToolSummary",
    "call_line",
    "follow",
    "parse_since",
    "read_calls",
    "shown",
    "summarize",
]

#: Characters of a tool name printed (errors are printed up to the record's own cap).
MAX_TOOL_CHARS = 128

# C0/C1 controls, zero-width and bidi formatting characters, line separators, lone surrogates: each
# could forge a row, recolour the terminal or reorder what it shows.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")

_SINCE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_since(text: str, *, now: datetime | None = None) -> datetime:
    """``30s``, ``15m``, ``1h``, ``2d`` → the moment that long ago (UTC)."""
    match = _SINCE.match(text)
    if match is None:
        msg = f"--since {text!r}: expected a number and a unit, like 30s, 15m, 1h or 2d"
        raise ValueError(msg)
    amount, unit = float(match.group(1)), match.group(2)
    return (now or datetime.now(UTC)) - timedelta(**{_UNITS[unit]: amount})


def shown(value: object, limit: int) -> str:
    """A value of the log as a terminal may print it: unprintable characters as escapes
    (``\\x1b``, ``\\u2028``), at most ``limit`` characters."""
    text = capped(str(value), limit)
    return capped(
        _UNPRINTABLE.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text), limit
    )


def _moment(record: dict[str, Any]) -> datetime | None:
    try:
        return datetime.fromisoformat(str(record.get("ts", "")).replace("Z", "+00:00"))
    except ValueError:
        return None


@define
class Skipped:
    """How many lines :func:`read_calls` skipped: ``undecodable`` of them were not UTF-8."""

    lines: int = 0
    undecodable: int = 0


def read_calls(
    lines: Iterable[bytes | str],
    *,
    since: datetime | None = None,
    tool: str | None = None,
    skipped: Skipped | None = None,
) -> Iterator[dict[str, Any]]:
    """The records among ``lines`` that match; lines that are not call records are skipped (and
    counted in ``skipped``)."""
    tally = Skipped() if skipped is None else skipped
    for line in lines:
        try:
            text = line.decode("utf-8") if isinstance(line, bytes) else line
        except UnicodeDecodeError:
            tally.lines += 1
            tally.undecodable += 1
            continue
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except ValueError:
            record = None
        if not isinstance(record, dict) or not isinstance(record.get("tool"), str):
            tally.lines += 1
            continue
        if tool is not None and record["tool"] != tool:
            continue
        if since is not None:
            moment = _moment(record)
            if moment is None or moment < since:
                continue
        yield record


@frozen
class ToolSummary:
    tool: str
    calls: int
    failures: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    top_errors: tuple[tuple[str, int], ...]

    @property
    def failure_rate(self) -> float:
        return self.failures / self.calls if self.calls else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": capped(self.tool, MAX_TOOL_CHARS),
            "calls": self.calls,
            "failures": self.failures,
            "failureRate": round(self.failure_rate, 4),
            "p50Ms": self.p50_ms,
            "p95Ms": self.p95_ms,
            "maxMs": self.max_ms,
            "topErrors": [
                {"error": capped(error, MAX_ERROR_CHARS), "count": count} for error, count in self.top_errors
            ],
        }


def _quantile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 3)


def summarize(records: Iterable[dict[str, Any]], *, top: int = 3) -> list[ToolSummary]:
    """One summary per tool, busiest first."""
    durations: dict[str, list[float]] = {}
    failures: Counter[str] = Counter()
    errors: dict[str, Counter[str]] = {}
    for record in records:
        tool = record["tool"]
        duration = record.get("durationMs")
        durations.setdefault(tool, []).append(float(duration) if isinstance(duration, int | float) else 0.0)
        if record.get("outcome") != "success":
            failures[tool] += 1
            errors.setdefault(tool, Counter())[str(record.get("error") or record.get("outcome"))] += 1
    summaries = [
        ToolSummary(
            tool=tool,
            calls=len(values),
            failures=failures[tool],
            p50_ms=_quantile(values, 50),
            p95_ms=_quantile(values, 95),
            max_ms=max(values),
            top_errors=tuple(errors.get(tool, Counter()).most_common(top)),
        )
        for tool, values in durations.items()
    ]
    summaries.sort(key=lambda summary: (-summary.calls, summary.tool))
    return summaries


def call_line(record: dict[str, Any]) -> str:
    """A record as ``lorenz calls --follow`` prints it: when, tool, outcome, duration, error."""
    error = f"  {shown(record['error'], MAX_ERROR_CHARS)}" if record.get("error") else ""
    when, outcome, took = (shown(record.get(key, ""), 64) for key in ("ts", "outcome", "durationMs"))
    return f"{when}  {shown(record['tool'], MAX_TOOL_CHARS)}  {outcome}  {took} ms{error}"


def follow(
    path: Path,
    out: TextIO,
    *,
    tool: str | None = None,
    render: Callable[[dict[str, Any]], str] = call_line,
    poll_seconds: float = 0.5,
    stop: threading.Event | None = None,
) -> None:
    """Print each new call of the log as ``render`` makes it a line, from its end, through its
    rotations, until ``stop`` is set or the process is interrupted."""
    for line in tail_lines(path, stop=stop or threading.Event(), poll_seconds=poll_seconds):
        for record in read_calls([line], tool=tool):
            out.write(render(record) + "\n")
            out.flush()
