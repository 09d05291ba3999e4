"""`lorenz calls --follow` across rotations (issue 39): every record the writer logs is printed once,
in order, however many times the log rotated between two polls; `--json --follow` prints JSON."""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO, cast

from lorenz.calllog.reader import follow
from lorenz.calllog.record import CallRecord
from lorenz.calllog.writer import CallLog


def record(tool: str) -> CallRecord:
    return CallRecord(ts=CallRecord.now(), tool=tool, pack="p", distribution=None, duration_ms=1.0, outcome="success")


class Printed:
    """What ``follow`` printed, line by line, with a wait for a condition on it."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()

    def write(self, text: str) -> int:
        with self._changed:
            self.lines.extend(text.splitlines())
            self._changed.notify_all()
        return len(text)

    def flush(self) -> None:
        pass

    def wait_for(self, condition: Callable[[list[str]], bool], timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: condition(self.lines), timeout)


def printed_tool(line: str) -> str:
    return line.split("  ")[1]


def test_follow_prints_every_record_once_in_order_across_rotations(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    log = CallLog(str(path), max_bytes=2_000, keep=1_000)  # about ten records a file
    out = Printed()
    stop = threading.Event()
    follower = threading.Thread(
        target=follow, args=(path, cast(TextIO, out)), kwargs={"poll_seconds": 0.2, "stop": stop}, daemon=True
    )
    follower.start()
    try:
        # Follow starts at the end of the log: a warm-up record shows when it is there.
        while True:
            log.write(record("warm-up"))
            if out.wait_for(bool, timeout=0.1):
                break
        sent = [f"call-{index:04d}" for index in range(600)]
        for burst in range(6):  # each burst rotates the log about ten times, within one poll
            for tool in sent[burst * 100 : (burst + 1) * 100]:
                log.write(record(tool))
            first = sent[burst * 100]
            assert out.wait_for(lambda lines, first=first: any(first in line for line in lines), timeout=10)
        assert out.wait_for(lambda lines: any(sent[-1] in line for line in lines), timeout=10)
    finally:
        stop.set()
        follower.join(timeout=5)
        log.close()
    assert len(list(tmp_path.glob("calls.jsonl.*"))) > 50  # it did rotate, many times
    assert [printed_tool(line) for line in out.lines if "warm-up" not in line] == sent
    assert not follower.is_alive()


class Rotating(threading.Event):
    """A ``stop`` event whose first wait (the follower at the end of the live file, between two polls)
    appends a line to the file, rotates it away, and rotates another file in and out; its second
    wait stops the follower."""

    def __init__(self, path: Path, lines: list[str]) -> None:
        super().__init__()
        self.path, self.lines, self.waits = path, lines, 0

    def wait(self, timeout: float | None = None) -> bool:
        self.waits += 1
        if self.waits == 1:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(self.lines[0])
            self.path.rename(f"{self.path}.2")
            Path(f"{self.path}.1").write_text(self.lines[1] + self.lines[2], encoding="utf-8")
            self.path.write_text(self.lines[3], encoding="utf-8")
        else:
            self.set()
        return self.is_set()


def test_follow_drains_a_file_written_and_rotated_between_two_polls(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps(record("before").to_json()) + "\n", encoding="utf-8")
    lines = [json.dumps(record(f"call-{index}").to_json()) + "\n" for index in range(4)]
    out = Printed()
    stop = Rotating(path, lines)
    follow(path, cast(TextIO, out), poll_seconds=60, stop=stop)
    assert [printed_tool(line) for line in out.lines] == ["call-0", "call-1", "call-2", "call-3"]
    assert stop.waits == 2


def test_json_follow_prints_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    log = CallLog(str(path), max_bytes=1_000, keep=100)
    command = [sys.executable, "-m", "lorenz", "calls", str(path), "--json", "--follow"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    stdout = process.stdout
    assert stdout is not None
    received: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stdout:
            received.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        first = ""
        while not first:  # the command follows from the end of the log: warm up until it prints
            log.write(record("warm-up"))
            with contextlib.suppress(queue.Empty):
                first = received.get(timeout=0.2)
        for index in range(20):
            log.write(record(f"call-{index}"))
        objects = [json.loads(first)]
        while objects[-1]["call"]["tool"] != "call-19":
            objects.append(json.loads(received.get(timeout=10)))
    finally:
        process.terminate()
        process.wait(timeout=10)
        log.close()
    assert all(obj["version"] == 1 and obj["call"]["outcome"] == "success" for obj in objects)
    tools = [obj["call"]["tool"] for obj in objects]
    assert tools[-20:] == [f"call-{index}" for index in range(20)]
    assert set(tools[:-20]) == {"warm-up"}
