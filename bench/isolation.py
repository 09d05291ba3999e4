"""What running a pack isolated (``server.isolated_packs``) costs: ``tools/call`` latency of the
same pack in-process and isolated, and memory with four isolated packs (issue 17).

    .venv/bin/python bench/isolation.py [-n 1000] [--rounds 5] [--flood]

Installs four copies of a one-tool pack (``bench0`` … ``bench3``, each its own distribution) into a
temporary site directory and serves the same workflow twice with ``lorenz serve`` (stateless, JSON
responses), once with ``isolated_packs: []`` and once with ``["*"]``. Each round does 50 warm-up
calls, then ``-n`` sequential ``tools/call bench0 add {a, b}`` over loopback HTTP per server (a bare
``httpx2`` POST loop, ``bench/mcp_latency.py``'s raw client), servers interleaved; the figures are
the medians over rounds. It also times ``Workspace.call`` in this process, with no HTTP, both ways:
the pipe hop alone. Memory is VmRSS from ``/proc`` after the calls: the host's, and each child's.
``--flood`` measures instead what one isolated pack flooding its stderr costs another's calls.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from mcp_latency import percentile, raw_round  # noqa: E402

PACKS = 4

PACK = """
import sys, threading, time

from lorenz import ToolSpec, hookimpl, tool_success

ADD = ToolSpec(
    name="{tool}",
    description="Add two integers.",
    input_schema={{
        "type": "object",
        "properties": {{"a": {{"type": "integer"}}, "b": {{"type": "integer"}}}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }},
    output_schema={{"type": "object", "properties": {{"sum": {{"type": "integer"}}}}, "required": ["sum"]}},
)
FLOOD = ToolSpec(name="{pack}_flood", description="Flood stderr for a few seconds.")


class BenchPack:
    name = "{pack}"

    def tool_specs(self, settings):
        return [ADD, FLOOD]

    async def execute_tool(self, name, input, context):
        if name == FLOOD.name:  # stderr written as fast as it goes, for a while, from a thread
            def flood(until):
                while time.monotonic() < until:
                    sys.stderr.write("x" * 120 + "\\n")
            threading.Thread(target=flood, args=(time.monotonic() + input["seconds"],), daemon=True).start()
            return tool_success({{"started": True}})
        return tool_success({{"sum": input["a"] + input["b"]}})


@hookimpl
def lorenz_register_tool_packs(register):
    register(BenchPack())
"""


def write_site(root: Path) -> str:
    """The packs as installed distributions; returns the ``LORENZ_LOAD_PLUGINS`` allow-list."""
    dists = ["lorenz-local"]
    for index in range(PACKS):
        pack, module, dist = f"bench{index}", f"iso_bench{index}", f"iso-bench{index}"
        tool = "add" if index == 0 else f"add{index}"
        (root / f"{module}.py").write_text(textwrap.dedent(PACK.format(pack=pack, tool=tool)), encoding="utf-8")
        info = root / f"{module}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n", encoding="utf-8")
        (info / "entry_points.txt").write_text(f"[lorenz.tool_packs]\n{pack} = {module}\n", encoding="utf-8")
        (info / "RECORD").write_text("", encoding="utf-8")
        dists.append(dist)
    return ",".join(dists)


def write_workflow(directory: Path, isolated: bool) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    tools = "".join(f"  bench{index}: {{}}\n" for index in range(PACKS))
    isolate = "['*']" if isolated else "[]"
    front = f"tracker:\n  kind: local\n  path: ./board\ntools:\n{tools}server:\n  isolated_packs: {isolate}\n"
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\nBench.\n", encoding="utf-8")


def start(directory: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "lorenz", "serve", "--port", "0"]
    proc = subprocess.Popen(cmd, cwd=directory, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if " at http://127.0.0.1:" in line:
            return proc, line.rsplit(" at ", 1)[1].strip()
    proc.kill()
    msg = f"lorenz serve in {directory} did not start"
    raise RuntimeError(msg)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def in_process_round(directory: Path, env: dict[str, str], n: int, *, home: bool) -> tuple[float, float]:
    """p50 of ``Workspace.call`` (arguments checked, ToolRunner, no HTTP), in µs, and the open time.
    ``home``: the pool supervises from the loop that calls (as ``lorenz serve``), else from its own
    thread (as ``lorenz call``)."""
    import httpx

    from lorenz.isolation.pool import IsolationPool
    from lorenz.workspace import open_workspace

    pool = IsolationPool(asyncio.new_event_loop() if home else None)
    started = time.perf_counter()
    workspace = open_workspace(cwd=directory, env=env, isolation=pool)
    opened = time.perf_counter() - started

    async def calls() -> list[float]:
        samples = []
        async with httpx.AsyncClient() as http:
            for i in range(-50, n):
                start = time.perf_counter()
                result = await workspace.call("add", {"a": i, "b": 1}, http)
                if i >= 0:
                    samples.append(time.perf_counter() - start)
                assert result.result == {"sum": i + 1}, result
        return samples

    try:
        samples = pool.run(calls())
    finally:
        workspace.close()
    return statistics.median(samples) * 1e6, opened


def flood_rounds(directory: Path, env: dict[str, str], n: int, rounds: int) -> None:
    """bench0's sequential p50, isolated, quiet and while bench1's process writes its stderr as fast
    as it can (the host relays it to its log rate-limited); rounds alternate the two."""
    import anyio
    import httpx

    proc, url = start(directory, env)
    logged = [0]

    def drain() -> None:  # the host's log read as it comes: a full pipe would stall the host
        assert proc.stderr is not None
        for line in proc.stderr:
            logged[0] += "xxxxxxxx" in line

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "bench1_flood"}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    quiet: list[float] = []
    flooded: list[float] = []
    try:
        for _ in range(rounds):
            quiet.append(percentile(anyio.run(raw_round, url, n, False), 0.5))
            call["params"]["arguments"] = {"seconds": 30}  # type: ignore[index]
            assert httpx.post(url, json=call, headers=headers, timeout=30).status_code == 200
            time.sleep(0.5)
            flooded.append(percentile(anyio.run(raw_round, url, n, False), 0.5))
            time.sleep(30)  # the flood ends before the next quiet round
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        reader.join(timeout=10)
    print(f"{n} sequential calls of bench0 per round, {rounds} rounds (median of rounds), isolated\n")
    print("| bench1's stderr | bench0 p50 (ms) |")
    print("|---|---|")
    print(f"| quiet | {statistics.median(quiet):.3f} |")
    print(f"| flooded (a thread writing 121-byte lines nonstop) | {statistics.median(flooded):.3f} |")
    print(f"\nflood lines that reached the host's log in all: {logged[0]:,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--flood", action="store_true", help="only: bench0's latency, isolated, while bench1 floods its stderr"
    )
    args = parser.parse_args()

    import anyio

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        site = root / "site"
        site.mkdir()
        allowed = write_site(site)
        env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
        env.update(LORENZ_LOAD_PLUGINS=allowed, PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]))
        modes = {"in-process": root / "in-process", "isolated": root / "isolated"}
        for mode, directory in modes.items():
            write_workflow(directory, isolated=mode == "isolated")

        if args.flood:
            flood_rounds(modes["isolated"], env, args.n, args.rounds)
            return
        direct: dict[tuple[str, bool], list[tuple[float, float]]] = {}
        sys.path.insert(0, str(site))
        os.environ["LORENZ_LOAD_PLUGINS"] = allowed
        for _ in range(args.rounds):
            for mode, directory in modes.items():
                os.chdir(directory)
                for home in (True, False):
                    direct.setdefault((mode, home), []).append(in_process_round(directory, env, args.n, home=home))

        servers = {mode: start(directory, env) for mode, directory in modes.items()}
        http: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
        memory: dict[str, tuple[float, list[float]]] = {}
        try:
            for _ in range(args.rounds):
                for mode, (_, url) in servers.items():
                    samples = anyio.run(raw_round, url, args.n, False)
                    http[mode].append((percentile(samples, 0.5), percentile(samples, 0.99)))
            for mode, (proc, _) in servers.items():
                memory[mode] = (rss_mib(proc.pid), [rss_mib(child) for child in children(proc.pid)])
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait(timeout=30)

    print(f"{args.n} sequential calls per round, {args.rounds} rounds (median of rounds)\n")
    print("| path | in-process p50 | isolated p50 | isolation adds | in-process p99 | isolated p99 |")
    print("|---|---|---|---|---|---|")
    inp, iso = (statistics.median(r[0] for r in http[m]) for m in modes)
    inp99, iso99 = (statistics.median(r[1] for r in http[m]) for m in modes)
    print(f"| tools/call over HTTP (ms) | {inp:.3f} | {iso:.3f} | {iso - inp:+.3f} ms | {inp99:.3f} | {iso99:.3f} |")
    for home, label in ((True, "from the pool's loop, as lorenz serve"), (False, "from another loop, as lorenz call")):
        dinp, diso = (statistics.median(r[0] for r in direct[(m, home)]) for m in modes)
        print(f"| Workspace.call, no HTTP, {label} (µs) | {dinp:.0f} | {diso:.0f} | {diso - dinp:+.0f} µs | | |")
    oinp, oiso = (statistics.median(r[1] for r in direct[(m, True)]) for m in modes)
    print(f"\nopen_workspace with {PACKS} packs: {oinp * 1000:.0f} ms in-process, {oiso * 1000:.0f} ms isolated")
    print(f"\n| memory (VmRSS, MiB) | host | {PACKS} children, each | all processes |")
    print("|---|---|---|---|")
    for mode, (host, kids) in memory.items():
        each = ", ".join(f"{kid:.0f}" for kid in kids) or "-"
        print(f"| {mode} | {host:.0f} | {each} | {host + sum(kids):.0f} |")


if __name__ == "__main__":
    main()
