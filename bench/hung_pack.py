"""Does a pack whose calls all hang slow the other packs down? (issue 11: bounded resources per pack)

    .venv/bin/python bench/hung_pack.py [-n 300] [--hung 40]

Runs ``lorenz serve`` (a subprocess, stateless JSON) with two packs from this file: ``hang`` (its one
tool blocks a worker thread for 120 s, through the shared ``anyio.to_thread`` pool, the way a pack
stuck on a dead socket or a FIFO would) and ``quick`` (its tool does a little work in a thread too).
It measures sequential ``quick_go`` p50/p99 idle, then again while ``--hung`` ``hang_go`` calls are
in flight, and prints the ratio (target: <= 2x).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

PLUGIN = """
import time

import anyio.to_thread

from lorenz import ToolSpec, hookimpl, run_in_thread, tool_success


class Hang:
    name = "hang"

    def tool_specs(self, settings):
        return [ToolSpec(name="hang_go", description="Block a thread.")]

    async def execute_tool(self, name, input, context):
        await anyio.to_thread.run_sync(time.sleep, 120)
        return tool_success()


class Quick:
    name = "quick"

    def tool_specs(self, settings):
        return [ToolSpec(name="quick_go", description="A little work in a thread.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"sum": await run_in_thread(sum, range(100))})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Hang())
    register(Quick())
"""

WORKFLOW = (
    "---\ntracker: {kind: local, path: ./board}\ntools:\n  hang: {}\n  quick: {}\n"
    "server:\n  tool_timeout_seconds: 600\n---\n"
)


def start(workdir: Path) -> tuple[subprocess.Popen[str], str]:
    (workdir / "bench_hung_plugin.py").write_text(PLUGIN, encoding="utf-8")
    (workdir / "WORKFLOW.md").write_text(WORKFLOW, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(workdir), "LORENZ_LOAD_PLUGINS": "lorenz-local"}
    process = subprocess.Popen(
        [sys.executable, "-m", "lorenz", "-p", "bench_hung_plugin", "serve", "--port", "0"],
        cwd=workdir,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    for line in process.stderr:
        if " at http://127.0.0.1:" in line:
            threading.Thread(target=process.stderr.read, daemon=True).start()  # keep draining
            return process, line.rsplit(" at ", 1)[1].strip()
    raise SystemExit("lorenz serve did not start")


def body(tool: str, request_id: int) -> dict[str, Any]:
    params = {"name": tool, "arguments": {}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


async def timed(url: str, n: int) -> list[float]:
    import httpx

    samples = []
    async with httpx.AsyncClient(headers=HEADERS, timeout=30) as http:
        for i in range(20 + n):
            started = time.perf_counter()
            reply = (await http.post(url, json=body("quick_go", i))).json()
            elapsed = (time.perf_counter() - started) * 1000
            assert reply["result"]["isError"] is False, reply
            if i >= 20:
                samples.append(elapsed)
    return samples


async def hang(url: str, count: int) -> list[asyncio.Task[Any]]:
    import httpx

    http = httpx.AsyncClient(headers=HEADERS, timeout=600)
    tasks = [asyncio.ensure_future(http.post(url, json=body("hang_go", i))) for i in range(count)]
    await asyncio.sleep(1.0)  # let them all reach the pack
    return tasks


def p(samples: list[float], q: float) -> float:
    return statistics.quantiles(samples, n=100)[int(q) - 1]


async def run(url: str, n: int, hung: int) -> None:
    idle = await timed(url, n)
    tasks = await hang(url, hung)
    busy = await timed(url, n)
    for task in tasks:
        task.cancel()
    idle_p50, busy_p50 = statistics.median(idle), statistics.median(busy)
    print(f"quick_go idle:            p50 {idle_p50:.2f} ms  p99 {p(idle, 99):.2f} ms")
    print(f"quick_go, {hung} hang_go calls in flight: p50 {busy_p50:.2f} ms  p99 {p(busy, 99):.2f} ms")
    print(f"ratio p50: {busy_p50 / idle_p50:.2f}x (target <= 2x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=300)
    parser.add_argument("--hung", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start(Path(tmp))
        try:
            asyncio.run(run(url, args.n, args.hung))
        finally:
            process.kill()
            process.wait()


if __name__ == "__main__":
    main()
