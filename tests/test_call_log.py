"""The call log (issue 14): one exact JSON line per served ``tools/call``, no argument values,
redacted errors, size rotation; and the landing page's live view."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import mcp
import pytest

from lorenz.calllog.record import CallRecord
from lorenz.calllog.writer import CallLog
from lorenz.host import serve_in_thread

pytestmark = pytest.mark.anyio

ENV = {"LORENZ_LOAD_PLUGINS": "", "DEMO_SECRET": "hunter2-very-secret"}
KEYS = {
    "ts",
    "tool",
    "pack",
    "distribution",
    "durationMs",
    "outcome",
    "error",
    "argumentBytes",
    "resultBytes",
    "protocolVersion",
    "requestId",
}


def read_lines(path: Path, count: int, seconds: float = 5) -> list[dict[str, Any]]:
    """The log's lines once ``count`` of them are there (the writer thread is asynchronous)."""
    deadline = time.monotonic() + seconds
    while True:
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        if len(lines) >= count or time.monotonic() > deadline:
            return [json.loads(line) for line in lines]
        time.sleep(0.05)


def logged_workflow(directory: Path, server: str = "") -> Path:
    """A WORKFLOW.md of the demo tracker logging calls to ``calls.jsonl`` (``server`` adds keys)."""
    front = f"tracker:\n  kind: demo\nserver:\n{server}  call_log: calls.jsonl\n"
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    return directory / "calls.jsonl"


async def test_each_call_is_one_exact_line(tmp_path: Path, host_pack: ModuleType) -> None:
    log = logged_workflow(tmp_path)
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        async with mcp.Client(server.url, mode="legacy") as client:
            assert (await client.call_tool("demo_add", {"a": 40, "b": 2})).is_error is False
            assert (await client.call_tool("demo_fail", {"note": "hunter2-very-secret"})).is_error is True
            assert (await client.call_tool("demo_boom", {})).is_error is True
            assert (await client.call_tool("demo_add", {"a": "forty"})).is_error is True
            assert (await client.call_tool("nope", {})).is_error is True
        async with mcp.Client(server.url) as modern:  # lands on 2026-07-28, which names the client
            assert (await modern.call_tool("demo_add", {"a": 1, "b": 1})).is_error is False
        lines = await anyio.to_thread.run_sync(read_lines, log, 6)
        writers = [thread for thread in threading.enumerate() if thread.name == "lorenz-call-log"]
        assert len(writers) == 1  # opened once, not per call
    assert [(line["tool"], line["outcome"]) for line in lines] == [
        ("demo_add", "success"),
        ("demo_fail", "failure"),
        ("demo_boom", "crash"),
        ("demo_add", "rejected"),
        ("nope", "rejected"),
        ("demo_add", "success"),
    ]
    first = lines[0]
    assert set(first) >= KEYS
    assert first["pack"] == "demo" and first["distribution"] is None  # registered in-process
    assert first["error"] is None
    assert first["argumentBytes"] == len(json.dumps({"a": 40, "b": 2}, ensure_ascii=False))
    assert first["resultBytes"] > 0 and first["durationMs"] >= 0
    assert first["protocolVersion"] == "2025-11-25"
    assert first["ts"].endswith("Z") and first["ts"][:4] == time.strftime("%Y", time.gmtime())
    assert lines[1]["error"] == "nope"
    assert lines[2]["error"] == "kaboom"
    assert lines[3]["error"].startswith("invalid arguments for tool demo_add: a: must be")
    assert lines[4]["pack"] is None and lines[4]["error"].startswith('Unsupported tool: "nope".')
    assert lines[5]["protocolVersion"] == "2026-07-28"
    assert lines[5]["client"]["name"]
    text = log.read_text(encoding="utf-8")
    assert "hunter2" not in text and "forty" not in text  # argument values are never logged


async def test_a_stateful_session_is_named_in_its_lines(tmp_path: Path, host_pack: ModuleType) -> None:
    log = logged_workflow(tmp_path, "  stateful: true\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        async with mcp.Client(server.url, mode="legacy") as client:
            await client.call_tool("demo_add", {"a": 1, "b": 2})
            await client.call_tool("demo_add", {"a": 2, "b": 2})
        lines = await anyio.to_thread.run_sync(read_lines, log, 2)
    sessions = {line.get("sessionId") for line in lines}
    assert len(lines) == 2 and len(sessions) == 1
    (session,) = sessions
    assert isinstance(session, str) and len(session) >= 16


async def test_live_view_on_the_landing_page(tmp_path: Path, host_pack: ModuleType) -> None:
    """Per-tool counters and recent calls, shown only to a caller presenting the token."""
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\n---\n", encoding="utf-8")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack], token="s3cret-token") as server:
        headers = {"Authorization": "Bearer s3cret-token"}
        async with httpx.AsyncClient(headers=headers) as http:
            transport = mcp.client.streamable_http.streamable_http_client(server.url, http_client=http)
            async with mcp.Client(transport) as client:
                for _ in range(3):
                    await client.call_tool("demo_add", {"a": 1, "b": 2})
                await client.call_tool("demo_fail", {})
            page = (await http.get(server.base_url + "/")).text
            live = (await http.get(server.base_url + "/?refresh=5")).text
        async with httpx.AsyncClient() as anonymous_http:
            anonymous = (await anonymous_http.get(server.base_url + "/")).text
    assert '<h2 id="calls">Recent calls</h2>' in page
    assert "<tr><td><code>demo_add</code></td><td>3</td><td>0</td>" in page
    assert "<tr><td><code>demo_fail</code></td><td>1</td><td>1</td>" in page
    assert page.count('class="call-success"') == 3 and page.count('class="call-failure"') == 1
    assert '<meta http-equiv="refresh" content="5">' in live
    assert "Recent calls" not in anonymous and "demo_add" not in anonymous


def test_rotation_keeps_the_configured_number_of_files(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    log = CallLog(str(path), max_bytes=2_000, keep=2)
    record = CallRecord(ts=CallRecord.now(), tool="t", pack="p", distribution=None, duration_ms=1.0, outcome="success")
    for _ in range(200):
        log.write(record)
    log.close()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["calls.jsonl", "calls.jsonl.1", "calls.jsonl.2", "calls.jsonl.lock"]
    assert all(p.stat().st_size <= 2_000 for p in tmp_path.iterdir())
    assert all(json.loads(line)["tool"] == "t" for line in path.read_text().splitlines())


@pytest.mark.slow
def test_access_log_names_requests_never_the_token(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    board = json.dumps(str(tmp_path / "board"))
    front = f"tracker:\n  kind: local\n  path: {board}\nserver:\n  access_log: true\n  token: $LORENZ_MCP_TOKEN\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {**os.environ, "LORENZ_LOAD_PLUGINS": "lorenz-local", "LORENZ_MCP_TOKEN": "tok-secret-12345"}
    command = [sys.executable, "-m", "lorenz", "serve", "--port", "0"]
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    url = ""
    for line in process.stderr:
        if " at http://127.0.0.1:" in line:
            url = line.rsplit(" at ", 1)[1].strip()
            break
    headers = {"Authorization": "Bearer tok-secret-12345", "Accept": "application/json, text/event-stream"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert httpx.post(url, json=body, headers={**headers, "MCP-Protocol-Version": "2025-11-25"}).status_code == 200
    assert httpx.get(url.removesuffix("/mcp") + "/healthz?token=tok-secret-12345").status_code == 200
    process.send_signal(signal.SIGTERM)
    log = process.stderr.read()
    process.wait(timeout=15)
    assert '"POST /mcp HTTP/1.1" 200' in log
    assert "GET /healthz" in log
    assert "tok-secret-12345" not in log


WRITER = """
import sys
from lorenz.calllog.record import CallRecord
from lorenz.calllog.writer import CallLog
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
log = CallLog(path, max_bytes=3_000, keep=1_000)
print("ready", flush=True)
sys.stdin.readline()
for index in range(count):
    log.write(CallRecord(ts=CallRecord.now(), tool=f"{name}-{index}", pack="p", distribution=None,
                         duration_ms=1.0, outcome="success"))
    if index % 50 == 0:
        import time; time.sleep(0.06)  # several batches, so rotations interleave
log.close()
"""


@pytest.mark.slow
def test_processes_sharing_one_log_lose_and_tear_no_line(tmp_path: Path) -> None:
    """Three processes (as the workers of `lorenz serve --workers`) writing one rotating log: every
    line of each is in exactly one of the files, whole, and no file outgrows the cap."""
    import subprocess
    import sys

    path = tmp_path / "calls.jsonl"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"w{n}", "400"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(3)
    ]
    for writer in writers:
        assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    for writer in writers:
        assert writer.stdin is not None
        writer.stdin.write("go\n")
        writer.stdin.close()
    for writer in writers:
        assert writer.wait(timeout=60) == 0
    logs = [p for p in tmp_path.iterdir() if p.name.startswith("calls.jsonl") and not p.name.endswith(".lock")]
    assert len(logs) > 10  # it rotated, many times
    assert all(p.stat().st_size <= 3_000 for p in logs)
    tools = [json.loads(line)["tool"] for p in logs for line in p.read_text().splitlines()]
    assert sorted(tools) == sorted(f"w{n}-{index}" for n in range(3) for index in range(400))


def test_call_stamps_are_iso_utc_milliseconds_and_current() -> None:
    import re
    from datetime import UTC, datetime, timedelta

    from lorenz.calllog.record import CallRecord

    for _ in range(3):
        before = datetime.now(UTC) - timedelta(milliseconds=1)  # stamps are truncated to the millisecond
        stamp = CallRecord.now()
        after = datetime.now(UTC)
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp), stamp
        parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        assert before <= parsed <= after
