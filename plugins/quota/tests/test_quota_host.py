"""lorenz-quota installed (its entry point) and named by a workflow, over the official SDK client:
N calls over t seconds accept R·t + B and refuse the rest with ``retryAfter``, in one worker, with
the memory backend and with Redis; and installed but not named, it limits nothing."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import mcp
import pytest

from lorenz import ToolSpec, hookimpl, tool_success
from lorenz.host import serve_in_thread

sys.path.insert(0, str(Path(__file__).parent))
from hammer import hammer
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


def workflow(directory: Path, quota: str | None) -> None:
    server = ""
    if quota is not None:
        server = f"server:\n  middleware: [quota]\n  middleware_options:\n    quota:\n{quota}"
    (directory / "WORKFLOW.md").write_text(f"---\ntools:\n  ping: {{}}\n{server}---\n")


@pytest.mark.parametrize("backend", ["memory", "redis"])
async def test_rate_and_burst_over_the_sdk_client(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    rate, burst = 10, 10
    where = f"      backend: redis\n      url: {request.getfixturevalue('redis_url')}\n" if backend == "redis" else ""
    workflow(tmp_path, f"{where}      limits:\n        - {{tools: [ping], rate: {rate}, burst: {burst}}}\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[PingPlugin()]) as server:
        async with mcp.Client(server.url) as client:
            tally = await hammer([client], rate, burst)
        async with httpx.AsyncClient() as http:
            health = (await http.get(server.base_url + "/healthz")).json()
            page = (await http.get(server.base_url + "/")).text
    accepted, refusals = tally.accepted, tally.refusals
    assert all(e["reason"] == "rate_limited" and 0 < e["retryAfter"] <= 1 / rate for e in refusals), refusals
    assert len(refusals) >= 10  # the calls outran the limit
    assert tally.least - 0.05 * tally.least - 1 <= accepted <= tally.most + 0.05 * tally.most + 1, tally
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
