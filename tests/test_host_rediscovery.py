"""A pack installed (or removed) while `lorenz serve` runs: discovery re-runs on its own, so the
new pack can be mounted by editing WORKFLOW.md, without a restart (issue 13)."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp
import pytest

from lorenz.host import serve_in_thread

pytestmark = pytest.mark.anyio

ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-local,lorenz-latecomer,lorenz-sharer"}

LATECOMER = """
from lorenz import ToolSpec, hookimpl, tool_success


class Latecomer:
    name = "latecomer"

    def tool_specs(self, settings):
        return [ToolSpec(name="TOOL", description="Say hello.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"hello": "VERSION"})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Latecomer())
"""

SHARER = """
from lorenz import ToolSpec, hookimpl, tool_success


class Sharer:
    name = "sharer"

    def tool_specs(self, settings):
        return [ToolSpec(name="sharer_hello", description="Say hello too.")]

    async def execute_tool(self, name, input, context):
        return tool_success({})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Sharer())
"""


def install(site: Path, version: str = "1.0", tool: str = "latecomer_hello") -> None:
    """What `pip install` leaves behind: the module and its `.dist-info` (the directory's mtime moves);
    a previous version's `.dist-info` is replaced, as an upgrade does."""
    for old in site.glob("lorenz_latecomer-*.dist-info"):
        shutil.rmtree(old)
    code = textwrap.dedent(LATECOMER).replace("TOOL", tool).replace("VERSION", version)
    (site / "lorenz_latecomer.py").write_text(code, encoding="utf-8")
    _dist_info(site, "lorenz-latecomer", version, "latecomer = lorenz_latecomer", ["lorenz_latecomer.py"])
    _touch(site)


def install_sharer(site: Path) -> None:
    """A distribution whose files include lorenz_latecomer's module: the two share it."""
    (site / "lorenz_sharer.py").write_text(textwrap.dedent(SHARER), encoding="utf-8")
    _dist_info(site, "lorenz-sharer", "1.0", "sharer = lorenz_sharer", ["lorenz_sharer.py", "lorenz_latecomer.py"])
    _touch(site)


def _dist_info(site: Path, name: str, version: str, entry_point: str, files: list[str]) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[lorenz.tool_packs]\n{entry_point}\n", encoding="utf-8")
    record = [*(f"{file},," for file in files), f"{info.name}/RECORD,,"]
    (info / "RECORD").write_text("\n".join(record) + "\n", encoding="utf-8")


def uninstall(site: Path) -> None:
    for info in site.glob("lorenz_latecomer-*.dist-info"):
        shutil.rmtree(info)
    (site / "lorenz_latecomer.py").unlink()
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
    sys.modules.pop("lorenz_sharer", None)


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
            news = "installed plugins changed (new: lorenz-latecomer"  # logged by the server's thread
            with anyio.fail_after(10):  # the environment is looked at once a second
                while not any(news in record.message for record in caplog.records):  # noqa: ASYNC110
                    await anyio.sleep(0.05)
            write_workflow(workflow, tmp_path / "board", "tools:\n  latecomer: {}\n")
            assert "latecomer_hello" in await eventually(server.url, want=True)
        async with mcp.Client(server.url) as client:
            result = await client.call_tool("latecomer_hello", {})
            assert result.structured_content == {"hello": "1.0"}

        # Uninstalled while mounted: its tools go, and the server says why (degraded, not a failed reload).
        with caplog.at_level(logging.WARNING, logger="lorenz.host"):
            uninstall(site)
            assert "latecomer_hello" not in await eventually(server.url, want=False)
        assert any("lorenz-latecomer 1.0 was uninstalled" in r.message for r in caplog.records)
        assert server.live.last_error is None
        async with httpx.AsyncClient() as http:
            health = (await http.get(server.base_url + "/healthz")).json()
        assert health["status"] == "degraded" and health["reloadFailed"] is False
        (failed,) = health["failed"]["packs"]
        assert failed["pack"] == "latecomer"
        assert "lorenz-latecomer 1.0 was uninstalled while lorenz serve ran" in failed["error"]
        assert "lorenz_latecomer" not in sys.modules, "a later install imports its own code"

        # Installed again: served again, healthy.
        install(site)
        assert "latecomer_hello" in await eventually(server.url, want=True)
        async with httpx.AsyncClient() as http:
            assert (await http.get(server.base_url + "/healthz")).json()["status"] == "ok"


async def test_an_upgrade_while_serving_imports_the_new_code(tmp_path: Path, site: Path) -> None:
    workflow = tmp_path / "WORKFLOW.md"
    install(site)
    write_workflow(workflow, tmp_path / "board", "tools:\n  latecomer: {}\n")
    with serve_in_thread(workflow, cwd=tmp_path, env=ENV) as server:
        async with mcp.Client(server.url) as client:
            assert (await client.call_tool("latecomer_hello", {})).structured_content == {"hello": "1.0"}
        install(site, "2.0", tool="latecomer_greet")
        assert "latecomer_greet" in await eventually(server.url, want=True, tool="latecomer_greet")
        assert "latecomer_hello" not in await names(server.url)
        async with mcp.Client(server.url) as client:
            assert (await client.call_tool("latecomer_greet", {})).structured_content == {"hello": "2.0"}


async def test_an_upgrade_of_shared_modules_says_a_restart_is_needed(
    tmp_path: Path, site: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Another loaded distribution holds the same module: importing it afresh would change that one's
    code under it, so the old code keeps serving and the server says loudly that a restart is needed."""
    workflow = tmp_path / "WORKFLOW.md"
    install(site)
    install_sharer(site)
    write_workflow(workflow, tmp_path / "board", "tools:\n  latecomer: {}\n  sharer: {}\n")
    with serve_in_thread(workflow, cwd=tmp_path, env=ENV) as server:
        assert "latecomer_hello" in await names(server.url)
        with caplog.at_level(logging.WARNING, logger="lorenz.host"):
            install(site, "2.0", tool="latecomer_greet")
            deadline = time.monotonic() + 10
            health: dict[str, object] = {}
            async with httpx.AsyncClient() as http:
                while health.get("status") != "degraded" and time.monotonic() < deadline:
                    health = (await http.get(server.base_url + "/healthz")).json()
                    await anyio.sleep(0.2)
                page = (await http.get(server.base_url + "/")).text
        warnings = [r.message for r in caplog.records if r.levelno == logging.WARNING]
        assert any("restart needed: lorenz-latecomer 1.0 was replaced by 2.0" in m for m in warnings), warnings
        assert health["status"] == "degraded", health
        (notice,) = health["restartNeeded"]  # type: ignore[misc]
        assert notice["distribution"] == "lorenz-latecomer" and notice["version"] == "2.0"
        assert "also belongs to lorenz-sharer" in notice["reason"]
        assert 'id="restart-needed"' in page and "restart lorenz serve to load it" in page
        assert "latecomer_hello" in await names(server.url), "the code loaded keeps serving"


def _watching_every_look(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment looked at on every :meth:`LiveWorkspace.changed`, not once a second."""
    import functools

    from lorenz.host.reload import live as live_module
    from lorenz.host.reload.installed import InstalledWatch

    monkeypatch.setattr(live_module, "InstalledWatch", functools.partial(InstalledWatch, every=0))


def test_a_site_directory_touched_without_a_plugin_change_reloads_nothing(
    tmp_path: Path, site: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 44: the log repeated ``installed plugins changed (new: -; gone: -; changed: -)`` with a
    reload each time a site directory's mtime moved (a library installed, a file written there)."""
    from lorenz.host import LiveWorkspace

    _watching_every_look(monkeypatch)
    write_workflow(tmp_path / "WORKFLOW.md", tmp_path / "board")
    live = LiveWorkspace.open(cwd=tmp_path, env=ENV)
    try:
        before = live.snapshot()
        (site / "some_library.py").write_text("", encoding="utf-8")
        _touch(site)
        with caplog.at_level(logging.INFO, logger="lorenz.host"):
            assert live.changed() is True  # the mtime moved: worth a look
            assert live.check() is False
        assert live.snapshot() is before
        assert not [
            r.message for r in caplog.records if "installed plugins changed" in r.message or "reloaded" in r.message
        ]
    finally:
        asyncio.run(live.aclose())


def test_an_edit_made_while_a_reload_loads_that_mounts_a_new_pack_is_served(
    tmp_path: Path, site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reload's discovery imports only what the workflow mounted when it ran; an edit that lands
    while that reload loads and mounts another pack is served with the pack (it once loaded
    without it, and the edit was taken as seen: 1 run in ~15 under load)."""
    from lorenz.host import LiveWorkspace

    _watching_every_look(monkeypatch)
    workflow, board = tmp_path / "WORKFLOW.md", tmp_path / "board"
    write_workflow(workflow, board)
    live = LiveWorkspace.open(cwd=tmp_path, env=ENV)
    try:
        install(site)
        load = live._load
        edits = iter([lambda: write_workflow(workflow, board, "tools:\n  latecomer: {}\n")])

        def load_while_edited(discovery: Any = None) -> Any:
            loaded = load(discovery)
            next(edits, lambda: None)()  # the user saves the workflow as the reload reads it
            return loaded

        monkeypatch.setattr(live, "_load", load_while_edited)
        assert live.changed() is True and live.check() is True
        assert "latecomer_hello" in {spec.name for spec in live.snapshot().specs}
        assert live.check() is False  # and the edit is taken as served
    finally:
        asyncio.run(live.aclose())


def test_a_reinstall_of_the_same_version_is_named_so() -> None:
    """Issue 44: not ``changed: lorenz-local 0.1.0 -> 0.1.0``."""
    from lorenz.host.reload.packages import PluginDistribution, plan_reload

    def dist(record: str) -> PluginDistribution:
        return PluginDistribution(
            key="lorenz-local",
            name="lorenz-local",
            version="0.1.0",
            record=record,
            modules=frozenset(),
            requires=frozenset(),
        )

    plan = plan_reload({"lorenz-local": dist("a")}, {"lorenz-local": dist("b")})
    assert plan.summary() == "new: -; gone: -; changed: lorenz-local 0.1.0 reinstalled"


def test_reloading_the_embedded_default_names_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 44: ``reloaded …/WORKFLOW.md`` was logged while serving the embedded default (no such file)."""
    from lorenz.host import LiveWorkspace

    monkeypatch.chdir(tmp_path)
    live = LiveWorkspace.open(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": "lorenz-local"})
    try:
        assert live.snapshot().workspace.embedded_default
        live.remount()
        with caplog.at_level(logging.INFO, logger="lorenz.host"):
            assert live.check() is True
        (reloaded,) = [r.getMessage() for r in caplog.records if "reloaded" in r.getMessage()]
        assert reloaded.startswith("lorenz: reloaded the embedded default: ")
        assert "WORKFLOW.md" not in reloaded
    finally:
        asyncio.run(live.aclose())
