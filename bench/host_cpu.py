"""CPU per ``tools/call`` of the host's app alone: ASGI calls straight into ``build_app``, no HTTP
parser, no client, so what the app itself costs (and, with ``--profile``, where) is read off.

    .venv/bin/python bench/host_cpu.py [-n 3000] [--era legacy|modern] [--profile] [--cold MIB]

A one-issue local board with 20 comments in a temporary directory, ``local_read_issue`` on it,
stateless JSON responses (the embedded default), one loop turn between calls. Three rounds of
``-n`` calls after 300 warm-up ones; prints each round's CPU and wall time per call and the best
round's CPU. ``--profile`` runs
the last round under cProfile and prints the functions with the most cumulative and own time.

``--cold MIB`` writes over a buffer of that many MiB between calls and prints each round's median
wall time per call (the overwriting untimed): the call as a sequential client meets it. Between two
requests of one client the server idles and its caches are lost, so a sequential call costs about
what it costs here with 16 MiB (more than this machine's 4 MiB L2), not what it costs warm.
Compare two trees by running it with ``PYTHONPATH=<tree>/core:<tree>/plugins/local``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import inspect
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def seed(board: Path) -> None:
    (board / "WORKFLOW.md").write_text("---\ntracker:\n  kind: local\n---\n")
    env = dict(os.environ, LORENZ_LOAD_PLUGINS="lorenz-local")
    call = [sys.executable, "-m", "lorenz", "call"]
    subprocess.run([*call, "local_create_issue", '{"title": "Benchmark issue"}'], cwd=board, env=env, check=True)
    for index in range(20):
        comment = json.dumps({"issueId": "BOARD-1", "body": f"comment {index}: the benchmark reads this issue"})
        subprocess.run([*call, "local_comment", comment], cwd=board, env=env, check=True, stdout=subprocess.DEVNULL)


def request(era: str, index: int) -> tuple[list[tuple[bytes, bytes]], bytes]:
    params: dict[str, Any] = {"name": "local_read_issue", "arguments": {"issueId": "BOARD-1"}}
    headers = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json")]
    headers.append((b"accept", b"application/json, text/event-stream"))
    if era == "modern":
        params["_meta"] = MODERN_META
        headers += [(b"mcp-protocol-version", b"2026-07-28"), (b"mcp-method", b"tools/call")]
        headers.append((b"mcp-name", b"local_read_issue"))
    else:
        headers.append((b"mcp-protocol-version", b"2025-11-25"))
    body = json.dumps({"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": params}).encode()
    return [*headers, (b"content-length", str(len(body)).encode())], body


async def call(app: Any, era: str, index: int) -> None:
    from lorenz.host.scope import READ_DEADLINES

    headers, body = request(era, index)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        # As the host's own HTTP protocol says it runs (a lost connection cancels the request).
        "state": {READ_DEADLINES: True},
    }
    messages = [{"type": "http.request", "body": body, "more_body": False}]
    answered = asyncio.Event()
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    answered.set()
    reply = b"".join(message.get("body", b"") for message in sent[1:])
    assert sent[0]["status"] == 200 and b'"isError":false' in reply, reply[:300]


async def run(board: Path, era: str, n: int, profile: bool, cold_mib: int = 0) -> None:
    from lorenz.host.app import build_app
    from lorenz.host.reload.live import LiveWorkspace

    live = LiveWorkspace.open(None, cwd=board, env=dict(os.environ, LORENZ_LOAD_PLUGINS="lorenz-local"))
    # As ``lorenz serve`` builds it: WORKFLOW.md watched (no edit happens here), where the tree has that.
    watched = {"watch_workflow": True} if "watch_workflow" in inspect.signature(build_app).parameters else {}
    app = build_app(live, bind_host="127.0.0.1", **watched)
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await inbox.put({"type": "lifespan.startup"})
    lifespan = asyncio.create_task(app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, outbox.put))
    assert (await outbox.get())["type"] == "lifespan.startup.complete"
    for index in range(300):
        await call(app, era, index)
    if cold_mib:
        await run_cold(app, era, n, cold_mib)
    else:
        await run_warm(app, era, n, profile)
    await inbox.put({"type": "lifespan.shutdown"})
    await lifespan


async def run_warm(app: Any, era: str, n: int, profile: bool) -> None:
    best = float("inf")
    profiler = cProfile.Profile()
    for round_ in range(3):
        if profile and round_ == 2:
            profiler.enable()
        cpu, wall = time.process_time(), time.perf_counter()
        for index in range(n):
            await call(app, era, index)
            await asyncio.sleep(0)  # the loop's turn between requests, as a server's
        cpu, wall = (time.process_time() - cpu) / n * 1e6, (time.perf_counter() - wall) / n * 1e6
        profiler.disable()
        best = min(best, cpu)
        print(f"round {round_ + 1}: {cpu:.0f} µs CPU, {wall:.0f} µs wall per call")
    print(f"{era}: best round {best:.0f} µs CPU per call")
    if profile:
        stats = pstats.Stats(profiler)
        stats.sort_stats("cumulative").print_stats(40)
        stats.sort_stats("tottime").print_stats(25)


async def run_cold(app: Any, era: str, n: int, mib: int) -> None:
    buffer = bytearray(mib << 20)
    line = 64  # one write per cache line
    zeros = bytes(len(buffer[::line]))
    medians = []
    for round_ in range(3):
        walls = []
        for index in range(n):
            buffer[::line] = zeros
            await asyncio.sleep(0)
            start = time.perf_counter()
            await call(app, era, index)
            walls.append(time.perf_counter() - start)
        medians.append(statistics.median(walls) * 1e6)
        print(f"round {round_ + 1}: p50 {medians[-1]:.0f} µs wall per call, caches overwritten ({mib} MiB)")
    print(f"{era}: cold, median of rounds {statistics.median(medians):.0f} µs per call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=3000)
    parser.add_argument("--era", choices=["legacy", "modern"], default="legacy")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--cold", type=int, default=0, metavar="MIB", help="overwrite MIB MiB between calls")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        board = Path(tmp)
        seed(board)
        os.chdir(board)
        asyncio.run(run(board, args.era, args.n, args.profile, args.cold))


if __name__ == "__main__":
    main()
