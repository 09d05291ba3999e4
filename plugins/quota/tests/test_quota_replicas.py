"""Two ``lorenz serve`` processes (two replicas) and one ``lorenz serve --workers 2`` sharing one
Redis: calls spread over them accept R·t + B in all, over the official SDK client."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import mcp
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from redis_server import redis_server

from lorenz.testing import ServedWorkflow

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
RATE, BURST = 20, 20
PING = """
from lorenz import ToolSpec, hookimpl, tool_success


class PingPack:
    name = "ping"

    def tool_specs(self, settings):
        return [ToolSpec(name="ping", description="Answers pong.", input_schema={"type": "object"})]

    async def execute_tool(self, name, input, context):
        return tool_success({"pong": True})


@hookimpl
def lorenz_register_tool_packs(register):
    register(PingPack())
"""


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def serve(directory: Path, *extra: str) -> ServedWorkflow:
    """``lorenz serve --port 0`` of the ping pack, with quota, in a subprocess."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update(
        LORENZ_LOAD_PLUGINS="lorenz-quota", PYTHONPATH=os.pathsep.join([str(directory), env.get("PYTHONPATH", "")])
    )
    command = [sys.executable, "-m", "lorenz", "-p", "lorenz_ping", "serve", "--port", "0", *extra]
    return ServedWorkflow(directory, env, command, timeout=90)


def workflow(directory: Path, redis_url: str) -> None:
    (directory / "lorenz_ping.py").write_text(PING, encoding="utf-8")
    quota = f"      backend: redis\n      url: {redis_url}\n      key_prefix: {directory.name}\n"
    quota += f"      limits:\n        - {{tools: [ping], rate: {RATE}, burst: {BURST}}}\n"
    server = f"server:\n  middleware: [quota]\n  middleware_options:\n    quota:\n{quota}"
    (directory / "WORKFLOW.md").write_text(f"---\ntools:\n  ping: {{}}\n{server}---\n", encoding="utf-8")


async def hammer(urls: list[str]) -> tuple[int, int, float, float]:
    """Calls spread over ``urls`` for 1.5 s: (accepted, refused, seconds from the first call, the
    tokens a full bucket could not hold while a stall of the loaded machine sent nothing)."""
    accepted = refused = 0
    lost = 0.0
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(mcp.Client(url)) for url in urls]
        started = time.monotonic()  # the bucket refills while the first calls connect each worker to Redis
        for client in clients:
            accepted += not (await client.call_tool("ping", {})).is_error
        last = time.monotonic()
        lost += max(0.0, last - started - BURST / RATE) * RATE
        calls = 0
        while time.monotonic() - started < 1.5:
            result = await clients[calls % len(clients)].call_tool("ping", {})
            lost += max(0.0, (now := time.monotonic()) - last - BURST / RATE) * RATE
            last = now
            calls += 1
            if result.is_error:
                assert result.structured_content is not None
                assert result.structured_content["error"]["retryAfter"] > 0
                refused += 1
            else:
                accepted += 1
        return accepted, refused, time.monotonic() - started, lost


@pytest.mark.parametrize("shape", ["two replicas", "two workers"])
async def test_replicas_and_workers_share_one_redis(tmp_path: Path, redis_url: str, shape: str) -> None:
    workflow(tmp_path, redis_url)
    servers = [serve(tmp_path), serve(tmp_path)] if shape == "two replicas" else [serve(tmp_path, "--workers", "2")]
    try:
        urls = [server.url for server in servers]
        if shape == "two workers":
            urls = urls * 4  # four connections: the kernel spreads them over both workers
        accepted, refused, elapsed, lost = await hammer(urls)
    finally:
        for server in servers:
            server.stop()
    expected = RATE * elapsed + BURST
    assert refused >= 10  # the calls outran the limit
    assert expected - lost - 0.05 * expected - 1 <= accepted <= expected + 0.05 * expected + 1
