"""``tools/call`` cost of ``lorenz serve`` against the transport floor and two peer MCP servers:
same machine, same clients, one run.

    .venv/bin/python bench/peers.py [-n 1000] [--rounds 3] [--seconds 10] [--connections 16]
        [--block 100] [--servers floor,work,lorenz,mcpserver,fastmcp] [--fastmcp-venv DIR] [--fastmcp-version 4.1.6]
        [--before TREE] [--switch-off NAME,...]

Every server is its own process on 127.0.0.1 (uvicorn, log level warning, no access log, a listening
socket made with ``IPPROTO_TCP``) and answers ``local_read_issue {"issueId": "BOARD-1"}`` on a
one-issue local board (20 comments, ~3.8 KB answered):

  floor      a bare Starlette JSON-RPC endpoint returning the same answer, built once at start
  work       the floor doing the tool's work per call: it reads and parses the issue's file and
             writes the pretty text, as ``mcpserver`` does, with no protocol models (what is left
             of lorenz's figure over this one is the host: its checks, the SDK kernel, the record)
  lorenz     ``python -m lorenz serve --port 0`` in the board's directory (``lorenz-local``)
  mcpserver  the SDK's ``MCPServer`` with an equivalent tool that reads and parses the issue's file
             per call (stateless HTTP, JSON responses)
  fastmcp    FastMCP 4.x with the same tool (stateless HTTP, JSON responses), run from its own venv,
             which is created on first use (``--fastmcp-venv``, default ``bench/.venvs/fastmcp-<ver>``)
  before     with ``--before TREE``: ``lorenz serve`` of another checkout (``git worktree add --detach
             TREE REV``), its ``core`` and ``plugins/local`` first on ``PYTHONPATH``: a before/after
             comparison within one run
  off:NAME   with ``--switch-off NAME,...``: ``lorenz serve`` with one piece of a call switched off
             (``bench/switch_off/sitecustomize.py`` lists them), to read off what that piece costs

Per server and protocol era (2025-11-25: stateless with ``MCP-Protocol-Version``; 2026-07-28: the
``_meta`` envelope with ``Mcp-Method``/``Mcp-Name`` headers), a server that cannot answer an era
shown as n/a:
  sequential  ``-n`` calls after 50 warm-up ones from a bare ``httpx2`` client posting JSON-RPC, each
              answer checked (a result, not ``isError``, text and ``structuredContent`` = the issue);
              the servers take turns in blocks of ``--block`` calls (the order reversed each block),
              so what the machine does meanwhile (a neighbour's load, the clock) falls on all alike;
              a ratio of two servers is the median over turns of their blocks' p50s' ratio
  throughput  ``wrk -t1 -c16`` for ``--seconds`` after a 1 s warm-up (``bench/wrk_tools_call.lua``: an
              answer that is not a successful result with the issue's content is an error), with the
              server's CPU per call and wrk's CPU share (near 100 % it would be the bottleneck)
A round runs the sequential blocks of both eras, then wrk on each server (their order rotating from
round to round); figures are medians of rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

from typing_extensions import TypedDict  # pydantic (the peers) needs it on Python < 3.12
from workers_throughput import rss_mib, seed_board, worker_pids, wrk

HERE = Path(__file__).resolve().parent
SERVERS = ("floor", "work", "lorenz", "mcpserver", "fastmcp")
LABELS = {
    "floor": "floor (Starlette, canned)",
    "work": "floor reading the issue per call",
    "lorenz": "lorenz serve",
    "mcpserver": "SDK MCPServer",
}
ERAS = ("2025-11-25", "2026-07-28")
TOOL, ISSUE = "local_read_issue", "BOARD-1"
WARMUP = 50
FASTMCP_DEFAULT = "4.1.6"
#: What ``--switch-off`` knows (``bench/switch_off/sitecustomize.py`` does the switching).
SWITCHES = (
    "sdk-request-validation",
    "sdk-result-validation",
    "call-record",
    "argument-checks",
    "host-origin-checks",
    "workflow-stat",
    "result-survey",
    "gc",
)
#: The checkout the ``before`` server runs (``--before``).
BEFORE_TREE: Path | None = None


# -- the tool the peers implement (no lorenz imports: it also runs in FastMCP's venv) ---------


class IssueFields(TypedDict):
    id: str
    status: str
    title: str
    description: str


class IssueAnswer(TypedDict):
    issue: IssueFields
    comments: list[str]


def read_issue(board: Path, issue_id: str) -> IssueAnswer:
    """``local_read_issue`` by hand: check the id, read ``<board>/<id>.md``, split it into
    front matter, title, description and comment lines."""
    if not re.fullmatch(r"[A-Z][A-Z0-9]*-[0-9]+", issue_id):
        msg = f"issueId {issue_id!r} is not a board issue id"
        raise ValueError(msg)
    _, front, body = (board / f"{issue_id}.md").read_text(encoding="utf-8").split("---\n", 2)
    fields = dict(line.split(":", 1) for line in front.splitlines() if ":" in line)
    head, _, comments = body.partition("<!-- lorenz:comments -->")
    title, _, description = head.strip().partition("\n")
    return {
        "issue": {
            "id": issue_id,
            "status": fields["status"].strip(),
            "title": title.removeprefix("# ").strip(),
            "description": description.strip(),
        },
        "comments": [line for line in comments.splitlines() if line.startswith("- ")],
    }


# -- servers (run in child processes) ---------------------------------------------------------


def floor_app(board: Path, *, per_call: bool = False) -> Any:
    """The floor: parse the JSON-RPC request, answer the issue read once at start (``per_call``:
    read, parse and render it for every call)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    answer = read_issue(board, ISSUE)
    text = json.dumps(answer, indent=2)
    result = {"content": [{"type": "text", "text": text}], "isError": False, "structuredContent": answer}

    async def mcp(request: Request) -> Response:
        msg = json.loads(await request.body())
        params = msg.get("params") or {}
        if msg.get("method") != "tools/call" or params.get("name") != TOOL:
            error = {"code": -32601, "message": "Method not found"}
            return JSONResponse({"jsonrpc": "2.0", "id": msg.get("id"), "error": error}, status_code=404)
        modern = "io.modelcontextprotocol/protocolVersion" in (params.get("_meta") or {})
        answered = result
        if per_call:
            read = read_issue(board, (params.get("arguments") or {}).get("issueId"))
            answered = {"content": [{"type": "text", "text": json.dumps(read, indent=2)}], "isError": False}
            answered["structuredContent"] = read
        answered = {**answered, "resultType": "complete"} if modern else answered
        return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "result": answered})

    return Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])


def peer_app(kind: str, board: Path) -> Any:
    """The SDK's ``MCPServer`` or FastMCP with ``local_read_issue`` written by hand."""
    if kind == "mcpserver":
        from mcp.server.mcpserver import MCPServer

        server: Any = MCPServer("mcpserver-bench", log_level="WARNING")
    else:
        from fastmcp import FastMCP

        server = FastMCP("fastmcp-bench")

    @server.tool(name=TOOL)
    def local_read_issue(issueId: str) -> IssueAnswer:
        """Read a local board issue: its current status, title, description, and comments."""
        return read_issue(board, issueId)

    http_app = server.streamable_http_app if kind == "mcpserver" else server.http_app
    return http_app(stateless_http=True, json_response=True)


def serve(kind: str, board: Path) -> None:
    import socket

    import uvicorn

    app = floor_app(board, per_call=kind == "work") if kind in ("floor", "work") else peer_app(kind, board)
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted sockets only when the listener says TCP
    # (a bare socket.socket() has proto 0, and Nagle + delayed ACK then cost ~40 ms per call).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(2048)  # connections queue from now on, so the printed address can be used at once
    print(f"listening at http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])


def fastmcp_python(venv: Path, version: str) -> Path:
    """The interpreter of a venv holding ``fastmcp==version``, made (or fixed) when it lacks it."""
    python = venv / "bin" / "python"
    probe = [str(python), "-c", "import fastmcp; print(fastmcp.__version__)"]
    if python.exists() and subprocess.run(probe, capture_output=True, text=True).stdout.strip() == version:
        return python
    print(f"installing fastmcp=={version} into {venv} ...", file=sys.stderr, flush=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", f"fastmcp=={version}"]
    subprocess.run(pip, check=True)
    return python


def start(kind: str, directory: Path, python: Path) -> tuple[subprocess.Popen[str], str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LORENZ_", "FASTMCP_"))}
    env.update(LORENZ_LOAD_PLUGINS="lorenz-local", FASTMCP_LOG_LEVEL="WARNING")
    if kind in ("lorenz", "before"):
        command = [str(python), "-m", "lorenz", "serve", "--port", "0"]
        if kind == "before" and BEFORE_TREE is not None:
            env["PYTHONPATH"] = os.pathsep.join(str(BEFORE_TREE / part) for part in ("core", "plugins/local"))
    elif kind.startswith("off:"):  # measurement only: the piece is patched out at start-up
        command = [str(python), "-m", "lorenz", "serve", "--port", "0"]
        env.update(PYTHONPATH=str(HERE / "switch_off"), LORENZ_BENCH_SWITCH_OFF=kind.removeprefix("off:"))
    else:
        board = directory / ".lorenz" / "local"
        command = [str(python), str(Path(__file__).resolve()), "--serve", kind, "--board", str(board)]
    process = subprocess.Popen(
        command, cwd=directory, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (line := process.stderr.readline()):
        if found := re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line):
            # Pass the rest of its stderr on (warnings stay visible; a full pipe never blocks the server).
            threading.Thread(target=shutil.copyfileobj, args=(process.stderr, sys.stderr), daemon=True).start()
            return process, found.group(1)
        print(f"  {kind}: {line.rstrip()}", file=sys.stderr)
    process.kill()
    msg = f"{kind} server did not start"
    raise RuntimeError(msg)


# -- clients -----------------------------------------------------------------------------------


def request(era: str) -> tuple[dict[str, str], dict[str, Any]]:
    """The headers and JSON-RPC body of one stateless ``tools/call`` in ``era``."""
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": era}
    params: dict[str, Any] = {"name": TOOL, "arguments": {"issueId": ISSUE}}
    if era == "2026-07-28":  # no handshake: the version rides in _meta, method and tool name in headers
        headers.update({"Mcp-Method": "tools/call", "Mcp-Name": TOOL})
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": era,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    return headers, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}


def check(response: Any, expected: IssueAnswer) -> None:
    """Fail unless ``response`` is a successful result carrying ``expected`` as text and structure."""
    result = (response.json() if response.status_code == 200 else {}).get("result") or {}
    content = result.get("content") or [{}]
    ok = not result.get("isError") and result.get("structuredContent") == expected
    if not ok or content[0].get("type") != "text" or json.loads(content[0].get("text", "null")) != expected:
        msg = f"not a successful {TOOL} answer: HTTP {response.status_code} {response.text[:300]}"
        raise RuntimeError(msg)


class Sequential(NamedTuple):
    """One server's sequential calls in one era and round: p50 and p99 in ms of all of them, and
    the p50 of each block (the servers' blocks of one turn pair up)."""

    p50_ms: float
    p99_ms: float
    block_p50s_ms: tuple[float, ...]


def sequential(urls: dict[str, str], era: str, n: int, block: int, expected: IssueAnswer) -> dict[str, Sequential]:
    """``n`` sequential calls to each server on one keep-alive connection of its own, in blocks of
    ``block`` calls that take turns (the order reversed every other block): what the machine does
    over the run (a neighbour's load, the clock) falls on every server alike."""
    import httpx2

    headers, body = request(era)
    blocks: dict[str, list[list[float]]] = {kind: [] for kind in urls}
    clients = {kind: httpx2.Client(headers=headers) for kind in urls}
    try:
        for kind, url in urls.items():
            for i in range(-WARMUP, 0):
                body["id"] = i
                check(clients[kind].post(url, json=body), expected)
        order = list(urls)
        for start in range(0, n, block):
            for kind in order:
                http, url, taken = clients[kind], urls[kind], []
                for i in range(start, min(n, start + block)):
                    body["id"] = i
                    started = time.perf_counter()
                    response = http.post(url, json=body)
                    taken.append(time.perf_counter() - started)
                    check(response, expected)
                blocks[kind].append(taken)
            order.reverse()
    finally:
        for http in clients.values():
            http.close()
    return {kind: _summary(taken) for kind, taken in blocks.items()}


def _summary(blocks: list[list[float]]) -> Sequential:
    calls = sorted(sample for block in blocks for sample in block)
    p99 = calls[min(len(calls) - 1, int(len(calls) * 0.99))]
    return Sequential(calls[len(calls) // 2] * 1000, p99 * 1000, tuple(statistics.median(b) * 1000 for b in blocks))


class Load(NamedTuple):
    calls_per_second: float
    errors: int
    p50_ms: float
    p99_ms: float
    server_cpu_ms_per_call: float
    wrk_cpu_percent: float


def cpu_seconds(pids: list[int] | None = None) -> float:
    """User + system CPU of ``pids`` (from /proc), or of this process's reaped children."""
    if pids is None:
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        return usage.ru_utime + usage.ru_stime
    ticks = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])  # utime, stime
    return ticks / os.sysconf("SC_CLK_TCK")


def throughput(url: str, pids: list[int], era: str, args: argparse.Namespace) -> Load:
    def run(seconds: int) -> tuple[int, int, float, float]:
        expect = "comment 19: the benchmark reads this issue"
        return wrk(url, seconds, args.connections, TOOL, json.dumps({"issueId": ISSUE}), WRK_ERA=era, WRK_EXPECT=expect)

    run(1)  # warm-up
    server, wrk_cpu = cpu_seconds(pids), cpu_seconds()
    requests, errors, p50, p99 = run(args.seconds)
    server, wrk_cpu = cpu_seconds(pids) - server, cpu_seconds() - wrk_cpu
    per_call = server / requests * 1000 if requests else 0.0
    return Load(requests / args.seconds, errors, p50, p99, per_call, wrk_cpu / args.seconds * 100)


# -- the run and its table ---------------------------------------------------------------------


class Figures(NamedTuple):
    """Medians over rounds of one server in one era (``load`` is None when wrk did not run), and its
    block p50s of all rounds in order."""

    p50_ms: float
    p99_ms: float
    load: Load | None
    errors: int
    round_p50s_ms: tuple[float, ...]
    block_p50s_ms: tuple[float, ...]


def medians(seq: list[Sequential], loads: list[Load]) -> Figures:
    load = Load(*(statistics.median(run[i] for run in loads) for i in range(len(Load._fields)))) if loads else None
    errors = sum(run.errors for run in loads)
    rounds = tuple(run.p50_ms for run in seq)
    blocks = tuple(p50 for run in seq for p50 in run.block_p50s_ms)
    p99 = statistics.median(run.p99_ms for run in seq)
    return Figures(statistics.median(rounds), p99, load, errors, rounds, blocks)


def paired(ours: Figures | str | None, theirs: Figures | str | None) -> float | None:
    """The median, over the turns of a run, of ``ours``'s block p50 ÷ ``theirs``'s: a block and its pair
    ran in the same turn, within a fraction of a second, so the machine's drift between turns cancels
    out (a machine of this kind flips between a fast and a slow state within a second, and the p50 of
    all of a server's calls may land in either mode)."""
    if not isinstance(ours, Figures) or not isinstance(theirs, Figures):
        return None
    pairs = zip(ours.block_p50s_ms, theirs.block_p50s_ms, strict=True)
    return statistics.median(a / b for a, b in pairs)


def ratio(value: float | None, base: float | None) -> str:
    return f"{value / base:.2f}" if value and base else "-"


def report(figures: dict[tuple[str, str], Figures | str], servers: list[str]) -> None:
    def p50(kind: str, era: str) -> float | None:
        found = figures.get((kind, era))
        return found.p50_ms if isinstance(found, Figures) else None

    def ms(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2f} ms"

    def calls(kind: str) -> float | None:
        found = figures.get((kind, ERAS[0]))
        return found.load.calls_per_second if isinstance(found, Figures) and found.load else None

    print("| server | seq p50 (2025) | ÷ floor | seq p50 (2026) | ÷ floor | calls/s 16 conn | ÷ floor |")
    print("|---|---|---|---|---|---|---|")

    def times(kind: str, era: str, base: str) -> str:
        value = paired(figures.get((kind, era)), figures.get((base, era)))
        return "-" if value is None else f"{value:.2f}"

    for kind in servers:
        cells = [f"{ms(p50(kind, era))} | {times(kind, era, 'floor')}" for era in ERAS]
        cps = calls(kind)
        cells.append(f"{cps:,.0f} | {ratio(cps, calls('floor'))}" if cps else "n/a | -")
        print(f"| {LABELS[kind]} | {' | '.join(cells)} |")
    peers = [peer for peer in ("before", "mcpserver", "fastmcp") if "lorenz" in servers and peer in servers]
    for peer in peers:
        cells = "".join(f"{times('lorenz', era, peer)} | | " for era in ERAS)
        print(f"| lorenz ÷ {LABELS[peer]} | {cells}{ratio(calls('lorenz'), calls(peer))} | |")
    print(
        "\nSequential ratios: the median over blocks of a block's p50 ÷ its pair's (the other server's block"
        "\nof the same turn), so the machine's drift between turns cancels out; the p50s are of all calls."
    )
    if peers:
        print("Ratio rows: lorenz's ÷ the peer's (below 1: lorenz faster); calls/s: lorenz's ÷ the peer's.")
    if "floor" in servers:
        print("Plain p50 ÷ the floor's p50, round by round (drift and all):")
        for kind in (kind for kind in servers if kind != "floor"):
            cells = []
            for era in ERAS:
                ours, floor = figures.get((kind, era)), figures.get(("floor", era))
                if isinstance(ours, Figures) and isinstance(floor, Figures):
                    each = zip(ours.round_p50s_ms, floor.round_p50s_ms, strict=True)
                    cells.append(f"{era} " + " ".join(f"{a / b:.2f}" for a, b in each))
            print(f"  {LABELS[kind]}: {'; '.join(cells) or 'n/a'}")
    print()
    columns = ["server", "era", "seq p50 ms", "seq p99 ms", "calls/s", "errors", "wrk p50 ms", "wrk p99 ms"]
    columns += ["server CPU ms/call", "wrk CPU %"]
    print(f"| {' | '.join(columns)} |\n|{'---|' * len(columns)}")
    for kind in servers:
        for era in ERAS:
            found = figures[kind, era]
            if isinstance(found, str):
                print(f"| {LABELS[kind]} | {era} | n/a: {found} | | | | | | | |")
                continue
            row = [f"{found.p50_ms:.2f}", f"{found.p99_ms:.2f}"]
            if run := found.load:
                row += [f"{run.calls_per_second:,.0f}", f"{found.errors} (all rounds)", f"{run.p50_ms:.1f}"]
                row += [f"{run.p99_ms:.1f}", f"{run.server_cpu_ms_per_call:.3f}", f"{run.wrk_cpu_percent:.0f}"]
            row += [""] * (len(columns) - 2 - len(row))
            print(f"| {LABELS[kind]} | {era} | {' | '.join(row)} |")


def measure(
    servers: list[str], pythons: dict[str, Path], args: argparse.Namespace
) -> tuple[dict[Any, Any], dict[str, float]]:
    """Start the servers on a fresh board, run the rounds; the figures and each server's RSS at the end."""
    import httpx2

    seq: dict[tuple[str, str], list[Sequential]] = {}
    loads: dict[tuple[str, str], list[Load]] = {}
    skipped: dict[tuple[str, str], str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        seed_board(directory)
        expected = read_issue(directory / ".lorenz" / "local", ISSUE)
        running: dict[str, tuple[subprocess.Popen[str], str]] = {}
        try:
            for kind in servers:
                running[kind] = start(kind, directory, pythons[kind])
                for era in ERAS:  # does this server speak this era at all?
                    headers, body = request(era)
                    try:
                        check(httpx2.post(running[kind][1], headers=headers, json=body), expected)
                    except (RuntimeError, ValueError) as exc:
                        skipped[kind, era] = " ".join(str(exc).split())[:160].replace("|", "/")
                        print(f"  {kind} {era}: n/a ({exc})", file=sys.stderr)
            for index in range(args.rounds):
                order = servers[index % len(servers) :] + servers[: index % len(servers)]
                for era in ERAS:
                    urls = {kind: running[kind][1] for kind in order if (kind, era) not in skipped}
                    for kind, calls in sequential(urls, era, args.n, args.block, expected).items():
                        seq.setdefault((kind, era), []).append(calls)
                        print(f"  round {index + 1} {kind} {era}: seq p50 {calls.p50_ms:.2f} ms", file=sys.stderr)
                for kind in order:
                    process, url = running[kind]
                    for era in (era for era in ERAS if (kind, era) not in skipped and era in args.wrk_eras.split(",")):
                        run = throughput(url, worker_pids(process), era, args)
                        loads.setdefault((kind, era), []).append(run)
                        line = f"{run.calls_per_second:.0f} calls/s, {run.errors} errors"
                        print(f"  round {index + 1} {kind} {era}: {line}", file=sys.stderr)
            rss = {kind: sum(rss_mib(pid) for pid in worker_pids(process)) for kind, (process, _) in running.items()}
        finally:
            for process, _ in running.values():
                process.terminate()
                process.wait(timeout=30)
    figures = {key: medians(rounds, loads.get(key, [])) for key, rounds in seq.items()}
    return {**figures, **skipped}, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=1000, help="timed sequential calls per server, era and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--block", type=int, default=100, help="sequential calls a server makes before the next's turn")
    parser.add_argument("--seconds", type=int, default=10, help="length of each wrk run")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--servers", default=",".join(SERVERS), help="comma-separated subset of " + ",".join(SERVERS))
    parser.add_argument("--wrk-eras", default=",".join(ERAS), help="eras measured with wrk (default: both)")
    parser.add_argument("--fastmcp-version", default=FASTMCP_DEFAULT)
    parser.add_argument("--fastmcp-venv", type=Path, help="default: bench/.venvs/fastmcp-<version>")
    parser.add_argument("--before", type=Path, help="another checkout whose lorenz serve runs too, as 'before'")
    parser.add_argument(
        "--switch-off", default="", help="pieces to switch off, a server each (a+b: both in one; see bench/switch_off)"
    )
    parser.add_argument("--serve", choices=["floor", "work", "mcpserver", "fastmcp"], help=argparse.SUPPRESS)
    parser.add_argument("--board", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.board)
        return
    if unknown := set(args.servers.split(",")) - set(SERVERS):
        parser.error(f"--servers: unknown {', '.join(sorted(unknown))} (choose from {', '.join(SERVERS)})")
    if shutil.which("wrk") is None:
        sys.exit("wrk is not installed (Debian: apt-get install wrk)")
    servers = [kind for kind in SERVERS if kind in args.servers.split(",")]
    if args.before is not None:
        if not (args.before / "core" / "lorenz").is_dir():
            parser.error(f"--before: {args.before} is not a lorenz checkout (no core/lorenz)")
        global BEFORE_TREE
        BEFORE_TREE = args.before.resolve()
        git = ["git", "-C", str(BEFORE_TREE), "rev-parse", "--short", "HEAD"]
        rev = subprocess.run(git, capture_output=True, text=True, check=False)
        LABELS["before"] = f"lorenz serve, before ({rev.stdout.strip() or BEFORE_TREE.name})"
        servers.insert(servers.index("lorenz") + 1 if "lorenz" in servers else len(servers), "before")
    switches = [name for name in args.switch_off.split(",") if name]
    if unknown := {part for name in switches for part in name.split("+")} - set(SWITCHES):
        parser.error(f"--switch-off: unknown {', '.join(sorted(unknown))} (choose from {', '.join(SWITCHES)})")
    for name in switches:
        servers.append(f"off:{name}")
        LABELS[f"off:{name}"] = f"lorenz serve, {name} switched off"
    pythons = dict.fromkeys(servers, Path(sys.executable))
    if "fastmcp" in servers:
        venv = args.fastmcp_venv or HERE / ".venvs" / f"fastmcp-{args.fastmcp_version}"
        pythons["fastmcp"] = fastmcp_python(venv, args.fastmcp_version)
        LABELS["fastmcp"] = f"FastMCP {args.fastmcp_version}"
    load_start = os.getloadavg()
    figures, rss = measure(servers, pythons, args)
    load_end = os.getloadavg()
    print(
        f"\n`{TOOL}` on a one-issue board; sequential: {args.n} calls per server, era and round on one connection, "
        f"the servers taking turns every {args.block}; "
        f"throughput: wrk -t1 -c{args.connections}, {args.seconds} s; median of {args.rounds} rounds; "
        f"{os.cpu_count()} CPUs\n"
    )
    report(figures, servers)
    print("\nRSS at the end: " + ", ".join(f"{LABELS[kind]} {value:.0f} MiB" for kind, value in rss.items()))
    start, end = (" ".join(f"{value:.2f}" for value in load) for load in (load_start, load_end))
    print(f"load average (1, 5, 15 min): {start} at the start, {end} at the end")


if __name__ == "__main__":
    main()
