"""What observing every call costs: sequential ``tools/call`` p50 with nothing on, with the call log,
and with OpenTelemetry tracing (console exporter to /dev/null), servers interleaved in one run.

    .venv/bin/python bench/observability.py [-n 2000] [--rounds 3]

Targets (issue 14): call log <= 5 % on the p50, tracing <= 15 %.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORKFLOW = "---\ntracker: {{kind: local, path: {board}}}\nserver:\n  port: {port}\n{extra}---\n"
CASES = {
    "plain": ("", {}),
    "call log": ("  call_log: calls.jsonl\n", {}),
    "tracing": ("", {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "console"}),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(directory: Path, extra: str, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    board = directory / "board"
    (directory / "WORKFLOW.md").write_text(WORKFLOW.format(board=board, port=port, extra=extra), encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "lorenz", "serve"],
        cwd=directory,
        env={**os.environ, "LORENZ_LOAD_PLUGINS": "lorenz-local", **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).raise_for_status()
            return process, f"http://127.0.0.1:{port}/mcp"
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("server did not start")


async def timed(url: str, n: int) -> list[float]:
    import httpx

    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    samples = []
    async with httpx.AsyncClient(headers=headers) as http:
        created = {"name": "local_create_issue", "arguments": {"title": "bench"}}
        await http.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": created})
        for i in range(-100, n):
            params = {"name": "local_read_issue", "arguments": {"issueId": "BOARD-1"}}
            body = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}
            started = time.perf_counter()
            reply = (await http.post(url, json=body)).json()
            elapsed = (time.perf_counter() - started) * 1000
            assert reply["result"]["isError"] is False, reply
            if i >= 0:
                samples.append(elapsed)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    p50s: dict[str, list[float]] = {name: [] for name in CASES}
    with tempfile.TemporaryDirectory() as tmp:
        servers = {}
        for name, (extra, env) in CASES.items():
            directory = Path(tmp) / name.replace(" ", "-")
            directory.mkdir()
            servers[name] = start(directory, extra, env)
        try:
            for _ in range(args.rounds):
                for name, (_process, url) in servers.items():
                    p50s[name].append(statistics.median(asyncio.run(timed(url, args.n))))
        finally:
            for process, _url in servers.values():
                process.kill()
                process.wait()
    base = statistics.median(p50s["plain"])
    for name, values in p50s.items():
        p50 = statistics.median(values)
        print(f"{name:10} p50 {p50:.3f} ms  {100 * (p50 / base - 1):+.1f} %")


if __name__ == "__main__":
    main()
