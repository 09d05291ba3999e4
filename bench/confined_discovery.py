"""What learning a third-party plugin from a confined child costs the commands that list it.

    .venv/bin/python bench/confined_discovery.py [-n 9] [--python OTHER/bin/python]

Each round runs ``lorenz plugins``, ``lorenz tools --all`` and ``lorenz lint`` in a fresh directory
(the embedded default), twice: with the bundled plugins only, and with one third-party plugin
(a real distribution with one pack, on ``PYTHONPATH``) added. Rounds interleave the commands, so
load on the shared machine hits them alike; the figures are medians of wall time and of CPU time
(the command's and its children's, which moves much less with load). The survey children read the
byte-code caches beside the sources (as an installed wheel has them): ``python -m compileall`` the
checkout and the venv first. ``--python``
runs the same with another interpreter (another checkout's venv), to compare.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PLUGIN = """
from lorenz import Permissions, ToolSpec, hookimpl, tool_success


class Bench:
    name = "bench"
    permissions = Permissions()

    def tool_specs(self, settings):
        return [ToolSpec(name="bench_ping", description="Ping.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"pong": True})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Bench())
"""

COMMANDS = {"plugins": ["plugins"], "tools --all": ["tools", "--all"], "lint": ["lint"]}


def _site(root: Path) -> Path:
    (root / "bench_pack.py").write_text(PLUGIN, encoding="utf-8")
    info = root / "bench_pack-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bench-pack\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[lorenz.tool_packs]\nbench = bench_pack\n", encoding="utf-8")
    return root


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(python: str, args: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU ms (the command's and its children's: the survey children included)."""
    start, cpu = time.perf_counter(), _cpu()
    subprocess.run([python, "-m", "lorenz", *args], cwd=cwd, env=env, capture_output=True, check=False)
    return (time.perf_counter() - start) * 1000, (_cpu() - cpu) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=9, help="rounds")
    parser.add_argument("--python", default=sys.executable)
    options = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="lorenz-bench-confined-"))
    (scratch / "site").mkdir()
    site = _site(scratch / "site")
    work = scratch / "work"
    work.mkdir()
    base = {k: v for k, v in os.environ.items() if not k.startswith("LORENZ_") and k != "PYTHONPATH"}
    base["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    base.pop("PYTHONDONTWRITEBYTECODE", None)
    setups = {"bundled only": base, "+1 third-party": {**base, "PYTHONPATH": str(site)}}
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for round_ in range(options.n + 1):  # the first round warms the byte-code caches
        for setup, env in setups.items():
            for label, args in COMMANDS.items():
                took = _run(options.python, args, work, env)
                if round_:
                    times.setdefault((setup, label), []).append(took)
    print(f"{options.python}, {options.n} rounds, median ms: wall / CPU (with children)")
    for label in COMMANDS:
        cells = []
        for setup in setups:
            wall = statistics.median(took[0] for took in times[(setup, label)])
            cpu = statistics.median(took[1] for took in times[(setup, label)])
            cells.append(f"{setup}: {wall:6.0f} / {cpu:5.0f}")
        print(f"  {label:12} " + "  ".join(cells))


if __name__ == "__main__":
    main()
