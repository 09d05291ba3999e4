"""``lorenz plugins`` and ``lorenz tools`` wall time over ``python -c "import httpx"`` (issue 40's targets).

    .venv/bin/python bench/startup_ratio.py [-n 8] [--baseline OTHER/.venv/bin/python]

Prints, per interpreter, the median over ``n`` rounds of each command's wall time divided by the median
of ``import httpx`` in the same interpreter, and the same ratio of CPU time (user + system of the child),
which moves much less with the machine's load. With ``--baseline`` (another checkout's venv, e.g. main's)
both sides run interleaved command by command within each round, so load on the shared machine hits
them alike. Each run is in a fresh empty directory (the embedded default: only ``local`` mounted), with
every installed plugin and byte-code caches (filled by a warm-up round), as ``bench/startup.py`` does.
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

PYCACHE = tempfile.mkdtemp(prefix="lorenz-bench-pycache-")


def _env() -> dict[str, str]:
    env = dict(os.environ, PYTHONPYCACHEPREFIX=PYCACHE)
    for name in ("LORENZ_LOAD_PLUGINS", "LORENZ_DISABLE_PLUGINS", "LORENZ_WORKFLOW", "PYTHONPATH"):
        env.pop(name, None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _commands(python: str) -> dict[str, list[str]]:
    lorenz = str(Path(python).parent / "lorenz")
    return {"import httpx": [python, "-c", "import httpx"], "plugins": [lorenz, "plugins"], "tools": [lorenz, "tools"]}


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run."""
    with tempfile.TemporaryDirectory() as cwd:
        cpu, start = _cpu(), time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=8, help="rounds (default 8)")
    parser.add_argument("--baseline", metavar="PYTHON", help="another venv's python, run interleaved")
    args = parser.parse_args()
    sides = {"this tree": sys.executable, **({"baseline": args.baseline} if args.baseline else {})}
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for python in sides.values():  # warm-up: fill the byte-code caches
        for argv in _commands(python).values():
            _run(argv)
    for _ in range(args.n):
        for name in ("import httpx", "plugins", "tools"):
            for side, python in sides.items():
                times.setdefault((side, name), []).append(_run(_commands(python)[name]))
    load = os.getloadavg()[0]
    print(f"medians of {args.n} rounds, sides interleaved; load average {load:.1f}, {os.cpu_count()} CPUs")
    for index, what in enumerate(("wall", "CPU")):
        for side in sides:
            base = statistics.median(run[index] for run in times[(side, "import httpx")])
            cells = [f"import httpx {base:.3f}s"]
            for name in ("plugins", "tools"):
                value = statistics.median(run[index] for run in times[(side, name)])
                cells.append(f"lorenz {name} {value:.3f}s = {value / base:.2f}×")
            print(f"{what:<4} {side:<10} " + "   ".join(cells))


if __name__ == "__main__":
    main()
