"""Two ``lorenz serve`` processes (two replicas) and one ``lorenz serve --workers 2`` sharing one
Redis: calls spread over them accept R·t + B in all, over the official SDK client."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import mcp
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from hammer import hammer
from redis_server import redis_server

from lorenz.testing import ServedWorkflow

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
RATE, BURST = 10, 10
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


@pytest.mark.parametrize("shape", ["two replicas", "two workers"])
async def test_replicas_and_workers_share_one_redis(tmp_path: Path, redis_url: str, shape: str) -> None:
    workflow(tmp_path, redis_url)
    servers = [serve(tmp_path), serve(tmp_path)] if shape == "two replicas" else [serve(tmp_path, "--workers", "2")]
    try:
        urls = [server.url for server in servers]
        if shape == "two workers":
            urls = urls * 4  # four connections: the kernel spreads them over both workers
        async with contextlib.AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(mcp.Client(url)) for url in urls]
            tally = await hammer(clients, RATE, BURST)
    finally:
        for server in servers:
            server.stop()
    assert tally.refusals  # the calls outran the limit
    assert tally.least - 0.05 * tally.least - 1 <= tally.accepted <= tally.most + 0.05 * tally.most + 1, tally
