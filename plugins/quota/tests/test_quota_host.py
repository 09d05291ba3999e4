"""lorenz-quota installed (its entry point) and named by a workflow, over the official SDK client:
N calls over t seconds accept R·t + B and refuse the rest with ``retryAfter``, in one worker, with
the memory backend and with Redis; and installed but not named, it limits nothing."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import mcp
import pytest

from lorenz import ToolSpec, hookimpl, tool_success
from lorenz.host import serve_in_thread

sys.path.insert(0, str(Path(__file__).parent))
from redis_server import redis_server

pytestmark = pytest.mark.anyio
ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-quota"}


class PingPack:
    name = "ping"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [ToolSpec(name="ping", description="Answers pong.", input_schema={"type": "object"})]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        return tool_success({"pong": True})


class PingPlugin:
    @hookimpl
    def lorenz_register_tool_packs(self, register: Any) -> None:
        register(PingPack())


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def stalled(before: float, after: float, rate: float, burst: float) -> float:
    """The tokens a full bucket could not hold while the client sent nothing (a stall of the loaded
    test machine longer than burst/rate): R·t + B is what a client calling without pause gets."""
    return max(0.0, after - before - burst / rate) * rate


def workflow(directory: Path, quota: str | None) -> None:
    server = ""
    if quota is not None:
        server = f"server:\n  middleware: [quota]\n  middleware_options:\n    quota:\n{quota}"
    (directory / "WORKFLOW.md").write_text(f"---\ntools:\n  ping: {{}}\n{server}---\n")


@pytest.mark.parametrize("backend", ["memory", "redis"])
async def test_rate_and_burst_over_the_sdk_client(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    rate, burst = 20, 20  # a burst of a second's calls: a stall of the loaded test machine loses no tokens
    where = f"      backend: redis\n      url: {request.getfixturevalue('redis_url')}\n" if backend == "redis" else ""
    workflow(tmp_path, f"{where}      limits:\n        - {{tools: [ping], rate: {rate}, burst: {burst}}}\n")
    accepted, refusals, lost = 0, [], 0.0
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[PingPlugin()]) as server:
        async with mcp.Client(server.url) as client:
            first_sent = time.monotonic()
            accepted += not (await client.call_tool("ping", {})).is_error  # connections made: t starts
            started = previous_sent = time.monotonic()
            while True:
                sent = time.monotonic()
                result = await client.call_tool("ping", {})
                received = time.monotonic()
                lost += stalled(previous_sent, received, rate, burst)
                previous_sent = sent
                if result.is_error:
                    assert result.structured_content is not None
                    refusals.append(result.structured_content["error"])
                else:
                    accepted += 1
                # past 1.5 s, stop on a refusal: the bucket is empty then, no token is left unclaimed
                if (received - started >= 1.5 and result.is_error) or received - started >= 10:
                    break
        async with httpx.AsyncClient() as http:
            health = (await http.get(server.base_url + "/healthz")).json()
            page = (await http.get(server.base_url + "/")).text
    assert all(e["reason"] == "rate_limited" and 0 < e["retryAfter"] <= 1 / rate for e in refusals), refusals
    assert len(refusals) >= 10  # the calls outran the limit
    # the first decision falls between first_sent and started, the last between sent and received
    least, most = rate * (sent - started) + burst - lost, rate * (received - first_sent) + burst
    assert least - 0.05 * least - 1 <= accepted <= most + 0.05 * most + 1
    assert "retryAfter" in refusals[0]["recovery"]
    counted = health["middleware"]["quota"]
    assert (counted["allowed"], counted["refused"], counted["backend"]) == (accepted, len(refusals), backend)
    assert counted["countedPer"] == ("worker" if backend == "memory" else "every worker and replica")
    shown = page.split("<h2>Middleware</h2>", 1)[1].split("<h2", 1)[0]  # the landing page's counters
    assert f"<tr><td>refused</td><td>{len(refusals)}</td></tr>" in shown and "<code>quota</code>" in shown


async def test_installed_but_not_named_limits_nothing(tmp_path: Path) -> None:
    workflow(tmp_path, None)
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[PingPlugin()]) as server:
        async with mcp.Client(server.url) as client:
            results = [await client.call_tool("ping", {}) for _ in range(30)]
    assert not any(result.is_error for result in results)
