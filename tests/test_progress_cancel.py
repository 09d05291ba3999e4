"""Progress and cancellation for packs (issue 15): ``ctx.progress`` reaches the client as ordered
``notifications/progress``, and a call the client cancels cancels the pack's task."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp
import pytest
from mcp import StdioServerParameters

from lorenz.host import serve_in_thread

pytestmark = pytest.mark.anyio

PACK = """
import pathlib

import anyio

from lorenz import ToolSpec, hookimpl, tool_success

MARK = pathlib.Path({mark!r})


class Slow:
    name = "slow"

    def tool_specs(self, settings):
        return [ToolSpec(name="slow_count", description="Count to three."),
                ToolSpec(name="slow_wait", description="Wait until cancelled.")]

    async def execute_tool(self, name, input, context):
        if name == "slow_count":
            for done in (1, 2, 3):
                await context.progress(done, 3, f"step {{done}}")
            return tool_success({{"counted": 3}})
        MARK.write_text("started")
        try:
            await anyio.sleep(60)
        except BaseException:
            MARK.write_text("cancelled")
            raise
        return tool_success()


class Tracker:
    kind = "slowtracker"

    def create_client(self, settings, context):
        raise NotImplementedError

    def default_tool_packs(self, settings):
        return ["slow"]


@hookimpl
def lorenz_register_tool_packs(register):
    register(Slow())


@hookimpl
def lorenz_register_trackers(register):
    register(Tracker())
"""


@pytest.fixture(params=[False, True], ids=["stateless", "stateful"])
def workdir(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "lorenz_slowpack.py").write_text(textwrap.dedent(PACK.format(mark=str(tmp_path / "mark"))))
    stateful = str(request.param).lower()
    front = f"tracker:\n  kind: slowtracker\nserver:\n  json_response: false\n  stateful: {stateful}\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("lorenz_slowpack", None)


async def _cancelled(mark: Path) -> None:
    def seen() -> bool:
        return mark.exists() and mark.read_text() == "cancelled"

    with anyio.fail_after(10):
        while not await anyio.to_thread.run_sync(seen):  # noqa: ASYNC110 - another process writes it
            await anyio.sleep(0.05)


async def _scenario(client: mcp.Client, mark: Path, *, cancel: bool = True) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    result = await client.call_tool("slow_count", {}, progress_callback=on_progress)
    assert result.structured_content == {"counted": 3}
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]

    if cancel:
        with anyio.move_on_after(1.0):
            await client.call_tool("slow_wait", {})
        await _cancelled(mark)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_over_http(workdir: Path, mode: str) -> None:
    import lorenz_slowpack  # type: ignore[import-not-found]

    stateless = "stateful: false" in (workdir / "WORKFLOW.md").read_text()
    with serve_in_thread(cwd=workdir, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[lorenz_slowpack]) as server:
        # A stateless handshake-era request has no session to send notifications/cancelled to: its
        # client cancels by dropping the connection, which the host turns into the cancellation.
        by_drop = stateless and mode == "legacy"
        async with mcp.Client(server.url, mode=mode) as client:
            await _scenario(client, workdir / "mark", cancel=not by_drop)
        if by_drop:
            headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow_wait", "arguments": {}}}
            async with httpx.AsyncClient(headers=headers, timeout=1.0) as http:
                with pytest.raises(httpx.ReadTimeout):
                    await http.post(server.url, json=call)
            await _cancelled(workdir / "mark")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_over_stdio(workdir: Path, mode: str) -> None:
    if "stateful: true" in (workdir / "WORKFLOW.md").read_text():
        return  # stdio is one session either way: the stateless run covers it
    env: dict[str, Any] = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update(LORENZ_LOAD_PLUGINS="", PYTHONPATH=os.pathsep.join([str(workdir), env.get("PYTHONPATH", "")]))
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorenz", "-p", "lorenz_slowpack", "serve", "--stdio"], env=env, cwd=workdir
    )
    async with mcp.Client(params, mode=mode) as client:
        await _scenario(client, workdir / "mark")


@pytest.fixture
def default_workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "lorenz_slowpack.py").write_text(textwrap.dedent(PACK.format(mark=str(tmp_path / "mark"))))
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: slowtracker\n---\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("lorenz_slowpack", None)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_progress_arrives_with_the_default_json_responses(default_workdir: Path, mode: str) -> None:
    """A request with a ``progressToken`` is answered as an SSE stream carrying its progress; one
    without stays a single JSON body."""
    import lorenz_slowpack  # type: ignore[import-not-found]

    with serve_in_thread(cwd=default_workdir, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[lorenz_slowpack]) as server:
        async with mcp.Client(server.url, mode=mode) as client:
            await _scenario(client, default_workdir / "mark", cancel=False)
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
        params: dict[str, Any] = {"name": "slow_count", "arguments": {}}
        async with httpx.AsyncClient(headers=headers, timeout=10.0) as http:
            plain = await http.post(
                server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
            )
            asked = {**params, "_meta": {"progressToken": "p1"}}
            streamed = await http.post(
                server.url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": asked}
            )
    assert plain.headers["content-type"].startswith("application/json")
    assert plain.json()["result"]["structuredContent"] == {"counted": 3}
    assert streamed.headers["content-type"].startswith("text/event-stream")
    events = [line.removeprefix("data: ") for line in streamed.text.splitlines() if line.startswith("data: ")]
    assert [event.count('"notifications/progress"') for event in events] == [1, 1, 1, 0]
    assert '"counted":3' in events[-1].replace(" ", "")
