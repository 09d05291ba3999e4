"""What running a stdio MCP server sandboxed (``sandbox: true``) adds to a call through it.

    .venv/bin/python bench/mcp_sandbox.py [-n 2000] [--rounds 5]

Starts the same minimal stdio server (plain Python JSON-RPC, no SDK: the server's own cost stays
small) twice under ``lorenz_mcp.upstream.Upstream``: once as is, once confined (Landlock, the
seccomp socket filter, its own egress proxy). Each round makes 100 warm-up calls, then ``-n``
sequential ``tools/call`` on each, the two taking turns to go first. It prints the medians over
rounds of each round's p50/p99 and their difference, and the server process's CPU time a call
(user + system, from /proc: the machine's load disturbs it less than wall time).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from attrs import evolve

SERVER = r"""
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    method = request["method"]
    if method == "initialize":
        result = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "bench", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": request["params"]["arguments"]["text"]}]}
    else:
        result = {}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}) + "\n")
    sys.stdout.flush()
"""


async def timed(upstream: Any, count: int) -> list[float]:
    out = []
    for _ in range(count):
        start = time.perf_counter()
        await upstream.call("echo", {"text": "hi"}, None)
        out.append(time.perf_counter() - start)
    return out


def server_cpu(script: Path) -> float:
    """CPU seconds (user + system) the server running ``script`` has used so far."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(script) in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            except OSError:
                continue
    raise LookupError(script)


async def main(count: int, rounds: int) -> None:
    from lorenz import Permissions
    from lorenz_mcp.options import parse_options
    from lorenz_mcp.upstream import Upstream

    with tempfile.TemporaryDirectory() as directory:
        scripts = {"unsandboxed": Path(directory) / "plain.py", "sandboxed": Path(directory) / "confined.py"}
        for script in scripts.values():
            script.write_text(SERVER, encoding="utf-8")
        plain = parse_options({"command": [sys.executable, str(scripts["unsandboxed"])]})
        confined = evolve(
            parse_options({"command": [sys.executable, str(scripts["sandboxed"])]}),
            sandbox=True,
            permissions=Permissions(),
            instance="bench",
        )
        upstreams = {
            "unsandboxed": Upstream(plain, "plain", (), os.environ, 8 << 20),
            "sandboxed": Upstream(confined, "bench", (), os.environ, 8 << 20),
        }
        for upstream in upstreams.values():
            await asyncio.to_thread(upstream.tools)
        p50s: dict[str, list[float]] = {name: [] for name in upstreams}
        p99s: dict[str, list[float]] = {name: [] for name in upstreams}
        cpu: dict[str, list[float]] = {name: [] for name in upstreams}
        for index in range(rounds):
            order = list(upstreams.items())
            for name, upstream in order if index % 2 else order[::-1]:  # each goes first in turn
                await timed(upstream, 100)
                before = server_cpu(scripts[name])
                times = sorted(await timed(upstream, count))
                cpu[name].append((server_cpu(scripts[name]) - before) / count)
                p50s[name].append(times[len(times) // 2])
                p99s[name].append(times[int(len(times) * 0.99)])
        for upstream in upstreams.values():
            upstream.close()
    for name in upstreams:
        p50, p99 = statistics.median(p50s[name]), statistics.median(p99s[name])
        print(
            f"{name:12} p50 {p50 * 1e6:7.0f} µs   p99 {p99 * 1e6:7.0f} µs   (p50 per round: "
            + ", ".join(f"{v * 1e6:.0f}" for v in p50s[name])
            + ")"
        )
        print(f"{'':12} server CPU {statistics.median(cpu[name]) * 1e6:.1f} µs a call (median of rounds)")
    added = statistics.median(p50s["sandboxed"]) - statistics.median(p50s["unsandboxed"])
    print(f"added p50: {added * 1e6:+.0f} µs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    asyncio.run(main(args.n, args.rounds))
