"""Benchmark the local board: `local_query` cold vs warm on generated boards, hostile queries at the
DSL's bounds, and multi-process writes.

Usage: .venv/bin/python bench/local_query.py [--sizes 1000,10000] [--runs 30] [--dir /tmp/x]
       [--sections queries,parts,hostile,writes]

* cold = a process's first query: the parse cache and snapshots emptied and the board's persisted
  index removed before each query (files are in the OS page cache: this is the cost of reading +
  parsing every issue file, and writing the index, not of the disk);
* indexed = the same, with the persisted index left in place (what every later process's first
  query costs: one ``lstat`` per file, the index read);
* warm = the same query again on an unchanged board (answered from the board snapshot: one
  ``stat`` of the directory, no file touched);
* after a write = a comment is appended to one issue (untimed) before each query, so the query
  stats every file and re-parses that one (what a query costs while the board is being written,
  and at least every ``SNAPSHOT_MAX_AGE`` seconds on a quiet board);
* hostile = queries at each bound of the query DSL and just past it, each body up to ~1 MiB (the
  host's body cap), on a warm 10,000-issue board: the pack's time to its result or error (process
  CPU time, which other load on the machine barely changes, and wall time), and the host's own CPU
  on the same body before the pack runs (``json.loads``, the unsafe-argument refusal and the
  inputSchema check; a body the host refuses is marked so);
* parts = what a first query's pieces cost on a 10,000-issue board (process CPU): listing the
  directory, one ``lstat`` per file (through ``scandir`` and by path), reading every file, the
  whole cold query, and the persisted index's read, check and write;
* writes/s = 4 processes x 250 `local_comment` on one issue, all started together (each comment
  is a locked read-modify-write with two fsyncs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lorenz.query import MAX_CONTAINS, MAX_FILTER_NODES, MAX_IN_VALUES, MAX_SELECT_FIELDS, MAX_STRING_LENGTH
from lorenz.settings.model import Settings, TrackerSettings
from lorenz.toolcall.schemas import compile_schema, validate_arguments
from lorenz.toolcall.wire import refuse_unsafe_arguments
from lorenz_local.board import BoardDocument, render_document
from lorenz_local.cache import CACHE, SNAPSHOTS
from lorenz_local.pack import local_tool_specs
from lorenz_local.reads import RACY_WINDOW_NS
from lorenz_local.store import BoardStore
from lorenz_local.tools import run_local_tool

#: Seconds until a board written just now is past the racy window (its snapshot trusted again).
SETTLE = RACY_WINDOW_NS / 1e9 + 0.1
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
    return p50s(fn, runs, before)[0]


def p50s(fn: Callable[[], object], runs: int, before: Callable[[], None] | None = None) -> tuple[float, float]:
    """Median wall and process CPU milliseconds of ``fn``."""
    times, cpu = [], []
    for _ in range(runs):
        if before is not None:
            before()
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(times) * 1000, statistics.median(cpu) * 1000


def bench_queries(root: Path, sizes: list[int], runs: int) -> None:
    print(
        "| board | query | cold p50 (ms) | cold CPU p50 (ms) | indexed p50 (ms) | indexed CPU p50 (ms) "
        "| after a write p50 (ms) | warm p50 (ms) |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        board = root / f"board-{size}"
        generate(board, size)
        time.sleep(SETTLE)  # let the directory settle past the racy window, as a quiet board would
        settings = Settings(tracker=TrackerSettings(kind="local", options={"path": str(board)}))
        writer = BoardStore(board)
        for label, args in QUERIES.items():

            def query(args: dict[str, Any] = args, settings: Settings = settings) -> None:
                result = run_local_tool("local_query", args, settings)
                assert result.success, result.error

            def drop_all() -> None:
                CACHE.clear()
                SNAPSHOTS.clear()

            def drop_all_and_index() -> None:
                drop_all()
                shutil.rmtree(os.environ["XDG_CACHE_HOME"], ignore_errors=True)

            def write_one(store: BoardStore = writer) -> None:
                store.append_comment("BOARD-1", "bench")

            cold, cold_cpu = p50s(query, max(3, runs // 6), before=drop_all_and_index)
            indexed, indexed_cpu = p50s(query, max(3, runs // 2), before=drop_all)
            query()
            after_write = p50(query, runs, before=write_one)
            time.sleep(SETTLE)  # past the racy window again
            query()
            warm = p50(query, runs)
            print(
                f"| {size:,} | {label} | {cold:.1f} | {cold_cpu:.1f} | {indexed:.1f} | {indexed_cpu:.1f} "
                f"| {after_write:.1f} | {warm:.2f} |",
                flush=True,
            )


def bench_parts(root: Path, runs: int, size: int = 10_000) -> None:
    from lorenz_local import files, index

    board = root / f"board-{size}"
    if not board.exists():
        generate(board, size)
        time.sleep(SETTLE)
    directory = str(board)
    paths = [entry.path for entry in os.scandir(directory) if entry.name.endswith(".md")]
    store = BoardStore(board)
    CACHE.clear()
    SNAPSHOTS.clear()
    store.records()  # writes the index
    device = os.stat(directory).st_dev
    loaded = index.load(directory, store.id_prefix, device)
    assert loaded is not None, "no index was written"

    def cold() -> None:
        CACHE.clear()
        SNAPSHOTS.clear()
        shutil.rmtree(os.environ["XDG_CACHE_HOME"], ignore_errors=True)
        store.records()

    parts: dict[str, Callable[[], object]] = {
        "scandir: names and d_type": lambda: [entry.is_file(follow_symlinks=False) for entry in os.scandir(directory)],
        "scandir + DirEntry.stat() (an lstat each)": lambda: [
            entry.stat(follow_symlinks=False) for entry in os.scandir(directory)
        ],
        "os.lstat by path": lambda: [os.lstat(path) for path in paths],
        "reading every file (open O_NOFOLLOW, fstat, read, close)": lambda: [
            files.read_regular(path) for path in paths
        ],
        "records(), nothing cached, no index (reads, parses, writes the index)": cold,
        "the index: read and checked (index.load)": lambda: index.load(directory, store.id_prefix, device),
        "the index: written (index.store)": lambda: index.store(directory, store.id_prefix, device, loaded[0]),
    }
    print(f"\nWhat a first query's parts cost on {size:,} issues ({runs} runs, process CPU):\n")
    print("| part | CPU p50 (ms) | per file (µs) |")
    print("|---|---:|---:|")
    for label, part in parts.items():
        _, cpu = p50s(part, runs)
        print(f"| {label} | {cpu:.1f} | {cpu * 1000 / size:.1f} |", flush=True)


MIB = 1 << 20
FIELDS = ("id", "identifier", "title", "description", "state", "stateType", "labels", "createdAt", "updatedAt")
ALL_KEYS = [{"field": name, "dir": "desc" if n % 2 else "asc"} for n, name in enumerate(FIELDS[:8])]


def pred(name: str, op: str, value: Any, **extra: Any) -> dict[str, Any]:
    return {"field": name, "op": op, "value": value, **extra}


def fill(make: Callable[[int], dict[str, Any]], count: int = MAX_FILTER_NODES - 1) -> dict[str, Any]:
    """{"or": [make(0), make(1), ...]}: ``count`` predicates, fewer if the body would pass 1 MiB."""
    while len(json.dumps({"where": {"or": [make(i) for i in range(count)]}})) > MIB:
        count -= 1
    return {"or": [make(i) for i in range(count)]}


def mixed(i: int) -> dict[str, Any]:
    """Every op kind over every field, none short-circuiting the `or` (each matches few or none)."""
    name = FIELDS[i % len(FIELDS)]
    kind = (i // len(FIELDS)) % 5
    if kind == 0:
        return pred(name, "eq", f"x{i}" * 8)
    if kind == 1:
        return pred(name, "in", [f"v{i}-{k}" for k in range(40)])
    if kind == 2:
        return pred(name, "gt", "\uffff" * 4)
    if kind == 3:
        return pred(name, "lt", -i)
    return pred(name, "exists", False)


CONTAINS = [pred(f, "contains", f"zq{i}", ci=bool(i % 2)) for i, f in enumerate(("title", "description") * 8)]
assert len(CONTAINS) == MAX_CONTAINS
LONG = "q" * MAX_STRING_LENGTH
HOSTILE: dict[str, dict[str, Any]] = {
    "in: lists of 1000 ints, as many as fit in 1 MiB": {
        "where": fill(lambda i: pred("title", "in", list(range(i * 1000, i * 1000 + MAX_IN_VALUES))))
    },
    "nin: 1001 values (over)": {"where": pred("title", "nin", list(range(MAX_IN_VALUES + 1)))},
    "nin: 150,000 values (issue)": {"where": pred("title", "nin", [0] * 150_000)},
    "contains: 16 short needles, ci and not, on title/description": {"where": {"or": CONTAINS}},
    "contains: 16 x 4096-char needles": {"where": {"or": [{**c, "value": LONG} for c in CONTAINS]}},
    "contains: 17 (over)": {"where": {"or": [*CONTAINS, CONTAINS[0]]}},
    "strings: 199 eq 4096 chars": {"where": fill(lambda i: pred("description", "eq", LONG[:-4] + f"{i:04}"))},
    "strings: 4097 chars (over)": {"where": pred("title", "eq", LONG + "q")},
    "strings: a 1 MiB string (issue)": {"where": pred("title", "contains", "q" * MIB)},
    "199 ordering predicates on title": {"where": fill(lambda i: pred("title", "gte", f"Issue number {i}9"))},
    "199 mixed predicates over every field": {"where": fill(mixed)},
    "order_by: 8 keys, limit 1000": {"order_by": ALL_KEYS, "limit": 1000},
    "order_by: 9 keys (over)": {"order_by": [*ALL_KEYS, {"field": "updatedAt"}]},
    "order_by: 10,000 keys (issue)": {"order_by": [{"field": "title"}] * 10_000},
    "select: 64 fields, limit 1000": {"select": [*FIELDS, *(f"f{n}" for n in range(55))], "limit": 1000},
    "select: 64 fields with comments, limit 1000": {
        "select": [*FIELDS, "comments", *(f"f{n}" for n in range(54))],
        "limit": 1000,
    },
    "select: 65 fields (over)": {"select": [f"f{n}" for n in range(MAX_SELECT_FIELDS + 1)]},
    "select: 100,000 fields (issue)": {"select": ["title"] * 100_000},
    "everything at once: 16 contains + 183 mixed, 8 keys, 64 fields, limit 1000": {
        "where": {"or": [*CONTAINS, *(mixed(i) for i in range(MAX_FILTER_NODES - 1 - MAX_CONTAINS))]},
        "order_by": ALL_KEYS,
        "select": [*FIELDS, *(f"f{n}" for n in range(55))],
        "limit": 1000,
    },
}


def bench_hostile(root: Path, runs: int, size: int = 10_000) -> None:
    board = root / f"board-{size}"
    if not board.exists():
        generate(board, size)
        time.sleep(SETTLE)
    settings = Settings(tracker=TrackerSettings(kind="local", options={"path": str(board)}))
    (spec,) = (tool for tool in local_tool_specs() if tool.name == "local_query")
    validator = compile_schema(spec.input_schema)
    run_local_tool("local_query", {}, settings)  # warm the board snapshot
    print(f"\nHostile queries on a warm {size:,}-issue board ({runs} runs):\n")
    print("| query | body | pack: result or error | CPU p50 (ms) | wall p50 (ms) | wall max (ms) | host CPU (ms) |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for label, args in HOSTILE.items():
        body = json.dumps(args)
        outcome = run_local_tool("local_query", args, settings)
        answer = f"{outcome.result['total']:,} rows" if outcome.success else f"`{outcome.error}`"
        wall, cpu = [], []
        for _ in range(runs):
            started, started_cpu = time.perf_counter(), time.process_time()
            run_local_tool("local_query", args, settings)
            cpu.append((time.process_time() - started_cpu) * 1000)
            wall.append((time.perf_counter() - started) * 1000)
        # The host's own work on the body before the pack runs, as `tools/call` does it: parse,
        # refuse unsafe arguments (too many values, lone surrogates), then the inputSchema check.
        started = time.process_time()
        parsed = json.loads(body)
        refused = refuse_unsafe_arguments("local_query", parsed)
        if refused is None:
            assert validate_arguments("local_query", parsed, validator) is None
        host = (time.process_time() - started) * 1000
        if refused is not None:
            answer = f"host: `{refused.error}`"
        print(
            f"| {label} | {len(body) / 1024:,.0f} KiB | {answer} | {statistics.median(cpu):.1f} | "
            f"{statistics.median(wall):.1f} | {max(wall):.1f} | {host:.0f} |",
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
    parser.add_argument("--sections", default="queries,parts,hostile,writes")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    sections = set(args.sections.split(","))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}\n")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "cache")  # the boards' indexes: never the user's
        if "queries" in sections:
            bench_queries(Path(tmp), sizes, args.runs)
        if "parts" in sections:
            bench_parts(Path(tmp), max(5, args.runs // 2))
        if "hostile" in sections:
            bench_hostile(Path(tmp), max(5, args.runs // 3))
        if "writes" in sections:
            bench_writes(Path(tmp))


if __name__ == "__main__":
    main()
