"""A call log's texts are the clients' and the packs' (issue 28): the writer keeps each record on
one line whatever they hold, and ``lorenz calls`` prints them escaped and capped."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lorenz.calllog.record import CallRecord
from lorenz.calllog.writer import CallLog

FORGED = 'x\n{"tool":"forged","outcome":"success"}\x1b[31m\u2028\u202e'
HUGE = "h" * 200_000


def record(tool: str, error: str | None = None) -> CallRecord:
    outcome = "success" if error is None else "failure"
    return CallRecord(
        ts=CallRecord.now(), tool=tool, pack=None, distribution=None, duration_ms=1.0, outcome=outcome, error=error
    )


def test_the_writer_keeps_every_record_on_one_line(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    log = CallLog(str(path), max_bytes=10_000_000, keep=1)
    try:
        log.write(record("lone\ud800surrogate\x85" + FORGED))
        log.write(record(HUGE, error="e" * 400))
        log.write(record("after"))
    finally:
        log.close()
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()  # splits on U+2028 and NEL too
    assert len(lines) == 3 and text.count("\n") == 3
    first, second, third = (json.loads(line) for line in lines)
    assert first["tool"].startswith("lone\ud800surrogate\x85x\n")
    assert len(second["tool"]) <= 256 and second["tool"].endswith("…") and len(second["error"]) == 400
    assert third["tool"] == "after"  # the writer thread survived the lone surrogate


def forged_log(path: Path) -> None:
    lines = [
        {
            "ts": "2026-12-01T12:00:00.000Z",
            "tool": FORGED,
            "outcome": "failure",
            "durationMs": 1,
            "error": "\x1b[2J" + "e" * 5000,
        },
        {"ts": "2026-12-01T12:00:00.000Z", "tool": HUGE, "outcome": "success", "durationMs": 2},
        {"ts": "2026-12-01T12:00:00.000Z", "tool": "plain", "outcome": "success", "durationMs": 3},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_lorenz_calls_prints_log_texts_escaped_and_capped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lorenz.cli import main

    path = tmp_path / "calls.jsonl"
    forged_log(path)
    assert main(["calls", str(path)]) == 0
    out = capsys.readouterr().out
    rows = out.splitlines()
    assert len(rows) == 5  # the header, three tools, one error line: no forged row
    assert not any(row.startswith("{") for row in rows)
    assert "\x1b" not in out and "\u2028" not in out and "\u202e" not in out
    assert '\\n{"tool":"forged"' in out and "\\x1b[31m" in out and "\\x1b[2J" in out
    assert len(out) < 3_000

    assert main(["calls", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)  # one object
    tools = {tool["tool"] for tool in report["tools"]}
    assert FORGED in tools and "plain" in tools
    assert all(len(tool) <= 128 for tool in tools)
    (errors,) = [tool["topErrors"] for tool in report["tools"] if tool["tool"] == FORGED]
    assert len(errors[0]["error"]) <= 500


def test_follow_prints_log_texts_escaped_and_capped(
    tmp_path: Path, start_following: Callable[[Path, io.StringIO], None]
) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text("", encoding="utf-8")
    out = io.StringIO()
    start_following(path, out)
    forged_log(tmp_path / "forged.jsonl")
    with path.open("a", encoding="utf-8") as handle:
        handle.write((tmp_path / "forged.jsonl").read_text(encoding="utf-8"))
    deadline = time.monotonic() + 5
    while "plain" not in out.getvalue() and time.monotonic() < deadline:
        time.sleep(0.02)
    printed = out.getvalue()
    assert len(printed.splitlines()) == 3
    assert "\x1b" not in printed and len(printed) < 2_000
