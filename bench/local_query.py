"""Benchmark the local board: `local_query` cold vs warm on generated boards, and multi-process writes.

Usage: .venv/bin/python bench/local_query.py [--sizes 1000,10000] [--runs 30] [--dir /tmp/x]

* cold = the parse cache emptied before each query (files are in the OS page cache: this is the
  cost of reading + parsing every issue file, not of the disk);
* warm = the same query again on an unchanged board (answered from the board snapshot: one
  ``stat`` of the directory, no file touched);
* after a write = a comment is appended to one issue (untimed) before each query, so the query
  stats every file and re-parses that one (what a query costs while the board is being written,
  and at least every ``SNAPSHOT_MAX_AGE`` seconds on a quiet board);
* writes/s = 4 processes x 250 `local_comment` on one issue, all started together (each comment
  is a locked read-modify-write with two fsyncs).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lorenz.settings.model import Settings, TrackerSettings
from lorenz_local.board import BoardDocument, render_document
from lorenz_local.cache import CACHE, SNAPSHOTS
from lorenz_local.store import BoardStore
from lorenz_local.tools import run_local_tool

STATUSES = ("Todo", "In Progress", "Done", "Backlog", "Reviewing")
LABELS = ("backend", "frontend", "bug", "infra", "docs")
QUERIES: dict[str, dict[str, Any]] = {
    "default (no filter, first 100)": {},
    "where state=Todo, order_by title desc": {
        "where": {"field": "state", "op": "eq", "value": "Todo"},
        "order_by": [{"field": "title", "dir": "desc"}],
        "select": ["id", "title"],
    },
}


def generate(board: Path, count: int) -> None:
    board.mkdir(parents=True, exist_ok=True)
    for n in range(1, count + 1):
        document = BoardDocument(
            status=STATUSES[n % len(STATUSES)],
            labels=(LABELS[n % len(LABELS)], LABELS[(n * 7) % len(LABELS)]),
            title=f"Issue number {n}: fix the {LABELS[n % len(LABELS)]} thing",
            description=f"Steps to reproduce issue {n}.\n\n1. open the app\n2. it crashes\n" * 3,
            comments="\n".join(f"- 2026-05-29T10:00:0{i}.000Z agent: note {i} on {n}" for i in range(n % 4)),
        )
        (board / f"BOARD-{n}.md").write_text(render_document(document), encoding="utf-8")


def p50(fn: Callable[[], object], runs: int, before: Callable[[], None] | None = None) -> float:
    times = []
    for _ in range(runs):
        if before is not None:
            before()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def bench_queries(root: Path, sizes: list[int], runs: int) -> None:
    print("| board | query | cold p50 (ms) | after a write p50 (ms) | warm p50 (ms) | speed-up cold/warm |")
    print("|---:|---|---:|---:|---:|---:|")
    for size in sizes:
        board = root / f"board-{size}"
        generate(board, size)
        time.sleep(1.1)  # let the directory settle past the racy window, as a quiet board would
        settings = Settings(tracker=TrackerSettings(kind="local", options={"path": str(board)}))
        writer = BoardStore(board)
        for label, args in QUERIES.items():

            def query(args: dict[str, Any] = args, settings: Settings = settings) -> None:
                result = run_local_tool("local_query", args, settings)
                assert result.success, result.error

            def drop_all() -> None:
                CACHE.clear()
                SNAPSHOTS.clear()

            def write_one(store: BoardStore = writer) -> None:
                store.append_comment("BOARD-1", "bench")

            cold = p50(query, max(3, runs // 6), before=drop_all)
            query()
            after_write = p50(query, runs, before=write_one)
            time.sleep(1.1)  # past the racy window again
            query()
            warm = p50(query, runs)
            print(
                f"| {size:,} | {label} | {cold:.1f} | {after_write:.1f} | {warm:.1f} | {cold / warm:.0f}x |",
                flush=True,
            )


COMMENTER = textwrap.dedent(
    """
    import sys
    from lorenz_local.store import BoardStore
    store = BoardStore(sys.argv[1])
    print("ready", flush=True)
    sys.stdin.readline()
    for index in range(int(sys.argv[3])):
        store.append_comment("BOARD-1", f"w{sys.argv[2]}-{index}")
    """
)


def bench_writes(root: Path, processes: int = 4, per_process: int = 250) -> None:
    board = root / "writes"
    store = BoardStore(board)
    store.create("Shared")
    workers = []
    for worker in range(processes):
        process = subprocess.Popen(
            [sys.executable, "-c", COMMENTER, str(board), str(worker), str(per_process)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        workers.append(process)
    start = time.perf_counter()
    for process in workers:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    for process in workers:
        process.communicate(timeout=600)
    elapsed = time.perf_counter() - start
    total = processes * per_process
    found = len(store.read_content("BOARD-1")["comments"])
    assert found == total, f"lost comments: {found} != {total}"
    print(
        f"\n{processes} processes x {per_process} local_comment: {total} comments in {elapsed:.2f} s "
        f"= {total / elapsed:.0f} writes/s (all {found} present)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--dir", default=None, help="where to generate boards (default: a temp dir)")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs\n")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        bench_queries(Path(tmp), sizes, args.runs)
        bench_writes(Path(tmp))


if __name__ == "__main__":
    main()
