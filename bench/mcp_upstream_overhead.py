"""What serving an upstream MCP server through ``lorenz-mcp`` adds to a call of its tool (issue 40).

    .venv/bin/python bench/mcp_upstream_overhead.py [-n 500] [--rounds 5] [--mode legacy|auto]
        [--against OTHER/.venv/bin/python]

Starts a small stdio server on the SDK's ``MCPServer`` (one tool, ``add``) and calls it with the
SDK client (``mcp.Client`` over stdio, sequential ``tools/call``) two ways: directly, and through
``lorenz serve --stdio`` mounting it as the ``mcp`` pack (the client's stdio to Lorenz, Lorenz's
stdio to the same server). Each round does 50 warm-up calls, then ``-n`` timed ones per side, the
sides interleaved; the figures are the medians over rounds of each round's p50, and their
difference (the target is at most +0.5 ms); and the CPU time the servers' processes (the upstream;
``lorenz serve`` and its upstream) spent per call, which the machine's load moves far less.
``--against`` (repeatable) adds a side, interleaved with the others: ``lorenz serve --stdio`` run by
another tree's interpreter (its venv; e.g. a worktree of ``main``), so a change and its baseline are
measured in one run.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import mcp
from mcp import StdioServerParameters

UPSTREAM = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-upstream")

@server.tool()
def add(a: int, b: int) -> int:
    \"\"\"Add two integers.\"\"\"
    return a + b

server.run("stdio")
"""


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-mcp"
    return env


def _descendants() -> list[int]:
    """The processes this one started, and theirs (the server; lorenz serve's upstream)."""
    parents: dict[int, int] = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            parents[int(pid)] = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    found, frontier = [], [os.getpid()]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def _cpu_seconds(pids: list[int]) -> float:
    """The CPU time the threads of ``pids`` have run (Linux schedstat, nanoseconds)."""
    total = 0
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").glob("*/schedstat"):
            with contextlib.suppress(OSError, ValueError):
                total += int(task.read_text().split()[0])
    return total / 1e9


async def _round(params: StdioServerParameters, tool: str, n: int, mode: Any) -> tuple[list[float], float]:
    """Each timed call's latency, and the servers' CPU time per call."""
    samples: list[float] = []
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if getattr(getattr(message, "root", message), "method", None) == "notifications/tools/list_changed":
            changed.set()

    async with mcp.Client(params, mode=mode, message_handler=on_message) as client:
        # A loaded machine may start the upstream after the mount's wait: it is listed once it answers.
        with anyio.fail_after(120):
            while tool not in {listed.name for listed in (await client.list_tools()).tools}:
                await changed.wait()
                changed = anyio.Event()
        for i in range(-50, n):
            if i == 0:
                servers = _descendants()
                cpu = _cpu_seconds(servers)
            start = time.perf_counter()
            result = await client.call_tool(tool, {"a": i, "b": 1})
            if i >= 0:
                samples.append(time.perf_counter() - start)
            assert result.is_error is False, result
        cpu = _cpu_seconds(servers) - cpu
    return samples, cpu / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mode", default="legacy", help="the SDK client's mode (default legacy: 2025-11-25)")
    parser.add_argument(
        "--against",
        action="append",
        default=[],
        help="another tree's Python (.venv/bin/python), whose lorenz serve is measured too; repeatable",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        script = root / "upstream.py"
        script.write_text(UPSTREAM, encoding="utf-8")
        front = f"tools:\n  mcp: {{command: [{sys.executable!r}, {str(script)!r}]}}\n"
        (root / "WORKFLOW.md").write_text(f"---\n{front}---\nBench.\n", encoding="utf-8")
        serve = ["-m", "lorenz", "serve", "--stdio"]
        sides = {
            "direct": StdioServerParameters(command=sys.executable, args=[str(script)]),
            "through lorenz-mcp": StdioServerParameters(command=sys.executable, args=serve, env=_env(), cwd=root),
        }
        for other in args.against:
            tree = Path(other).parents[2].name  # <tree>/.venv/bin/python
            sides[f"through lorenz-mcp, {tree}"] = StdioServerParameters(
                command=other, args=serve, env=_env(), cwd=root
            )
        p50s: dict[str, list[float]] = {side: [] for side in sides}
        cpus: dict[str, list[float]] = {side: [] for side in sides}
        for _ in range(args.rounds):
            for side, params in sides.items():
                samples, cpu = anyio.run(_round, params, "add", args.n, args.mode)
                p50s[side].append(statistics.median(samples) * 1000)
                cpus[side].append(cpu * 1000)
    load = os.getloadavg()[0]
    direct, through = (statistics.median(p50s[side]) for side in list(sides)[:2])
    print(f"{args.rounds} rounds of {args.n} sequential calls, client mode {args.mode}; load average {load:.1f}")
    print("| side | p50 (ms), median of rounds | rounds | servers' CPU per call (ms) |")
    print("|---|---|---|---|")
    for side, values in p50s.items():
        rounds = ", ".join(f"{v:.3f}" for v in values)
        print(f"| {side} | {statistics.median(values):.3f} | {rounds} | {statistics.median(cpus[side]):.3f} |")
    print(f"\nlorenz-mcp adds {through - direct:+.3f} ms per call (p50), {through / direct:.2f}x")
    for side in list(sides)[2:]:
        before, tree = statistics.median(p50s[side]), side.removeprefix("through lorenz-mcp, ")
        print(f"{tree} adds {before - direct:+.3f} ms per call (p50), {before / direct:.2f}x")


if __name__ == "__main__":
    main()
