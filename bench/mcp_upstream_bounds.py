"""What an upstream MCP server that sends too much costs the host (issue 39, items 9 and 10).

    .venv/bin/python bench/mcp_upstream_bounds.py [--mib 40] [--progress 50000]

Starts a stdio upstream (the SDK's ``MCPServer``) under ``lorenz_mcp.upstream.Upstream`` with the
default ``server.max_result_bytes`` (8 MiB) and prints: how long a ``--mib`` MiB answer takes to
fail and how much the process's peak RSS grew; how many of ``--progress`` progress notifications
reach the caller; how long ``McpPack`` mounting (every hook a mount asks) waits for an upstream
whose first ``tools/list`` never comes; and what reading a 200 MiB stderr line costs.
"""

from __future__ import annotations

import argparse
import inspect
import logging
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio

UPSTREAM = """
import os, sys
import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("bench-bounds")

@server.tool()
def big(size: int) -> str:
    return "x" * size

@server.tool()
async def chatty(count: int, ctx: Context) -> str:
    for done in range(1, count + 1):
        await ctx.report_progress(done, count)
    return "done"

if os.environ.get("NEVER_LIST"):
    async def never():
        await anyio.sleep_forever()
    server.list_tools = never
server.run("stdio")
"""


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _upstream(script: str, env: dict[str, str] | None = None) -> Any:
    from lorenz_mcp.options import parse_options
    from lorenz_mcp.upstream import Upstream

    options = parse_options({"command": [sys.executable, script], "env": env or {}, "start_timeout_seconds": 120})
    if "max_bytes" in inspect.signature(Upstream).parameters:
        return Upstream(options, "bench", (), os.environ, 8 * 1024 * 1024)
    return Upstream(options, "bench", (), os.environ)  # before issue 39


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=40)
    parser.add_argument("--progress", type=int, default=50_000)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the upstream's lines, not the figures
    with tempfile.TemporaryDirectory() as tmp:
        script = str(Path(tmp) / "upstream.py")
        Path(script).write_text(UPSTREAM, encoding="utf-8")

        upstream = _upstream(script)
        upstream.tools()
        before, began = _peak_mib(), time.monotonic()

        async def big() -> None:
            with anyio.fail_after(60):  # the host's tool timeout would end it here too
                await upstream.call("big", {"size": args.mib * 1024 * 1024}, None)

        try:
            anyio.run(big)
            outcome = "answered"
        except Exception as exc:
            outcome = f"{type(exc).__name__}: {str(exc)[:100]}"
        print(f"{args.mib} MiB answer: {time.monotonic() - began:.2f} s, peak RSS +{_peak_mib() - before:.0f} MiB")
        print(f"  -> {outcome}")

        relayed = 0

        async def progress(done: float, total: float | None, message: str | None) -> None:
            nonlocal relayed
            relayed += 1

        began = time.monotonic()
        anyio.run(upstream.call, "chatty", {"count": args.progress}, progress)
        print(f"{args.progress} progress notifications: {relayed} relayed in {time.monotonic() - began:.2f} s")
        upstream.close()

        from lorenz import Settings
        from lorenz_mcp.pack import McpPack

        pack = McpPack()
        settings = Settings(tool_options={"mcp": {"command": [sys.executable, script], "env": {"NEVER_LIST": "1"}}})
        began = time.monotonic()
        pack.tool_specs(settings)
        pack.tool_specs(settings)
        pack.resource_specs(settings)
        pack.prompt_specs(settings)
        print(f"mounting a never-listing upstream (4 hooks): {time.monotonic() - began:.2f} s")
        pack.close()

    from lorenz_mcp.stderr import StderrPipe

    ended = threading.Event()
    pipe = StderrPipe(lambda: "bench", (), ended.set)
    before = _peak_mib()
    line = "import sys; sys.stderr.write('x' * (200 << 20) + '\\nafter\\n')"
    child = subprocess.Popen([sys.executable, "-c", line], stderr=pipe.writer)
    pipe.start()
    child.wait()
    ended.wait(60)
    print(f"a 200 MiB stderr line: peak RSS +{_peak_mib() - before:.0f} MiB")


if __name__ == "__main__":
    main()
