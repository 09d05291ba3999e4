"""The kernel's reports of WORKFLOW.md changes standing in for a ``stat`` per request (Linux)."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

import lorenz.host.reload.live as reload
import lorenz.host.reload.workflow_watch as workflow_watch
from lorenz.host import serve_in_thread
from lorenz.host.reload.workflow_watch import WorkflowWatch
from lorenz.testing import ServedWorkflow

pytestmark = [pytest.mark.anyio, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")]

WORKFLOW = "---\ntracker:\n  kind: local\ntools:\n  local:\n    idPrefix: {prefix}\n---\n"
HEADERS = {
    "accept": "application/json, text/event-stream",
    "content-type": "application/json",
    "mcp-protocol-version": "2025-11-25",
}


async def turns(count: int = 5) -> None:
    """Let the loop read what the kernel reported."""
    for _ in range(count):
        await asyncio.sleep(0)


@pytest.fixture
def workflow(tmp_path: Path) -> Path:
    path = tmp_path / "WORKFLOW.md"
    path.write_text(WORKFLOW.format(prefix="A"))
    return path


def started(path: Path) -> WorkflowWatch:
    watch = WorkflowWatch.start(path, asyncio.get_running_loop())
    assert watch is not None, "a local filesystem on Linux is watched"
    return watch


async def test_a_change_to_the_file_is_news_until_a_look(workflow: Path) -> None:
    watch = started(workflow)
    try:
        assert watch.vouches()
        (workflow.parent / "notes.txt").write_text("another file in the directory")
        await turns()
        assert watch.vouches()
        workflow.write_text(WORKFLOW.format(prefix="B"))  # noqa: ASYNC240 (the edit under test, on the loop thread)
        await turns()
        assert not watch.vouches()
        watch.looked()
        assert watch.vouches()
        replacement = workflow.with_name("WORKFLOW.md.tmp")
        replacement.write_text(WORKFLOW.format(prefix="C"))
        os.replace(replacement, workflow)
        await turns()
        assert not watch.vouches()
    finally:
        watch.close()
    watch.looked()
    assert not watch.vouches()


async def test_only_the_loop_reading_the_reports_is_vouched_for(workflow: Path) -> None:
    watch = started(workflow)
    try:
        elsewhere: list[bool] = []
        thread = threading.Thread(target=lambda: elsewhere.append(watch.vouches()))
        thread.start()
        thread.join()
        assert elsewhere == [False]
        assert watch.vouches()
    finally:
        watch.close()


async def test_a_look_from_another_thread_does_not_clear_a_report(workflow: Path) -> None:
    watch = started(workflow)
    try:
        workflow.write_text(WORKFLOW.format(prefix="B"))  # noqa: ASYNC240 (the edit under test)
        await turns()
        thread = threading.Thread(target=watch.looked)  # its stat may have come before the edit
        thread.start()
        thread.join()
        assert not watch.vouches()
        watch.looked()
        assert watch.vouches()
    finally:
        watch.close()


async def test_at_least_one_look_a_second(workflow: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workflow_watch, "LOOK_ANYWAY_SECONDS", 0.05)
    watch = started(workflow)
    try:
        await asyncio.sleep(0.1)
        assert not watch.vouches()
        watch.looked()
        assert watch.vouches()
    finally:
        watch.close()


async def test_a_watch_the_kernel_drops_vouches_no_more(workflow: Path, tmp_path: Path) -> None:
    watch = started(workflow)
    try:
        tmp_path.rename(tmp_path.with_name(tmp_path.name + "-moved"))  # noqa: ASYNC240
        await turns()
        watch.looked()
        assert not watch.vouches()
    finally:
        watch.close()


async def test_a_file_turned_into_a_symbolic_link_is_looked_at_every_time(workflow: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "WORKFLOW.md"
    target.parent.mkdir()
    target.write_text(WORKFLOW.format(prefix="B"))
    watch = started(workflow)
    try:
        workflow.unlink()  # noqa: ASYNC240
        workflow.symlink_to(target)  # noqa: ASYNC240
        await turns()
        watch.looked()
        assert not watch.vouches()  # its target's edits are reported to no one
    finally:
        watch.close()


async def test_not_watched_where_reports_cannot_stand_in_for_a_look(
    workflow: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = asyncio.get_running_loop()
    linked = tmp_path / "current"
    linked.symlink_to(tmp_path, target_is_directory=True)
    assert WorkflowWatch.start(linked / "WORKFLOW.md", loop) is None  # `current -> v2` can swap it
    link = tmp_path / "linked.md"
    link.symlink_to(workflow)
    assert WorkflowWatch.start(link, loop) is None
    assert WorkflowWatch.start(tmp_path / "missing" / "WORKFLOW.md", loop) is None
    monkeypatch.setattr(workflow_watch, "_filesystem", lambda directory: 0x6969)  # NFS
    assert WorkflowWatch.start(workflow, loop) is None


def test_every_edit_is_served_to_the_next_request(workflow: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a real server, each edit (in place, or an atomic replace) is seen by the request sent
    right after it, and the requests between edits do not stat the file."""
    looks = 0
    signature = reload.file_signature

    def counted(path: Path | None) -> workflow_watch.Signature | None:
        nonlocal looks
        looks += 1
        return signature(path)

    monkeypatch.setattr(reload, "file_signature", counted)
    with serve_in_thread(cwd=workflow.parent, env={"LORENZ_LOAD_PLUGINS": "lorenz-local"}) as server:
        assert server.live.kernel_watched
        with httpx.Client(headers=HEADERS) as http:

            def created_id(index: int) -> str:
                call = {"name": "local_create_issue", "arguments": {"title": "x"}}
                reply = http.post(
                    server.url, json={"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": call}
                )
                identifier: str = reply.json()["result"]["structuredContent"]["issue"]["id"]
                return identifier

            stale = []
            for index in range(60):
                prefix = f"P{chr(ord('A') + index % 26)}{chr(ord('A') + index // 26)}"
                if index % 2:
                    replacement = workflow.with_name("WORKFLOW.md.tmp")
                    replacement.write_text(WORKFLOW.format(prefix=prefix))
                    os.replace(replacement, workflow)
                else:  # in place, its mtime moved so that the edit shows within one clock tick
                    before = workflow.stat().st_mtime_ns
                    workflow.write_text(WORKFLOW.format(prefix=prefix))
                    os.utime(workflow, ns=(before + 10**9, before + 10**9))
                identifier = created_id(index)
                if not re.fullmatch(rf"{prefix}-?\d+", identifier):
                    stale.append((prefix, identifier))
            assert stale == []
            looks = 0
            for index in range(50):
                created_id(100 + index)
            assert looks <= 3, "between edits, a request only stats the file once a second"


#: Rewrites WORKFLOW.md in place (truncate, write) with the token read from each stdin line, then
#: says ``done`` once the file is closed: an editor in a process of its own.
EDITOR = """
import sys
path = sys.argv[1]
for line in sys.stdin:
    with open(path, "w") as file:
        file.write(sys.argv[2].format(token=line.strip()))
    print("done", flush=True)
"""
TOKEN_WORKFLOW = "---\ntracker:\n  kind: local\nserver:\n  token: {token}\n---\n"
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def token(index: int) -> str:
    return f"tok-{index:04d}-rotated-by-an-in-place-edit"


@pytest.mark.slow
def test_a_rotated_token_is_refused_to_every_request_sent_after_the_edit(tmp_path: Path) -> None:
    """`lorenz serve` under load from several clients while another process rotates `server.token`
    by editing WORKFLOW.md in place: no request started after an edit completed is let in with the
    revoked token, and the new one works from then on."""

    async def watchable() -> bool:
        watch = WorkflowWatch.start(tmp_path / "WORKFLOW.md", asyncio.get_running_loop())
        if watch is not None:
            watch.close()
        return watch is not None

    assert asyncio.run(watchable()), "the server watches this directory: the case under test"
    (tmp_path / "WORKFLOW.md").write_text(TOKEN_WORKFLOW.format(token=token(0)))
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    server = ServedWorkflow(tmp_path, dict(env, LORENZ_LOAD_PLUGINS="lorenz-local"))
    editor = subprocess.Popen(
        [sys.executable, "-c", EDITOR, str(tmp_path / "WORKFLOW.md"), TOKEN_WORKFLOW],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    # rotations[i]: (when the edit to token(i) began, when it was complete), test-process clock.
    rotations: list[tuple[float, float]] = [(0.0, 0.0)]
    # (sent at, answered at, token index, HTTP status) of every request.
    answers: list[tuple[float, float, int, int]] = []
    stop = threading.Event()

    def client() -> None:
        with httpx.Client(headers=HEADERS, timeout=10) as http:
            count = 0
            while not stop.is_set():
                count += 1
                sent = time.monotonic()
                current = len(rotations) - 1  # the newest edit complete before `sent`... or after
                if rotations[current][1] > sent:
                    continue
                index = current - count % 2  # every other request with the token just revoked
                if index < 0:
                    continue
                auth = {"authorization": f"Bearer {token(index)}"}
                status = http.post(server.url, json=PING, headers=auth).status_code
                answers.append((sent, time.monotonic(), index, status))

    clients = [threading.Thread(target=client) for _ in range(6)]
    try:
        for thread in clients:
            thread.start()
        deadline = time.monotonic() + 10
        for index in range(1, 81):
            if time.monotonic() > deadline:
                break
            time.sleep(0.03)
            began = time.monotonic()
            assert editor.stdin is not None and editor.stdout is not None
            editor.stdin.write(token(index) + "\n")
            editor.stdin.flush()
            assert editor.stdout.readline() == "done\n"
            rotations.append((began, time.monotonic()))
        time.sleep(0.1)
    finally:
        stop.set()
        for thread in clients:
            thread.join(20)
        editor.kill()
        editor.wait()
        server.stop()
    assert len(rotations) > 10
    let_in = [
        (sent - rotations[index + 1][1], index)
        for sent, _, index, status in answers
        if index + 1 < len(rotations) and sent > rotations[index + 1][1] and status != 401
    ]
    assert let_in == [], "revoked tokens let in after the edit completed"
    refused = [
        index
        for sent, answered, index, status in answers
        if sent > rotations[index][1]
        and (index + 1 == len(rotations) or answered < rotations[index + 1][0])
        and status != 200
    ]
    assert refused == [], "the new token refused"
    assert sum(1 for _, _, index, status in answers if status == 200 and index > 0) > 10
