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
RATE, BURST = 10, 10  # to outrun the limit a call must take under 1/RATE s, as a loaded machine's still do
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
    """Calls spread over ``urls`` for 1.5 s, then on until one is refused (the bucket is empty
    then: no token is left unclaimed): (accepted, refused, the fewest and the most R·t + B allows)."""
    accepted = refused = 0
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(mcp.Client(url)) for url in urls]
        first_sent = time.monotonic()  # the bucket refills while the first calls connect each worker to Redis
        for client in clients:
            accepted += not (await client.call_tool("ping", {})).is_error
        started = previous_sent = time.monotonic()
        lost = stalled(first_sent, started)
        calls = 0
        while True:
            sent = time.monotonic()
            result = await clients[calls % len(clients)].call_tool("ping", {})
            received = time.monotonic()
            lost += stalled(previous_sent, received)
            previous_sent = sent
            calls += 1
            if result.is_error:
                assert result.structured_content is not None
                assert result.structured_content["error"]["retryAfter"] > 0
                refused += 1
            else:
                accepted += 1
            if (received - started >= 1.5 and result.is_error) or received - started >= 30:
                break
    # The bucket filled at the first call's decision (between first_sent and started) and was
    # empty at the last one's (between sent and received).
    return accepted, refused, RATE * (sent - started) + BURST - lost, RATE * (received - first_sent) + BURST


def stalled(before: float, after: float) -> float:
    """The tokens a full bucket could not hold while a stall of the loaded machine sent nothing."""
    return max(0.0, after - before - BURST / RATE) * RATE


@pytest.mark.parametrize("shape", ["two replicas", "two workers"])
async def test_replicas_and_workers_share_one_redis(tmp_path: Path, redis_url: str, shape: str) -> None:
    workflow(tmp_path, redis_url)
    servers = [serve(tmp_path), serve(tmp_path)] if shape == "two replicas" else [serve(tmp_path, "--workers", "2")]
    try:
        urls = [server.url for server in servers]
        if shape == "two workers":
            urls = urls * 4  # four connections: the kernel spreads them over both workers
        accepted, refused, least, most = await hammer(urls)
    finally:
        for server in servers:
            server.stop()
    assert refused >= 1  # the calls outran the limit
    assert least - 0.05 * least - 1 <= accepted <= most + 0.05 * most + 1
