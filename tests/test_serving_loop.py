"""``lorenz.serving_loop()``: while a host that serves on a loop of its own (``lorenz serve``) mounts a
workflow, a pack's hooks are told that loop, the one its calls will run on; anywhere else, ``None``."""

from __future__ import annotations

import asyncio
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import lorenz
from lorenz import ToolContext, ToolResult, ToolSpec, hookimpl, tool_success
from lorenz.host.startup import open_live
from lorenz.isolation.pool import IsolationPool
from lorenz.plugins.discovery import discover
from lorenz.settings.model import Settings
from lorenz.workspace import open_workspace


class Seer:
    """A pack noting the loop ``serving_loop()`` names when it is mounted."""

    name = "seer"

    def __init__(self) -> None:
        self.mounted: list[asyncio.AbstractEventLoop | None] = []

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        self.mounted.append(lorenz.serving_loop())
        return [ToolSpec(name="seer_look", description="Look.", input_schema={"type": "object"})]

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        return tool_success({})


def _plugin(pack: Seer) -> types.ModuleType:
    plugin = types.ModuleType("seer_plugin")

    @hookimpl
    def lorenz_register_tool_packs(register: Any) -> None:
        register(pack)

    plugin.lorenz_register_tool_packs = lorenz_register_tool_packs  # type: ignore[attr-defined]
    return plugin


@pytest.fixture
def workflow(tmp_path: Path) -> Path:
    path = tmp_path / "WORKFLOW.md"
    path.write_text("---\ntools:\n  seer: {}\n---\nLook.\n", encoding="utf-8")
    return path


def test_a_mount_for_a_host_serving_on_its_own_loop_is_told_that_loop(workflow: Path) -> None:
    pack = Seer()
    discovery = discover(plugins=[_plugin(pack)], entry_points_enabled=False)
    loop = asyncio.new_event_loop()
    try:
        open_workspace(workflow, cwd=workflow.parent, env={}, discovery=discovery, isolation=IsolationPool(loop))
        open_workspace(workflow, cwd=workflow.parent, env={}, discovery=discovery)  # the shared isolation loop
    finally:
        loop.close()
    assert pack.mounted == [loop, None]
    assert lorenz.serving_loop() is None  # only while mounting


def test_lorenz_serve_mounts_with_the_loop_it_then_serves_on(workflow: Path) -> None:
    pack = Seer()
    live = open_live(workflow, cwd=workflow.parent, env={}, plugins=[_plugin(pack)], reload=False, warn=False)

    async def serving() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    try:
        served_on = live.run_host(serving())
    finally:
        live.run_host(live.aclose())
    assert pack.mounted == [served_on]


def test_an_app_another_servers_loop_runs_is_told_none(workflow: Path) -> None:
    pack = Seer()
    live = open_live(
        workflow, cwd=workflow.parent, env={}, plugins=[_plugin(pack)], reload=False, warn=False, own_loop=False
    )
    live.run_host(live.aclose())
    assert pack.mounted == [None]
