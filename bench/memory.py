"""Resident memory of ``lorenz serve`` over 100,000 ``tools/call`` requests (target: no growth).

    .venv/bin/python bench/memory.py [--calls 100000] [--connections 8] [--mix] [--trace]
    .venv/bin/python bench/memory.py --worker [--calls 300] [--imports] [--rounds 3]

Seeds a local board (``bench/workers_throughput.py``'s: one issue, BOARD-1, with 20 comments), starts
``lorenz serve --port 0`` in its directory and drives it from ``--connections`` keep-alive HTTP/1.1
connections (one httpx client), every request a stateless ``tools/call`` (MCP 2025-11-25, JSON
response) of ``local_read_issue`` on BOARD-1. ``--mix`` makes every 20 requests 16 such reads, 2
``tools/list``, 1 ``local_read_issue`` with bad arguments (refused: ``isError``) and 1
``local_update_status`` of a second issue, BOARD-2, between two statuses (a write that leaves the
board the same size). Every answer is checked; one that is not what its request should get counts
as an error.

Prints the server's VmRSS and VmHWM (``/proc/<pid>/status``) after 1,000, 10,000, 30,000, 60,000
and 100,000 calls (scaled with ``--calls``), and the growth of each over the figure after 1,000.

``--worker`` is the issue-40 row instead: one ``lorenz serve`` worker after ``--calls`` (default
300) sequential reads on one connection, its VmRSS against the 60 MiB target, and what the
third-party libraries the host serves with (the MCP SDK, uvicorn, Starlette, httpx) take alone in a
fresh interpreter, each run ``--rounds`` times (median). ``--imports`` adds what each library and
Lorenz package costs on top of the SDK.

``--trace`` runs the server under ``tracemalloc`` (10 frames; the wrapper is this script's, nothing
in Lorenz changes): at each checkpoint it writes a snapshot, and the script prints the Python memory
traced at each and the 10 allocation sites that grew the most between the first and the last. The
traced totals are the figures to read then: tracing slows the server to ~50 calls/s here (``--calls
2000`` takes ~1 minute) and its RSS includes tracemalloc's own tables.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from workers_throughput import seed_board

#: Checkpoints as fractions of ``--calls`` (the first is always 1,000 calls).
CHECKPOINTS = (0.1, 0.3, 0.6, 1.0)
BASELINE = 1_000

#: The ``--trace`` server: tracemalloc on, a snapshot written to ``$LORENZ_BENCH_SNAPSHOTS/<n>`` on SIGUSR1.
TRACED_SERVER = """
import itertools, os, signal, sys, tracemalloc
tracemalloc.start(10)
counter = itertools.count()
def dump(signum, frame):
    path = os.path.join(os.environ["LORENZ_BENCH_SNAPSHOTS"], str(next(counter)))
    tracemalloc.take_snapshot().dump(path + ".tmp")
    os.replace(path + ".tmp", path)
signal.signal(signal.SIGUSR1, dump)
from lorenz.cli import main
sys.exit(main(["serve", "--port", "0"]))
"""

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def _succeeded(answer: dict[str, Any]) -> bool:
    return "result" in answer and not answer["result"].get("isError")


READ = (_call("local_read_issue", {"issueId": "BOARD-1"}), _succeeded)
LIST = (
    {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
    lambda answer: bool(answer.get("result", {}).get("tools")),
)
BAD = (_call("local_read_issue", {"issueId": 5}), lambda answer: answer.get("result", {}).get("isError") is True)
Check = Callable[[dict[str, Any]], bool]


def mix(writes: bool) -> list[tuple[dict[str, Any], Check]]:
    """The requests one connection cycles through."""
    if not writes:
        return [READ]
    updates = [
        (_call("local_update_status", {"issueId": "BOARD-2", "status": status}), _succeeded)
        for status in ("In Progress", "Todo")
    ]
    # 16 reads, 2 lists, 1 bad call, 1 write in every 20 (the two writes alternate between cycles)
    head = [READ] * 8 + [LIST] + [READ] * 8 + [LIST, BAD]
    return [*head, updates[0], *head, updates[1]]


def start_server(directory: Path, *, trace: Path | None) -> tuple[subprocess.Popen[str], str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-local"
    command = [sys.executable, "-m", "lorenz", "serve", "--port", "0"]
    if trace is not None:
        env["LORENZ_BENCH_SNAPSHOTS"] = str(trace)
        command = [sys.executable, "-c", TRACED_SERVER]
    process = subprocess.Popen(
        command, cwd=directory, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        if found := re.search(r" at (http://127\.0\.0\.1:\d+)/mcp", line):
            # Keep reading stderr, so a chatty server never blocks on a full pipe.
            subprocess.Popen(["cat"], stdin=process.stderr, stdout=subprocess.DEVNULL)
            return process, found.group(1) + "/mcp"
    process.kill()
    msg = "lorenz serve did not start"
    raise RuntimeError(msg)


def memory_kib(pid: int) -> dict[str, int]:
    """``VmRSS`` and ``VmHWM`` of ``pid``, in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        if time.monotonic() > deadline:
            msg = f"the server wrote no snapshot {path}"
            raise RuntimeError(msg)
        time.sleep(0.05)


class Driver:
    """Sends ``total`` requests over ``connections`` connections, noting memory at each checkpoint."""

    def __init__(self, url: str, pid: int, total: int, checkpoints: list[int], *, trace: Path | None) -> None:
        self.url, self.pid, self.total, self.trace = url, pid, total, trace
        self.pending = sorted(checkpoints)
        self.sent = 0
        self.done = 0
        self.errors = 0
        self.first_error: str | None = None
        self.points: list[tuple[int, dict[str, int], float]] = []
        self.started = time.perf_counter()

    async def connection(self, client: httpx.AsyncClient, requests: list[tuple[dict[str, Any], Check]]) -> None:
        for body, check in itertools.cycle(requests):
            if self.sent >= self.total:
                return
            self.sent += 1
            response = await client.post(self.url, json=body, headers=HEADERS)
            answer = response.json() if response.status_code == 200 else {}
            if not check(answer):
                self.errors += 1
                self.first_error = self.first_error or f"{body['method']}: {response.status_code} {response.text[:200]}"
            self.done += 1
            if self.pending and self.done >= self.pending[0]:
                await self.checkpoint(self.pending.pop(0))

    async def checkpoint(self, calls: int) -> None:
        self.points.append((calls, memory_kib(self.pid), time.perf_counter() - self.started))
        if self.trace is not None:
            snapshot = self.trace / str(len(self.points) - 1)
            os.kill(self.pid, signal.SIGUSR1)
            _wait_for(snapshot)  # blocking: no request goes out while the server writes it

    async def run(self, connections: int, requests: list[tuple[dict[str, Any], Check]]) -> None:
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        async with httpx.AsyncClient(limits=limits, timeout=30) as client:
            await asyncio.gather(*(self.connection(client, requests) for _ in range(connections)))


def report(driver: Driver, args: argparse.Namespace) -> None:
    kind = "mixed calls (16 reads, 2 tools/list, 1 bad call, 1 write in 20)" if args.mix else "local_read_issue"
    print(f"\nlorenz serve, {kind}, {args.connections} keep-alive connections, {driver.errors} errors")
    if driver.first_error:
        print(f"first error: {driver.first_error}")
    base = driver.points[0][1]["VmRSS"]
    print("\n| calls | VmRSS MiB | growth over 1,000 calls | VmHWM MiB | calls/s so far |")
    print("|---:|---:|---:|---:|---:|")
    for calls, memory, elapsed in driver.points:
        growth = (memory["VmRSS"] - base) / base * 100
        print(
            f"| {calls:,} | {memory['VmRSS'] / 1024:.1f} | {growth:+.1f} % | {memory['VmHWM'] / 1024:.1f} | "
            f"{calls / elapsed:.0f} |"
        )


def trace_report(trace: Path, top: int = 10) -> None:
    import tracemalloc

    paths = sorted((path for path in trace.iterdir() if path.name.isdigit()), key=lambda path: int(path.name))
    snapshots = [tracemalloc.Snapshot.load(str(path)) for path in paths]
    totals = ", ".join(f"{sum(stat.size for stat in snap.statistics('filename')) / 1024:.0f}" for snap in snapshots)
    print(f"\ntracemalloc: Python memory traced at each checkpoint (KiB): {totals}")
    print(f"the {top} allocation sites that grew most between the first checkpoint and the last:")
    for stat in snapshots[-1].compare_to(snapshots[0], "traceback")[:top]:
        print(f"  {stat.size_diff / 1024:+9.1f} KiB {stat.count_diff:+7d} blocks, allocated at:")
        for line in stat.traceback.format(limit=6):
            print(f"      {line}")


#: The issue-40 target for one worker's VmRSS after 300 requests.
WORKER_TARGET_MIB = 60
#: What the host serves with, whoever writes the tools: the floor under any worker's memory.
SDK_IMPORTS = "import mcp.server.runner, mcp.server.lowlevel, uvicorn, starlette.applications, httpx, anyio"
#: Modules whose cost on top of the SDK ``--imports`` prints.
ON_TOP = (
    "jsonschema",
    "jsonschema_rs",
    "ruamel.yaml",
    "cattrs",
    "lorenz.authoring",
    "lorenz.workspace",
    "lorenz.host.app",
    "lorenz_local.kit",
)


def import_rss_mib(code: str) -> float:
    """VmRSS of a fresh interpreter after running ``code``."""
    probe = code + "\nprint([l for l in open('/proc/self/status') if l.startswith('VmRSS')][0].split()[1])"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1]) / 1024


def worker(args: argparse.Namespace) -> None:
    import statistics

    calls = args.calls if args.calls != 100_000 else 300
    figures = []
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory() as tmp:
            directory = Path(tmp) / "board"
            directory.mkdir()
            seed_board(directory)
            process, url = start_server(directory, trace=None)
            try:
                driver = Driver(url, process.pid, calls, [calls], trace=None)
                asyncio.run(driver.run(1, [READ]))
            finally:
                process.terminate()
                process.wait(timeout=30)
            assert driver.errors == 0, driver.first_error
            figures.append(driver.points[-1][1]["VmRSS"] / 1024)
    rss = statistics.median(figures)
    floor = statistics.median(import_rss_mib(SDK_IMPORTS) for _ in range(args.rounds))
    bare = statistics.median(import_rss_mib("pass") for _ in range(args.rounds))
    print(f"\nlorenz serve (local board), VmRSS after {calls} sequential reads: {rss:.1f} MiB", end="")
    print(f" (median of {args.rounds})")
    print(f"  ÷ the {WORKER_TARGET_MIB} MiB target: {rss / WORKER_TARGET_MIB:.2f}×")
    print(f"  a bare interpreter: {bare:.1f} MiB; importing the SDK, uvicorn, Starlette, httpx alone: {floor:.1f} MiB")
    print(f"  Lorenz's share (the worker less that floor): {rss - floor:.1f} MiB")
    if args.imports:
        for module in ON_TOP:
            extra = import_rss_mib(f"{SDK_IMPORTS}\nimport {module}") - floor
            print(f"  import {module} on top of the SDK: {extra:+.1f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=100_000)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--mix", action="store_true", help="mix in tools/list, a bad call and a write")
    parser.add_argument("--trace", action="store_true", help="tracemalloc in the server (slow)")
    parser.add_argument("--worker", action="store_true", help="one worker after 300 reads against the target")
    parser.add_argument("--imports", action="store_true", help="with --worker: the cost of each import")
    parser.add_argument("--rounds", type=int, default=3, help="with --worker: servers started (median)")
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    checkpoints = sorted({BASELINE, *(max(BASELINE, round(args.calls * share)) for share in CHECKPOINTS)})
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "board"
        directory.mkdir()
        seed_board(directory)
        if args.mix:
            subprocess.run(
                [sys.executable, "-m", "lorenz", "call", "local_create_issue", '{"title": "Written by the bench"}'],
                cwd=directory,
                env=dict(os.environ, LORENZ_LOAD_PLUGINS="lorenz-local"),
                check=True,
                stdout=subprocess.DEVNULL,
            )
        trace = Path(tmp) / "snapshots" if args.trace else None
        if trace is not None:
            trace.mkdir()
        process, url = start_server(directory, trace=trace)
        try:
            driver = Driver(url, process.pid, args.calls, checkpoints, trace=trace)
            asyncio.run(driver.run(args.connections, mix(args.mix)))
        finally:
            process.terminate()
            process.wait(timeout=30)
        report(driver, args)
        if trace is not None:
            trace_report(trace)


if __name__ == "__main__":
    main()
