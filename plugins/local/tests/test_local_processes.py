"""Several processes on one board: no lost comment, no duplicate id, no torn file after SIGKILL, and
a persisted query index that processes querying and writing at once never make answer wrongly."""

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

from lorenz_local import index, reads
from lorenz_local.board import parse_document
from lorenz_local.cache import CACHE, SNAPSHOTS
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
STATUSER = textwrap.dedent(
    """
    import sys
    from lorenz_local.store import BoardStore
    board, worker, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    store = BoardStore(board)
    print("ready", flush=True)
    sys.stdin.readline()
    for index in range(count):
        store.update_status(f"BOARD-{int(worker) * 10 + index % 10 + 1}", f"S{worker}-{index}")
    """
)
# Every query is a process's first (from the index), and the index is rewritten whenever rows
# changed: the queriers race each other's index writes and the writers' renames.
QUERIER = textwrap.dedent(
    """
    import sys
    from lorenz_local import index, reads
    from lorenz_local.cache import CACHE, SNAPSHOTS
    from lorenz_local.store import BoardStore
    index.REWRITE_INTERVAL_NS = 0
    reads.RACY_WINDOW_NS = 50_000_000
    store = BoardStore(sys.argv[1])
    print("ready", flush=True)
    sys.stdin.readline()
    for _ in range(int(sys.argv[2])):
        CACHE.clear()
        SNAPSHOTS.clear()
        assert len(store.records()[0]) == 20
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


def test_processes_writing_and_querying_leave_an_index_that_answers_right(
    tmp_path: Path, index_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2 processes changing statuses while 2 others query from (and rewrite) the index: afterwards
    the index answers what reading every file answers, and every query saw the whole board."""
    monkeypatch.setattr(reads, "RACY_WINDOW_NS", 50_000_000)
    store = BoardStore(tmp_path)
    for n in range(20):
        store.create(f"issue {n}")
    workers = [start(STATUSER, str(tmp_path), str(worker), "150") for worker in range(2)]
    workers += [start(QUERIER, str(tmp_path), "60") for _ in range(2)]
    for process in workers:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    for process in workers:
        process.communicate(timeout=120)
        assert process.returncode == 0
    CACHE.clear()
    SNAPSHOTS.clear()
    indexed = store.records()
    assert index.load(str(tmp_path), "BOARD-", os.stat(tmp_path).st_dev) is not None
    for path in index_cache.rglob("*.json"):
        path.unlink()
    CACHE.clear()
    SNAPSHOTS.clear()
    assert indexed == store.records()
    assert [record["state"] for record in indexed[0]] == [f"S{w}-{140 + k}" for w in range(2) for k in range(10)]


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
