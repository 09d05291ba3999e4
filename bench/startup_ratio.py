"""``lorenz plugins`` and ``lorenz tools`` wall time over ``python -c "import httpx"`` (issue 40's targets).

    .venv/bin/python bench/startup_ratio.py [-n 8] [--baseline OTHER/.venv/bin/python]

Prints, per interpreter, the median over ``n`` rounds of each command's wall time divided by the median
of ``import httpx`` in the same interpreter. With ``--baseline`` (another checkout's venv, e.g. main's)
both sides run interleaved command by command within each round, so load on the shared machine hits
them alike. Each run is in a fresh empty directory (the embedded default: only ``local`` mounted), with
every installed plugin and byte-code caches (filled by a warm-up round), as ``bench/startup.py`` does.
"""

from __future__ import annotations

import argparse
import os
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


def _wall(argv: list[str]) -> float:
    with tempfile.TemporaryDirectory() as cwd:
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=8, help="rounds (default 8)")
    parser.add_argument("--baseline", metavar="PYTHON", help="another venv's python, run interleaved")
    args = parser.parse_args()
    sides = {"this tree": sys.executable, **({"baseline": args.baseline} if args.baseline else {})}
    times: dict[tuple[str, str], list[float]] = {}
    for python in sides.values():  # warm-up: fill the byte-code caches
        for argv in _commands(python).values():
            _wall(argv)
    for _ in range(args.n):
        for name in ("import httpx", "plugins", "tools"):
            for side, python in sides.items():
                times.setdefault((side, name), []).append(_wall(_commands(python)[name]))
    load = os.getloadavg()[0]
    print(f"medians of {args.n} rounds, sides interleaved; load average {load:.1f}, {os.cpu_count()} CPUs")
    for side in sides:
        base = statistics.median(times[(side, "import httpx")])
        cells = [f"import httpx {base:.3f}s"]
        for name in ("plugins", "tools"):
            wall = statistics.median(times[(side, name)])
            cells.append(f"lorenz {name} {wall:.3f}s = {wall / base:.2f}×")
        print(f"{side:<10} " + "   ".join(cells))


if __name__ == "__main__":
    main()
