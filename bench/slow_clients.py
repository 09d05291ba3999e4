"""Real ``tools/call`` latency while slow clients hold connections open (``lorenz serve`` on loopback).

    .venv/bin/python bench/slow_clients.py [--headers 1000] [--bodies 1000] [-n 100] [--read-timeout 10]
        [--oversized 0] [--oversized-kib 24]

The server is ``python -m lorenz serve --port 0`` on a local board, in its own process. This process
opens ``--headers`` connections that trickle a request's headers and ``--bodies`` connections that send
complete headers and then trickle the body, one byte a second each; once all are open it makes ``-n``
sequential ``tools/call`` requests (``local_query``), each on a new connection, and reports their
status codes and p50/p99. Then it waits for the server to close the slow connections and reports
when it did (each should get ``408`` after ``--read-timeout`` seconds). ``--oversized`` connections
meanwhile send a request with ``--oversized-kib`` of headers at once, read the answer and start
again, in a loop (each should get ``431``).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "local_query", "arguments": {}}}
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def start_server(workdir: Path, read_timeout: float) -> tuple[subprocess.Popen[str], str]:
    (workdir / "WORKFLOW.md").write_text(
        f"---\ntracker:\n  kind: local\nserver:\n  read_timeout_seconds: {read_timeout}\n---\n", encoding="utf-8"
    )
    env = dict(os.environ, LORENZ_LOAD_PLUGINS="lorenz-local")
    cmd = [sys.executable, "-m", "lorenz", "serve", "--port", "0"]
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if " at http://" in line:
            return proc, line.rsplit(" at ", 1)[1].strip()
    proc.kill()
    msg = "lorenz serve did not start"
    raise RuntimeError(msg)


class Trickler:
    """One slow connection: a request's start, then one byte a second until the server closes it."""

    def __init__(self, port: int, *, body: bool) -> None:
        self.port = port
        self.body = body
        self.opened = 0.0
        self.closed: float | None = None
        self.reply = b""

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.opened = time.monotonic()
        head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nContent-Type: application/json\r\n"
        if self.body:
            head += "Accept: application/json\r\nContent-Length: 100000\r\n\r\n{"
        self.writer.write(head.encode())

    async def trickle(self) -> None:
        byte = b" " if self.body else b"X"
        try:
            while True:
                try:
                    self.reply += await asyncio.wait_for(self.reader.read(1024), timeout=1.0)
                except TimeoutError:
                    self.writer.write(byte)
                    continue
                if self.reader.at_eof():
                    break
        except OSError:
            pass
        self.closed = time.monotonic()
        self.writer.close()


def start_flooders(port: int, count: int, kib: int) -> tuple[Any, Any] | None:
    """``count`` flooding connections in a process of their own (so that they do not slow the
    measuring client's loop); set the event to stop them, and their answers come on the queue."""
    if not count:
        return None
    stop, answers = multiprocessing.Event(), multiprocessing.Queue()
    multiprocessing.Process(target=run_flooders, args=(port, count, kib, stop, answers), daemon=True).start()
    return stop, answers


def run_flooders(port: int, count: int, kib: int, stop: Any, answers: Any) -> None:
    statuses: Counter[str] = Counter()

    async def main() -> None:
        await asyncio.gather(*(flood(port, kib, statuses, stop) for _ in range(count)))

    asyncio.run(main())
    answers.put(dict(statuses))


async def flood(port: int, kib: int, statuses: Counter[str], stop: Any) -> None:
    """Send a request whose headers are ``kib`` KiB at once, read the answer, again until ``stop``."""
    request = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: %s\r\nContent-Length: 2\r\n\r\n{}" % (b"p" * kib * 1024)
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            reply = await asyncio.wait_for(reader.read(64), timeout=30)
            statuses[reply[9:12].decode() or "closed"] += 1
            writer.close()
        except (OSError, TimeoutError) as exc:
            statuses[type(exc).__name__] += 1


async def run(args: argparse.Namespace, port: int, url: str) -> None:
    slow = [Trickler(port, body=False) for _ in range(args.headers)] + [
        Trickler(port, body=True) for _ in range(args.bodies)
    ]
    start = time.monotonic()
    for index in range(0, len(slow), 100):
        await asyncio.gather(*(t.open() for t in slow[index : index + 100]))
    tasks = [asyncio.create_task(t.trickle()) for t in slow]
    await asyncio.sleep(0.5)
    print(f"{len(slow)} slow connections open after {time.monotonic() - start:.2f}s")
    flooders = start_flooders(port, args.oversized, args.oversized_kib)

    samples: list[float] = []
    statuses: Counter[int | str] = Counter()
    async with httpx.AsyncClient(headers=HEADERS, limits=httpx.Limits(max_keepalive_connections=0)) as http:
        for index in range(args.n):
            began = time.perf_counter()
            try:
                response = await http.post(url, json={**CALL, "id": index}, timeout=30)
                ok = response.status_code == 200 and response.json()["result"]["isError"] is False
                statuses[response.status_code if ok else f"{response.status_code} not ok"] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
            samples.append((time.perf_counter() - began) * 1000)
    still_open = sum(t.closed is None for t in slow)
    if flooders is not None:
        stop, answers = flooders
        stop.set()
        print(
            f"{args.oversized} connections looping {args.oversized_kib} KiB headers: answers {answers.get(timeout=60)}"
        )
    ordered = sorted(samples)
    p50, p99 = statistics.median(ordered), ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    print(f"{args.n} tools/call (new connection each): statuses {dict(statuses)}")
    print(f"  p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {ordered[-1]:.2f} ms; slow still open after: {still_open}")

    if not tasks:
        return
    _done, pending = await asyncio.wait(tasks, timeout=args.read_timeout * 2 + 5)
    for task in pending:
        task.cancel()
    held = sorted(t.closed - t.opened for t in slow if t.closed is not None)
    timed_out = sum(t.reply.startswith(b"HTTP/1.1 408") for t in slow)
    print(f"slow connections closed by the server: {len(held)} of {len(slow)}, {timed_out} with a 408")
    if held:
        print(f"  held {held[0]:.2f}s to {held[-1]:.2f}s (median {statistics.median(held):.2f}s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--headers", type=int, default=1000)
    parser.add_argument("--bodies", type=int, default=1000)
    parser.add_argument("-n", type=int, default=100)
    parser.add_argument("--read-timeout", type=float, default=10.0)
    parser.add_argument("--oversized", type=int, default=0)
    parser.add_argument("--oversized-kib", type=int, default=24)
    args = parser.parse_args()
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = start_server(Path(tmp), args.read_timeout)
        try:
            asyncio.run(run(args, int(url.rsplit(":", 1)[1].split("/")[0]), url))
        finally:
            proc.terminate()
            proc.wait(timeout=15)


if __name__ == "__main__":
    main()
