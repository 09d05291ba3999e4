"""`lorenz calls`: summaries of a call log, from a fixture log with known answers."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lorenz.calllog.reader import parse_since, read_calls, summarize

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def line(tool: str, outcome: str, ms: float, minutes_ago: int = 0, error: str | None = None) -> str:
    ts = datetime.fromtimestamp(NOW.timestamp() - 60 * minutes_ago, UTC).isoformat().replace("+00:00", "Z")
    return json.dumps({"ts": ts, "tool": tool, "outcome": outcome, "durationMs": ms, "error": error})


LOG = [
    *(line("local_query", "success", ms) for ms in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10)),
    line("local_query", "failure", 50, error="bad filter"),
    line("jira_query", "timeout", 120_000, minutes_ago=90, error="tool jira_query did not finish within 120 s"),
    line("jira_query", "failure", 30, error="jira 401"),
    line("jira_query", "failure", 40, error="jira 401"),
    "not json at all",
    json.dumps({"no": "tool"}),
]


def test_summary_per_tool() -> None:
    local, jira = summarize(read_calls(LOG))
    assert (local.tool, local.calls, local.failures, local.max_ms) == ("local_query", 11, 1, 50.0)
    assert local.p50_ms == 6.0
    assert local.top_errors == (("bad filter", 1),)
    assert (jira.tool, jira.calls, jira.failures) == ("jira_query", 3, 3)
    assert jira.top_errors[0] == ("jira 401", 2)
    assert jira.to_dict()["failureRate"] == 1.0


def test_since_and_tool_filters() -> None:
    recent = list(read_calls(LOG, since=parse_since("1h", now=NOW)))
    assert len(recent) == 13  # the 90-minute-old timeout is out
    only = summarize(read_calls(LOG, tool="jira_query"))
    assert [summary.tool for summary in only] == ["jira_query"]


def test_since_is_checked() -> None:
    with pytest.raises(ValueError, match="expected a number and a unit"):
        parse_since("yesterday")


def test_follow_prints_new_calls(tmp_path: Path, start_following: Callable[[Path, io.StringIO], None]) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text(LOG[0] + "\n", encoding="utf-8")
    out = io.StringIO()
    start_following(path, out)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(line("local_read_issue", "failure", 3.5, error="not found") + "\n")
    deadline = time.monotonic() + 5
    while "local_read_issue" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert out.getvalue().endswith("local_read_issue  failure  3.5 ms  not found\n")
    assert "local_query" not in out.getvalue()  # only what came after the start


def test_lorenz_calls_prints_the_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lorenz.cli import main

    log = tmp_path / "calls.jsonl"
    log.write_text("\n".join(LOG) + "\n", encoding="utf-8")
    assert main(["calls", str(log), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["version"] == 1
    assert [(tool["tool"], tool["calls"], tool["failures"]) for tool in report["tools"]] == [
        ("local_query", 11, 1),
        ("jira_query", 3, 3),
    ]
    assert main(["calls", str(log), "--tool", "jira_query"]) == 0
    out = capsys.readouterr().out
    assert "jira_query" in out and "100.0%" in out and "2 × jira 401" in out and "local_query" not in out
    assert main(["calls", str(tmp_path / "missing.jsonl")]) == 1
    assert "no such call log" in capsys.readouterr().err


def test_lorenz_calls_skips_and_counts_lines_that_are_not_utf8(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from lorenz.cli import main

    log = tmp_path / "calls.jsonl"
    lines = [text.encode() for text in LOG]
    lines.insert(3, b'{"tool": "local_query", "error": "\xff\xfe"}')  # one byte that is not UTF-8
    log.write_bytes(b"\n".join(lines) + b"\n")
    assert main(["calls", str(log), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(tool["tool"], tool["calls"]) for tool in report["tools"]] == [("local_query", 11), ("jira_query", 3)]
    assert report["skippedLines"] == 3  # the undecodable line, "not json at all" and {"no": "tool"}
    assert main(["calls", str(log)]) == 0
    captured = capsys.readouterr()
    assert "local_query" in captured.out
    assert captured.err == f"lorenz: {log}: 3 lines skipped (not a call record; 1 not UTF-8)\n"
