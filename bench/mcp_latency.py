"""Latency of sequential ``tools/call`` over Streamable HTTP on loopback: Lorenz vs. a raw floor
vs. the SDK's high-level ``MCPServer``, all driven by the same client in the same run.

    .venv/bin/python bench/mcp_latency.py [-n 1000] [--rounds 3] [--client sdk|raw|both]

Servers (each its own process under uvicorn on 127.0.0.1, log level warning):
  lorenz     ``python -m lorenz -p mcp_bench_pack serve --port 0`` (stateless, JSON responses)
  raw        a bare Starlette JSON-RPC endpoint answering the same payload (the floor)
  lowlevel   the SDK's bare low-level ``Server`` (what Lorenz builds on; stateless, JSON responses)
  mcpserver  the SDK's ``MCPServer`` with an equivalent ``add`` tool (stateless, JSON responses)

Clients: ``sdk`` is ``mcp.Client(url)`` in ``mode="legacy"`` (2025-11-25) and in the default
``"auto"`` (which lands on 2026-07-28); ``raw`` is a bare ``httpx2`` POST loop of ``tools/call``
messages in each era, which isolates the servers' cost. The raw floor speaks just enough of both
eras for ``mcp.Client``. Each round does 50 warm-up calls, then ``-n`` timed calls per server, servers
interleaved; the figures are the medians over rounds of each round's p50/p99.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

HERE = Path(__file__).resolve().parent
WARMUP = 50


# -- servers (run in child processes) ---------------------------------------------------------


def raw_app() -> Any:
    """The floor: ~30 lines of JSON-RPC over Starlette, enough protocol for ``mcp.Client``."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    tool = {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
        "outputSchema": {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
    }

    CACHE = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}

    def answer(msg: dict[str, Any]) -> Any:
        method, params = msg.get("method"), msg.get("params") or {}
        if method == "server/discover":  # the 2026-07-28 era: no handshake, every result self-describing
            return {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, **CACHE}
        if method == "initialize":
            return {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "raw", "version": "0"},
            }
        if method == "tools/list":
            return {"tools": [tool], **CACHE}
        if method == "tools/call" and params.get("name") == "add":
            out = {"sum": params["arguments"]["a"] + params["arguments"]["b"]}
            text = json.dumps(out, indent=2)
            return {"content": [{"type": "text", "text": text}], "structuredContent": out, "resultType": "complete"}
        return None

    async def mcp(request: Request) -> Response:
        try:
            msg = json.loads(await request.body())
        except ValueError:
            return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        if "id" not in msg:
            return Response(status_code=202)
        result = answer(msg)
        if result is None:
            error = {"code": -32601, "message": "Method not found"}
            return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "error": error}, status_code=404)
        return JSONResponse({"jsonrpc": "2.0", "id": msg["id"], "result": result})

    return Starlette(routes=[Route("/mcp", mcp, methods=["POST"])])


class Sum(TypedDict):
    sum: int


def mcpserver_app() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("mcpserver-bench", log_level="WARNING")

    @server.tool()
    def add(a: int, b: int) -> Sum:
        """Add two integers."""
        return {"sum": a + b}

    return server.streamable_http_app(stateless_http=True, json_response=True)


def lowlevel_app() -> Any:
    """The SDK's low-level ``Server`` with nothing around it: what Lorenz builds on, for attribution."""
    import contextlib

    import mcp_types as types
    from mcp.server import Server
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    tool = types.Tool(
        name="add",
        description="Add two integers.",
        input_schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
        output_schema={"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
    )

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        out = {"sum": args["a"] + args["b"]}
        return types.CallToolResult(content=[types.TextContent(text=json.dumps(out, indent=2))], structured_content=out)

    server = Server(
        "lowlevel-bench",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=lambda name: tool.input_schema,
    )
    manager = StreamableHTTPSessionManager(app=server, stateless=True, json_response=True)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with manager.run():
            yield

    return Starlette(routes=[Route("/mcp", endpoint=StreamableHTTPASGIApp(manager))], lifespan=lifespan)


def run_child_server(kind: str) -> None:
    import socket

    import uvicorn

    app = {"raw": raw_app, "mcpserver": mcpserver_app, "lowlevel": lowlevel_app}[kind]()
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY on accepted sockets only when the listener says TCP
    # (a bare socket.socket() has proto 0, and Nagle + delayed ACK then cost ~40 ms per call).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    print(f"listening at http://127.0.0.1:{sock.getsockname()[1]}/mcp", file=sys.stderr, flush=True)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])


def start(kind: str, workdir: Path) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
    env["LORENZ_LOAD_PLUGINS"] = ""
    if kind == "lorenz":
        (workdir / "WORKFLOW.md").write_text("---\ntracker:\n  kind: bench\n---\n")
        cmd = [sys.executable, "-m", "lorenz", "-p", "mcp_bench_pack", "serve", "--port", "0"]
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--serve", kind]
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if "http://127.0.0.1:" in line:
            url = "http://" + line.split("http://", 1)[1].strip()
            return proc, url
    proc.kill()
    msg = f"{kind} server did not start"
    raise RuntimeError(msg)


# -- clients -----------------------------------------------------------------------------------


async def sdk_round(url: str, n: int, mode: str) -> list[float]:
    import mcp

    async with mcp.Client(url, mode=mode) as client:
        for i in range(WARMUP):
            await client.call_tool("add", {"a": i, "b": 1})
        samples = []
        for i in range(n):
            start = time.perf_counter()
            result = await client.call_tool("add", {"a": i, "b": 1})
            samples.append(time.perf_counter() - start)
            assert result.structured_content == {"sum": i + 1}, result
    return samples


async def raw_round(url: str, n: int, modern: bool) -> list[float]:
    import httpx2

    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    meta = {}
    if modern:  # the 2026-07-28 envelope: _meta in the params, the method and tool name as headers
        headers.update({"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add"})
        meta = {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        }
    async with httpx2.AsyncClient(headers=headers) as http:
        samples = []
        for i in range(-WARMUP, n):
            params = {"name": "add", "arguments": {"a": i, "b": 1}, **meta}
            body = {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params}
            start = time.perf_counter()
            response = await http.post(url, json=body)
            data = response.json()
            elapsed = time.perf_counter() - start
            assert data["result"]["structuredContent"] == {"sum": i + 1}, data
            if i >= 0:
                samples.append(elapsed)
    return samples


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--client", choices=["sdk", "raw", "both"], default="both")
    parser.add_argument("--serve", choices=["raw", "mcpserver", "lowlevel"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        run_child_server(args.serve)
        return

    import anyio

    kinds = ["raw", "lorenz", "lowlevel", "mcpserver"]
    configs: list[tuple[str, str]] = []  # (client label, mode)
    if args.client in ("sdk", "both"):
        configs += [("mcp.Client legacy (2025-11-25)", "legacy"), ("mcp.Client auto (2026-07-28)", "auto")]
    if args.client in ("raw", "both"):
        configs += [("httpx2 POSTs 2025-11-25", "raw-legacy"), ("httpx2 POSTs 2026-07-28", "raw-modern")]
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        servers: dict[str, tuple[subprocess.Popen[str], str]] = {}
        try:
            for kind in kinds:
                servers[kind] = start(kind, Path(tmp))
            for _ in range(args.rounds):
                for label, mode in configs:
                    for kind in kinds:
                        url = servers[kind][1]
                        if mode.startswith("raw"):
                            samples = anyio.run(raw_round, url, args.n, mode == "raw-modern")
                        else:
                            samples = anyio.run(sdk_round, url, args.n, mode)
                        stats = (percentile(samples, 0.5), percentile(samples, 0.99))
                        results.setdefault((label, kind), []).append(stats)
        finally:
            for proc, _ in servers.values():
                proc.terminate()
                proc.wait(timeout=15)

    print(f"{args.n} sequential tools/call per server per round, {args.rounds} rounds (median of rounds)\n")
    print("| client | server | p50 ms | p99 ms | p50 vs raw floor | p50 vs MCPServer |")
    print("|---|---|---|---|---|---|")
    for label, _mode in configs:
        p50s: dict[str, float] = {}
        for kind in kinds:
            rounds = results.get((label, kind))
            if not rounds:
                continue
            p50 = statistics.median(r[0] for r in rounds)
            p99 = statistics.median(r[1] for r in rounds)
            p50s[kind] = p50
            floor = f"{p50 / p50s['raw']:.2f}x" if "raw" in p50s else "-"
            sdk = f"{p50 / p50s['mcpserver']:.2f}x" if "mcpserver" in p50s else "-"
            print(f"| {label} | {kind} | {p50:.3f} | {p99:.3f} | {floor} | {sdk} |")
        if "mcpserver" in p50s and "lorenz" in p50s:
            print(f"| {label} | lorenz vs MCPServer | | | | {p50s['lorenz'] / p50s['mcpserver']:.2f}x |")


if __name__ == "__main__":
    main()
