"""Throughput of ``tools/call`` on a local board with 1 and 2 worker processes.

    .venv/bin/python bench/workers_throughput.py [--seconds 10] [--connections 16] [--rounds 3]
        [--tool local_read_issue] [--server serve|uvicorn|uvicorn-lorenz-http]

Needs ``wrk`` (Debian: ``apt-get install wrk``): 16 keep-alive connections from one wrk thread for
10 s, every request one stateless ``tools/call`` (MCP 2025-11-25, JSON response) of the board's
``local_read_issue`` on an issue with 20 comments (``bench/wrk_tools_call.lua``: any answer that
is not a successful result counts as an error). Servers, each in the board's directory:

  serve                 ``lorenz serve --port 0 --workers N``
  uvicorn               ``uvicorn --factory lorenz.host:create_app --workers N``
  uvicorn-lorenz-http   the same with ``--http lorenz.host:ReadDeadlineProtocol``

A 2 s warm-up precedes each measured run; rounds alternate 1 and 2 workers, and the table shows
the median round (by calls/s) of each, with the resident memory of every worker process at its end.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
LUA = HERE / "wrk_tools_call.lua"


class Run(NamedTuple):
    calls_per_second: float
    requests: int
    errors: int
    p50_ms: float
    p99_ms: float
    rss_mib: list[float]
    #: How many of wrk's connections each worker held, mid-run.
    connections: list[int]


def seed_board(directory: Path) -> None:
    (directory / "WORKFLOW.md").write_text("---\ntracker:\n  kind: local\n---\n")
    env = dict(os.environ, LORENZ_LOAD_PLUGINS="lorenz-local")
    lorenz = [sys.executable, "-m", "lorenz", "call"]
    subprocess.run(
        [*lorenz, "local_create_issue", '{"title": "Benchmark issue"}'],
        cwd=directory,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    for index in range(20):
        arguments = f'{{"issueId": "BOARD-1", "body": "comment {index}: the benchmark reads this issue"}}'
        subprocess.run(
            [*lorenz, "local_comment", arguments], cwd=directory, env=env, check=True, stdout=subprocess.DEVNULL
        )


def start(kind: str, workers: int, directory: Path) -> tuple[subprocess.Popen[str], str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-local"
    if kind == "serve":
        command = [sys.executable, "-m", "lorenz", "serve", "--port", "0", "--workers", str(workers)]
        ready = re.compile(r" at (http://127\.0\.0\.1:\d+)/mcp")
    else:
        command = [
            sys.executable,
            "-m",
            "uvicorn",
            "--factory",
            "lorenz.host:create_app",
            "--port",
            "0",
            "--workers",
            str(workers),
            "--log-level",
            "info",
            "--no-access-log",
        ]
        if kind == "uvicorn-lorenz-http":
            command += ["--http", "lorenz.host:ReadDeadlineProtocol"]
        ready = re.compile(r"Uvicorn running on (http://127\.0\.0\.1:\d+)")
    process = subprocess.Popen(
        command, cwd=directory, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    url = None
    started = 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        if found := ready.search(line):
            url = found.group(1)
            if kind == "serve":
                break
        started += "Application startup complete" in line
        if url and started >= workers:
            break
    if url is None:
        process.kill()
        msg = f"{kind} did not start"
        raise RuntimeError(msg)
    # Keep reading stderr, so a chatty server never blocks on a full pipe.
    subprocess.Popen(["cat"], stdin=process.stderr, stdout=subprocess.DEVNULL)
    return process, url + "/mcp"


def worker_pids(process: subprocess.Popen[str]) -> list[int]:
    """The processes that serve: the spawned workers, or the server itself when it has none."""
    spawned = [pid for pid in _children(process.pid) if "spawn_main" in _cmdline(pid)]
    return [pid for pid in spawned if "resource_tracker" not in _cmdline(pid)] or [process.pid]


def _children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _cmdline(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def wrk(
    url: str, seconds: int, connections: int, tool: str, arguments: str, **script_env: str
) -> tuple[int, int, float, float]:
    """Requests, errors, p50 and p99 ms of one wrk run (``script_env``: more settings for the Lua script)."""
    env = dict(os.environ, WRK_TOOL=tool, WRK_ARGS=arguments, **script_env)
    command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "-s", str(LUA), url]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    found = re.search(r"lorenz-bench: requests=(\d+) bad=(\d+) p50_us=(\d+) p99_us=(\d+)", out)
    if found is None:
        msg = f"unexpected wrk output:\n{out}"
        raise RuntimeError(msg)
    requests, bad, p50, p99 = (int(value) for value in found.groups())
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = bad + (sum(int(value) for value in socket_errors.groups()) if socket_errors else 0)
    return requests, errors, p50 / 1000, p99 / 1000


def connections_per_process(port: str) -> list[int]:
    """The established connections on ``port``, counted by the process holding each."""
    out = subprocess.run(
        ["ss", "-Htnp", "state", "established", f"( sport = :{port} )"], capture_output=True, text=True
    ).stdout
    return sorted(Counter(re.findall(r"pid=(\d+)", out)).values(), reverse=True)


def measure(kind: str, workers: int, directory: Path, args: argparse.Namespace) -> Run:
    process, url = start(kind, workers, directory)
    try:
        wrk(url, 2, args.connections, args.tool, args.arguments)  # warm-up
        counted: list[list[int]] = []
        port = url.rsplit(":", 1)[1].split("/")[0]
        threading.Timer(args.seconds / 2, lambda: counted.append(connections_per_process(port))).start()
        requests, errors, p50, p99 = wrk(url, args.seconds, args.connections, args.tool, args.arguments)
        rss = [rss_mib(pid) for pid in worker_pids(process)]
    finally:
        process.terminate()
        process.wait(timeout=30)
    return Run(requests / args.seconds, requests, errors, p50, p99, rss, counted[0] if counted else [])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tool", default="local_read_issue")
    parser.add_argument("--arguments", default='{"issueId": "BOARD-1"}')
    parser.add_argument("--server", choices=["serve", "uvicorn", "uvicorn-lorenz-http"], default="serve")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (Debian: apt-get install wrk)")
    runs: dict[int, list[Run]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        seed_board(directory)
        for _ in range(args.rounds):
            for workers in (1, 2):
                run = measure(args.server, workers, directory, args)
                runs[workers].append(run)
                print(
                    f"  {workers} worker(s): {run.calls_per_second:.0f} calls/s, {run.errors} errors, "
                    f"p50 {run.p50_ms:.1f} ms, p99 {run.p99_ms:.1f} ms, RSS {run.rss_mib}, "
                    f"connections {run.connections}",
                    file=sys.stderr,
                )
    print(
        f"\n{args.server}: {args.tool}, {args.connections} keep-alive connections (wrk -t1), {args.seconds:g} s, "
        f"median of {args.rounds} rounds\n"
    )
    print("| workers | calls/s | errors | p50 ms | p99 ms | RSS per worker (MiB) | connections per worker |")
    print("|---|---|---|---|---|---|---|")
    medians = {}
    for workers, measured in runs.items():
        run = sorted(measured, key=lambda r: r.calls_per_second)[len(measured) // 2]
        medians[workers] = run.calls_per_second
        errors = sum(r.errors for r in measured)
        rss = ", ".join(f"{value:.0f}" for value in run.rss_mib)
        print(
            f"| {workers} | {run.calls_per_second:.0f} | {errors} (all rounds) | {run.p50_ms:.1f} | "
            f"{run.p99_ms:.1f} | {rss} | {', '.join(map(str, run.connections))} |"
        )
    spread = {workers: [round(r.calls_per_second) for r in measured] for workers, measured in runs.items()}
    print(
        f"\n2 workers / 1 worker: {medians[2] / medians[1]:.2f}x (calls/s per round: {spread}; "
        f"median ratio {statistics.median(b / a for a, b in zip(spread[1], spread[2], strict=True)):.2f}x)"
    )


if __name__ == "__main__":
    main()
