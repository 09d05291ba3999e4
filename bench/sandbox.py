"""What sandboxing a pack (``server.sandboxed_packs``) costs over merely isolating it: the p50 of
``Workspace.call`` (the pipe hop, no HTTP) and the time to open the workflow (survey, start, ready).

    .venv/bin/python bench/sandbox.py [-n 2000] [--rounds 5]

Installs a one-tool pack into a temporary site directory and opens the same workflow with
``isolated_packs: ["*"]`` and with ``sandboxed_packs: ["*"]``, alternating; the figures are the
medians over rounds.
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

PACK = """
from lorenz import Permissions, ToolSpec, hookimpl, tool_success


class Add:
    name = "add"
    permissions = Permissions(network=["api.example.com"])

    def tool_specs(self, settings):
        return [ToolSpec(name="add_sum", description="Add.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"sum": input["a"] + input["b"]})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Add())
"""


def _site(root: Path) -> None:
    (root / "sbxbench_add.py").write_text(PACK, encoding="utf-8")
    info = root / "sbxbench_add-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sbxbench-add\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[lorenz.tool_packs]\nadd = sbxbench_add\n", encoding="utf-8")


def _round(directory: Path, key: str, calls: int) -> tuple[float, float]:
    """(open ms, call p50 µs) for ``server.<key>: ['*']``."""
    import httpx

    from lorenz.workspace import open_workspace

    front = f"tracker:\n  kind: local\n  path: ./board\ntools:\n  add: {{}}\nserver:\n  {key}: ['*']\n"
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\nx\n", encoding="utf-8")
    env = {**os.environ, "LORENZ_LOAD_PLUGINS": "lorenz-local,sbxbench-add"}
    started = time.perf_counter()
    workspace = open_workspace(cwd=directory, env=env)
    opened = (time.perf_counter() - started) * 1000
    try:

        async def run() -> list[float]:
            out = []
            async with httpx.AsyncClient() as http:
                for i in range(calls + 50):
                    t = time.perf_counter()
                    result = await workspace.call("add_sum", {"a": i, "b": 1}, http)
                    out.append(time.perf_counter() - t)
                    assert result.success, result
            return out[50:]

        samples = asyncio.run(run())
    finally:
        workspace.close()
    return opened, statistics.median(samples) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp)
        site = root / "site"
        site.mkdir()
        _site(site)
        sys.path.insert(0, str(site))
        os.environ["PYTHONPATH"] = os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])
        work = root / "work"
        work.mkdir()
        os.chdir(work)
        figures: dict[str, list[tuple[float, float]]] = {"isolated_packs": [], "sandboxed_packs": []}
        for _ in range(args.rounds):
            for key in figures:
                figures[key].append(_round(work, key, args.n))
        for key, rounds in figures.items():
            opened = statistics.median(r[0] for r in rounds)
            p50 = statistics.median(r[1] for r in rounds)
            print(f"{key:16} open {opened:7.1f} ms   call p50 {p50:7.1f} µs")


if __name__ == "__main__":
    main()
