"""A pack installed (or removed) while `lorenz serve` runs: discovery re-runs on its own, so the
new pack can be mounted by editing WORKFLOW.md, without a restart (issue 13)."""

from __future__ import annotations

import logging
import os
import shutil
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import mcp
import pytest

from lorenz.host import serve_in_thread

pytestmark = pytest.mark.anyio

ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-local,lorenz-latecomer"}

LATECOMER = """
from lorenz import ToolSpec, hookimpl, tool_success


class Latecomer:
    name = "latecomer"

    def tool_specs(self, settings):
        return [ToolSpec(name="latecomer_hello", description="Say hello.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"hello": "world"})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Latecomer())
"""


def install(site: Path) -> None:
    """What `pip install` leaves behind: the module and its `.dist-info` (the directory's mtime moves)."""
    (site / "lorenz_latecomer.py").write_text(textwrap.dedent(LATECOMER), encoding="utf-8")
    info = site / "lorenz_latecomer-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lorenz-latecomer\nVersion: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[lorenz.tool_packs]\nlatecomer = lorenz_latecomer\n", encoding="utf-8")
    _touch(site)


def uninstall(site: Path) -> None:
    shutil.rmtree(site / "lorenz_latecomer-1.0.dist-info")
    _touch(site)


def _touch(directory: Path) -> None:
    stamp = directory.stat().st_mtime_ns + 1_000_000_000  # a change within one clock tick still shows
    os.utime(directory, ns=(stamp, stamp))


def write_workflow(path: Path, board: Path, tools: str = "") -> None:
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(f"---\ntracker:\n  kind: local\n  path: {board}\n{tools}---\n", encoding="utf-8")
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    directory = tmp_path / "site"
    directory.mkdir()
    monkeypatch.syspath_prepend(str(directory))
    yield directory
    sys.modules.pop("lorenz_latecomer", None)


async def names(url: str) -> list[str]:
    async with mcp.Client(url) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


async def eventually(url: str, want: bool, tool: str = "latecomer_hello", seconds: float = 10) -> list[str]:
    deadline = time.monotonic() + seconds
    while True:
        listed = await names(url)
        if (tool in listed) == want or time.monotonic() > deadline:
            return listed
        await anyio.sleep(0.2)


async def test_a_pack_installed_while_serving_can_be_mounted_without_a_restart(
    tmp_path: Path, site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    workflow = tmp_path / "WORKFLOW.md"
    write_workflow(workflow, tmp_path / "board")
    with serve_in_thread(workflow, cwd=tmp_path, env=ENV) as server:
        assert "latecomer_hello" not in await names(server.url)
        with caplog.at_level(logging.INFO, logger="lorenz.host"):
            install(site)
            await anyio.sleep(1.5)  # the environment is looked at once a second
            write_workflow(workflow, tmp_path / "board", "tools:\n  latecomer: {}\n")
            assert "latecomer_hello" in await eventually(server.url, want=True)
        assert any("installed plugins changed (new: lorenz-latecomer" in r.message for r in caplog.records)
        async with mcp.Client(server.url) as client:
            result = await client.call_tool("latecomer_hello", {})
            assert result.structured_content == {"hello": "world"}

        # Uninstalled while mounted: reported, and the last good config keeps serving.
        with caplog.at_level(logging.ERROR, logger="lorenz.host"):
            uninstall(site)
            deadline = time.monotonic() + 10
            while server.live.last_error is None and time.monotonic() < deadline:
                await names(server.url)
                await anyio.sleep(0.2)
        assert server.live.last_error is not None and "latecomer" in server.live.last_error
        assert "latecomer_hello" in await names(server.url)
        async with httpx.AsyncClient() as http:
            assert (await http.get(server.base_url + "/healthz")).json()["reloadFailed"] is True
