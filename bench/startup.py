"""Start-up wall time of the command line and of ``lorenz serve --stdio``, against ``import httpx``.

    .venv/bin/python bench/startup.py [-n 15] [--profile]

Each round runs, in a fresh empty directory (so ``tools`` and ``serve`` use the embedded default,
the local board) with the four bundled plugins installed:

  import httpx   ``python -c "import httpx"`` (the yardstick)
  plugins        ``lorenz plugins``
  tools          ``lorenz tools`` (embedded default)
  stdio          ``lorenz serve --stdio``: spawn, then ``initialize``, ``notifications/initialized``
                 and ``tools/list`` written at once; the time is until the ``tools/list`` answer is read
  import mcp     ``python -c "import mcp"``: the MCP SDK's own import, the floor under ``stdio``

Children run with byte-code caches (in a temporary ``PYTHONPYCACHEPREFIX``, filled by a warm-up round).
Commands are interleaved round by round, so load on the (shared) machine hits them alike; the figures
are medians over rounds. Wall time is what the targets are about; the CPU time of the child (user +
system, for ``stdio`` until it exits after the answer) is printed beside it because it moves much less
with machine load. ``--profile`` adds, per command, the modules with the largest cumulative
import time (``python -X importtime``, minimum over 5 runs per module, since load only adds time).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

BIN = Path(sys.executable).parent
LORENZ = [str(BIN / "lorenz")] if (BIN / "lorenz").exists() else [sys.executable, "-m", "lorenz"]

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}


#: Byte-code caches for the children, as an installed wheel has them (this machine sets
#: ``PYTHONDONTWRITEBYTECODE``, which would re-compile every editable-installed module on every run).
PYCACHE = tempfile.mkdtemp(prefix="lorenz-bench-pycache-")


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPYCACHEPREFIX=PYCACHE)
    for name in ("LORENZ_LOAD_PLUGINS", "LORENZ_DISABLE_PLUGINS", "LORENZ_WORKFLOW", "PYTHONPATH"):
        env.pop(name, None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_command(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def stdio_first_tools_list(cwd: Path) -> float:
    """Seconds from spawning ``lorenz serve --stdio`` to reading its ``tools/list`` answer."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [*LORENZ, "serve", "--stdio"],
        cwd=cwd,
        env=_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in (INIT, INITIALIZED, TOOLS_LIST)))
        process.stdin.flush()
        while True:
            line = process.stdout.readline()
            if not line:
                msg = f"lorenz serve --stdio exited ({process.wait()}) before answering tools/list"
                raise RuntimeError(msg)
            message = json.loads(line)
            if message.get("id") == TOOLS_LIST["id"]:
                elapsed = time.perf_counter() - start
                if not message.get("result", {}).get("tools"):
                    msg = f"tools/list answered without tools: {line[:200]!r}"
                    raise RuntimeError(msg)
                return elapsed
    finally:
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def commands(cwd: Path) -> dict[str, Callable[[], float]]:
    return {
        'python -c "import httpx"': lambda: run_command([sys.executable, "-c", "import httpx"], cwd),
        "lorenz plugins": lambda: run_command([*LORENZ, "plugins"], cwd),
        "lorenz tools (embedded default)": lambda: run_command([*LORENZ, "tools"], cwd),
        "lorenz serve --stdio: first tools/list": lambda: stdio_first_tools_list(cwd),
        'python -c "import mcp" (SDK floor)': lambda: run_command([sys.executable, "-c", "import mcp"], cwd),
    }


PROFILED = {
    "lorenz plugins": "from lorenz.cli import main; main(['plugins'])",
    "lorenz tools": "from lorenz.cli import main; main(['tools'])",
}
LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)")


def import_profile(code: str, cwd: Path, runs: int = 5, top: int = 25) -> list[tuple[str, float, float]]:
    """``(module, self ms, cumulative ms)`` by cumulative time, each the minimum over ``runs``."""
    best: dict[str, tuple[float, float]] = {}
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], cwd=cwd, env=_env(), capture_output=True, text=True
        )
        for match in LINE.finditer(done.stderr):
            own, cumulative, name = int(match[1]) / 1000, int(match[2]) / 1000, match[4]
            old = best.get(name)
            best[name] = (own, cumulative) if old is None else (min(old[0], own), min(old[1], cumulative))
    rows = sorted(((name, own, cum) for name, (own, cum) in best.items()), key=lambda row: -row[2])
    return rows[:top]


@contextlib.contextmanager
def _removed(path: str) -> Iterator[None]:
    try:
        yield
    finally:
        shutil.rmtree(path, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=15, help="rounds (default 15)")
    parser.add_argument("--profile", action="store_true", help="also print an import-time profile")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, _removed(PYCACHE):
        cwd = Path(tmp)
        runs = commands(cwd)
        for run in runs.values():  # warm-up: byte-code caches, the local board's first creation
            run()
        times: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        load = os.getloadavg()[0]
        for _ in range(args.n):
            for name, run in runs.items():
                before = _child_cpu()
                times[name].append(run())
                cpu[name].append(_child_cpu() - before)
        load = max(load, os.getloadavg()[0])
        yardstick = 'python -c "import httpx"'
        base, base_cpu = statistics.median(times[yardstick]), statistics.median(cpu[yardstick])
        print(f"median of {args.n} runs ({os.cpu_count()} CPUs, load average up to {load:.1f})")
        print(f"{'command':<42} {'wall s':>7} {'min s':>6} {'× httpx':>8} {'CPU s':>6} {'× httpx':>8}")
        for name, values in times.items():
            wall, used = statistics.median(values), statistics.median(cpu[name])
            ratios = f"{wall / base:>7.2f}× {used:>6.3f} {used / base_cpu:>7.2f}×"
            print(f"{name:<42} {wall:>7.3f} {min(values):>6.3f} {ratios}")
        if args.profile:
            for name, code in PROFILED.items():
                print(f"\nimport profile of {name} (ms, min of 5 runs; top by cumulative)")
                for module, own, cumulative in import_profile(code, cwd):
                    print(f"  {module:<40} self {own:>6.1f}  cumulative {cumulative:>6.1f}")


if __name__ == "__main__":
    main()
