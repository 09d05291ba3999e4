"""Two upstreams nobody here wrote under one ``lorenz serve``: ``mcp-server-time`` as ``time_`` and
``@modelcontextprotocol/server-everything`` as ``ev_``, driven with the official SDK client in both
protocol eras, over HTTP (a scoped token, a disabled tool, the call log) and over stdio."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp
import pytest
from mcp.client.stdio import StdioServerParameters

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

FULL, TIME_ONLY = "full-token-0123456789", "time-token-0123456789"
TIME_TOOLS = {"time_get_current_time", "time_convert_time"}
#: What server-everything serves under ``ev_`` that these tests call or look for.
EV_TOOLS = {"ev_get-structured-content", "ev_get-tiny-image"}
ERA = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def _workflow(time_server: list[str], everything_server: list[str], server: str = "") -> str:
    clock = {"provider": "mcp", "command": time_server, "prefix": "time_"}
    everything = {"provider": "mcp", "command": everything_server, "prefix": "ev_"}
    return (
        f"tools:\n  time: {json.dumps(clock)}\n  ev: {json.dumps(everything)}\n"
        f"server:\n  call_log: calls.jsonl\n  disabled_tools: [ev_echo]\n{server}"
    )


async def _names(client: mcp.Client, want: set[str]) -> set[str]:
    """The listed tool names once ``want`` is among them (an upstream may still be starting)."""
    deadline = time.monotonic() + 120  # a bound on the wait: a loaded machine starts them slowly
    while True:
        names = {tool.name for tool in (await client.list_tools()).tools}
        if want <= names or time.monotonic() > deadline:
            return names
        await anyio.sleep(0.2)


def _text(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _records(path: Path, count: int, stderr: str = "") -> list[dict[str, Any]]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return [json.loads(line) for line in lines]
        time.sleep(0.05)
    raise AssertionError(f"call log has fewer than {count} lines:\n{stderr}")


async def _session(url: str, token: str, mode: str) -> Any:
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    transport = mcp.client.streamable_http.streamable_http_client(url, http_client=http)
    return http, mcp.Client(transport, mode=mode)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_two_upstreams_over_http_with_a_scoped_token_and_a_disabled_tool(
    time_server: list[str], everything_server: list[str], serve: Any, tmp_path: Path, mode: str
) -> None:
    tokens = f"  token: {FULL}\n  tokens:\n    - {{token: $TIME_TOKEN, tools: [time_*], name: time-only}}\n"
    served = serve(_workflow(time_server, everything_server, tokens), {"TIME_TOKEN": TIME_ONLY})

    http, client = await _session(served.url, FULL, mode)
    async with http, client:
        assert client.protocol_version == ERA[mode]
        names = await _names(client, TIME_TOOLS | EV_TOOLS)
        assert names >= TIME_TOOLS | EV_TOOLS, served.stderr()
        assert all(name.startswith(("time_", "ev_")) for name in names), names
        assert "ev_echo" not in names  # server.disabled_tools
        now = await client.call_tool("time_get_current_time", {"timezone": "Europe/Paris"})
        assert now.is_error is False and now.structured_content is not None
        assert now.structured_content["timezone"] == "Europe/Paris"
        weather = await client.call_tool("ev_get-structured-content", {"location": "New York"})
        assert weather.is_error is False and weather.structured_content is not None
        assert "temperature" in weather.structured_content
        off = await client.call_tool("ev_echo", {"message": "hi"})
        assert off.is_error is True
        assert 'Tool "ev_echo" is disabled: switched off by the operator' in _text(off)

    http, client = await _session(served.url, TIME_ONLY, mode)
    async with http, client:
        assert await _names(client, TIME_TOOLS) == TIME_TOOLS
        scoped = await client.call_tool("time_get_current_time", {"timezone": "UTC"})
        assert scoped.is_error is False and scoped.structured_content is not None
        refused = await client.call_tool("ev_get-structured-content", {"location": "New York"})
        # A scoped token: the other upstream's tools do not exist for it.
        assert refused.is_error is True and refused.structured_content is not None
        error = refused.structured_content["error"]
        assert error["message"] == 'Unsupported tool: "ev_get-structured-content".'
        assert set(error["supportedTools"]) == TIME_TOOLS

    records = _records(tmp_path / "calls.jsonl", 5, served.stderr())
    answered = sorted((r["tool"], r["pack"], r["instance"]) for r in records if r["outcome"] == "success")
    assert answered == [
        ("ev_get-structured-content", "mcp", "ev"),
        ("time_get_current_time", "mcp", "time"),
        ("time_get_current_time", "mcp", "time"),
    ]
    assert sorted(r["tool"] for r in records if r["outcome"] != "success") == ["ev_echo", "ev_get-structured-content"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_two_upstreams_over_stdio(
    time_server: list[str], everything_server: list[str], tmp_path: Path, mode: str
) -> None:
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{_workflow(time_server, everything_server)}---\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-mcp"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorenz", "serve", "--stdio"], env=env, cwd=tmp_path
    )
    async with mcp.Client(params, mode=mode) as client:
        assert client.protocol_version == ERA[mode]
        names = await _names(client, TIME_TOOLS | EV_TOOLS)
        assert names >= TIME_TOOLS | EV_TOOLS and "ev_echo" not in names
        assert all(name.startswith(("time_", "ev_")) for name in names), names
        now = await client.call_tool("time_get_current_time", {"timezone": "UTC"})
        assert now.is_error is False and now.structured_content is not None
        assert now.structured_content["timezone"] == "UTC"
        image = await client.call_tool("ev_get-tiny-image", {})
        assert image.is_error is False and "image" in [block.type for block in image.content]
        off = await client.call_tool("ev_echo", {"message": "hi"})
        assert off.is_error is True and 'Tool "ev_echo" is disabled' in _text(off)

    records = _records(tmp_path / "calls.jsonl", 3)
    assert sorted((r["tool"], r["pack"], r["instance"]) for r in records if r["outcome"] == "success") == [
        ("ev_get-tiny-image", "mcp", "ev"),
        ("time_get_current_time", "mcp", "time"),
    ]
