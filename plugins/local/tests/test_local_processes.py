"""Several processes on one board: no lost comment, no duplicate id, no torn file after SIGKILL."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from lorenz_local.board import parse_document
from lorenz_local.store import BoardStore

pytestmark = pytest.mark.slow

# Each worker prints "ready", waits for a line on stdin, then runs; so all of them start together.
COMMENTER = textwrap.dedent(
    """
    import sys
    from lorenz_local.store import BoardStore
    board, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = BoardStore(board)
    print("ready", flush=True)
    sys.stdin.readline()
    for index in range(count):
        store.append_comment("BOARD-1", f"w{worker}-{index}")
    """
)
CREATOR = textwrap.dedent(
    """
    import sys
    from lorenz_local.store import BoardStore
    board, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = BoardStore(board)
    print("ready", flush=True)
    sys.stdin.readline()
    for index in range(count):
        print(store.create(f"c{worker}-{index}").id, flush=True)
    """
)
# Big comments make every write long, so a kill often lands in the middle of one.
CRASHER = textwrap.dedent(
    """
    import sys
    from lorenz_local.store import BoardStore
    board, worker = sys.argv[1], sys.argv[2]
    store = BoardStore(board)
    print("ready", flush=True)
    index = 0
    while True:
        store.append_comment("BOARD-1", f"w{worker}-{index} " + "x" * 20000 + " end")
        if index % 5 == 0:
            store.create(f"crash {worker}-{index}", body="y" * 20000)
        index += 1
    """
)


def start(script: str, *args: str) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready"
    return process


def test_processes_never_lose_comments_or_mint_duplicate_ids(tmp_path: Path) -> None:
    """4 processes x 250 comments plus 2 creating processes: every comment once, ids unique, no temp left."""
    store = BoardStore(tmp_path)
    store.create("Shared")
    commenters = [start(COMMENTER, str(tmp_path), str(worker), "250") for worker in range(4)]
    creators = [start(CREATOR, str(tmp_path), str(worker), "25") for worker in range(2)]
    for process in commenters + creators:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    created: list[str] = []
    for process in commenters + creators:
        out, _ = process.communicate(timeout=120)
        assert process.returncode == 0
        created.extend(out.split())
    comments = store.read_content("BOARD-1")["comments"]
    bodies = [line.split(" agent: ", 1)[1] for line in comments]
    assert sorted(bodies) == sorted(f"w{w}-{i}" for w in range(4) for i in range(250))
    assert len(created) == len(set(created)) == 50
    assert sorted(created, key=lambda i: int(i[6:])) == [f"BOARD-{n}" for n in range(2, 52)]
    titles = [store.read(issue_id).title for issue_id in created]
    assert sorted(titles) == sorted(f"c{w}-{i}" for w in range(2) for i in range(25))
    assert [name for name in os.listdir(tmp_path) if name.endswith(".tmp")] == []


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_write_never_leaves_a_torn_file(tmp_path: Path) -> None:
    """SIGKILLed writers leave only complete issue files, a writable board, and temps the next create sweeps."""
    store = BoardStore(tmp_path)
    store.create("Target")
    line = re.compile(r"- \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z agent: w\d+-\d+ x{20000} end")
    kills = 0
    for round_index, delay in enumerate((0.15, 0.25, 0.35, 0.2)):
        process = start(CRASHER, str(tmp_path), str(round_index))
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        kills += process.returncode == -signal.SIGKILL
        for path in sorted(tmp_path.glob("BOARD-*.md")):
            document = parse_document(path.read_text(encoding="utf-8"), path.stem)
            if path.stem == "BOARD-1":
                assert all(line.fullmatch(comment) for comment in document.comment_lines())
            else:
                assert document.description == "y" * 20000
    assert kills == 4
    assert len(store.read_content("BOARD-1")["comments"]) > 0
    store.append_comment("BOARD-1", "after the crashes")
    assert store.read_content("BOARD-1")["comments"][-1].endswith("agent: after the crashes")
    assert store.create("still works").id == store.issue_ids()[-1]
    # The create also swept the temp files the killed writers left behind.
    assert [name for name in os.listdir(tmp_path) if name.endswith(".tmp")] == []
