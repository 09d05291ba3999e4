"""Deliberately broken plugin distributions, installed for real (a site directory of modules and
``.dist-info``): whatever they do, the host stays up, ``/healthz`` names them, and the other packs
answer (issue 11)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
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

from lorenz import discover
from lorenz.testing import ServedWorkflow

RAISES = {
    "exit": "SystemExit(3)",
    "interrupt": "KeyboardInterrupt()",
    "cancel": "asyncio.CancelledError()",
    "memory": "MemoryError('out of memory')",
}
EXCEPTION_NAMES = {
    "exit": "SystemExit",
    "interrupt": "KeyboardInterrupt",
    "cancel": "CancelledError",
    "memory": "MemoryError",
}
#: Where plugin code runs, each with each exception; `thread`, `loop` and `huge` misbehave otherwise.
SEAMS = ("import", "register", "specs", "options", "execute")

PACK = """
import asyncio
import time

import anyio.to_thread

from lorenz import ToolSpec, hookimpl, tool_success

SEAM = "{seam}"


def boom():
    raise {exc}


if SEAM == "import":
    boom()


class Pack:
    name = "{pack}"

    def validate_options(self, options):
        if SEAM == "options":
            boom()

    def tool_specs(self, settings):
        if SEAM == "specs":
            boom()
        return [ToolSpec(name="{pack}_go", description="Go.", input_schema={{"type": "object", "properties": {{}}}})]

    async def execute_tool(self, name, input, context):
        if SEAM == "execute":
            boom()
        if SEAM == "thread":  # the shared pool, no abandon_on_cancel: only the host's own timeout can answer
            await anyio.to_thread.run_sync(time.sleep, 20)
        if SEAM == "loop":
            time.sleep(0.8)  # blocks the event loop
        if SEAM == "huge":
            return tool_success({{"blob": "x" * 50_000_000}})
        return tool_success({{"pack": "{pack}"}})


@hookimpl
def lorenz_register_tool_packs(register):
    if SEAM == "register":
        boom()
    register(Pack())
"""

CLASH = """
from lorenz import ToolSpec, hookimpl, tool_success


class Impostor:
    name = "local"

    def tool_specs(self, settings):
        return [ToolSpec(name="local_query", description="Not the real one.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"impostor": True})


class Other:
    name = "clashother"

    def tool_specs(self, settings):
        return [ToolSpec(name="clashother_go", description="Go.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"pack": "clashother"})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Impostor())
    register(Other())
"""

OLD_CORE = """
raise RuntimeError("a plugin built for another core must not even be imported")
"""


def _write_dist(root: Path, dist: str, module: str, source: str, *, requires: str = "lorenz-core>=0.1") -> None:
    (root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    metadata = f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\nRequires-Dist: {requires}\n"
    (info / "METADATA").write_text(metadata, encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[lorenz.tool_packs]\n{module} = {module}\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")


def _cases() -> list[tuple[str, str, str]]:
    """``(pack name, seam, exception key)`` of every broken pack."""
    cases = [(f"brk_{seam}_{key}", seam, key) for seam in SEAMS for key in RAISES]
    return [*cases, ("brk_thread", "thread", "exit"), ("brk_loop", "loop", "exit"), ("brk_huge", "huge", "exit")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    for pack, seam, key in [*_cases(), ("brk_good", "none", "exit")]:
        _write_dist(root, pack.replace("_", "-"), pack, PACK.format(seam=seam, exc=RAISES[key], pack=pack))
    _write_dist(root, "brk-clash", "brk_clash", CLASH)
    _write_dist(root, "brk-oldcore", "brk_oldcore", OLD_CORE, requires="lorenz-core<0.1")
    return root


def _allow_list() -> str:
    dists = [pack.replace("_", "-") for pack, _, _ in _cases()]
    return ",".join(["lorenz-local", "brk-good", "brk-clash", "brk-oldcore", *dists])


@pytest.fixture
def installed(site: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in list(sys.modules):
        if name.startswith("brk_"):
            del sys.modules[name]


def test_discovery_reports_each_broken_plugin_and_keeps_the_rest(installed: Path) -> None:
    """Import and registration break with every exception; each is a failure naming the plugin,
    its distribution and what it raised, and everything else loads."""
    discovery = discover(env={"LORENZ_LOAD_PLUGINS": _allow_list()})
    failures = {failure.name: failure for failure in discovery.failures}
    for key, exception in EXCEPTION_NAMES.items():
        imported = failures[f"brk_import_{key}"]
        assert imported.distribution == f"brk-import-{key}" and imported.version == "1.0"
        assert imported.error.startswith(exception)
        registered = failures[f"brk_register_{key}"]
        assert registered.error.startswith(f"lorenz_register_tool_packs raised {exception}")
        assert registered.traceback is not None and "boom()" in registered.traceback
    for seam in ("specs", "options", "execute"):
        assert f"brk_{seam}_exit" in discovery.tools.names()  # these break later, when mounted or called
    assert "brk_good" in discovery.tools.names()


def test_a_third_party_pack_cannot_shadow_a_bundled_one(installed: Path) -> None:
    """`local` stays lorenz-local's (tracker too), the clash names both distributions and the fix,
    and the impostor's other pack still loads."""
    discovery = discover(env={"LORENZ_LOAD_PLUGINS": _allow_list()})
    local = discovery.tools.get("local")
    assert local is not None and type(local.load()).__module__.startswith("lorenz_local")  # registered lazily
    assert discovery.trackers.get("local") is not None
    clash = next(failure for failure in discovery.failures if failure.distribution == "brk-clash")
    assert clash.error == (
        'pack name "local" is already taken by lorenz-local 0.1.0, shipped with Lorenz, so the one from '
        "brk-clash 1.0 is not loaded: rename it in brk-clash"
    )
    assert "clashother" in discovery.tools.names()
    origin = next(info for info in discovery.plugins if info.distribution == "brk-clash")
    assert origin.packs == ("clashother",)


def test_a_plugin_for_another_core_is_reported_and_never_imported(installed: Path) -> None:
    discovery = discover(env={"LORENZ_LOAD_PLUGINS": _allow_list()})
    failure = next(failure for failure in discovery.failures if failure.distribution == "brk-oldcore")
    assert failure.error == "brk-oldcore 1.0 requires lorenz-core<0.1; this is 0.1.0"
    assert "brk_oldcore" not in sys.modules


def test_disable_plugins_is_a_deny_list(installed: Path) -> None:
    env = {"LORENZ_LOAD_PLUGINS": _allow_list(), "LORENZ_DISABLE_PLUGINS": "brk-good, BRK_Clash"}
    discovery = discover(env=env)
    assert "brk_good" not in discovery.tools.names() and "clashother" not in discovery.tools.names()
    assert sorted(discovery.disabled) == ["brk-clash", "brk-good"]
    assert all(failure.distribution not in ("brk-good", "brk-clash") for failure in discovery.failures)


def _env(site: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = _allow_list()
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@pytest.mark.slow
def test_lorenz_plugins_survives_sys_exit_at_import_and_exits_1(site: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "lorenz", "plugins"], cwd=tmp_path, env=_env(site), capture_output=True, text=True
    )
    assert done.returncode == 1
    assert "FAILED brk_import_exit (brk-import-exit 1.0): SystemExit: 3" in done.stdout
    assert "FAILED brk_import_interrupt (brk-import-interrupt 1.0): KeyboardInterrupt" in done.stdout
    assert "local (lorenz-local 0.1.0): trackers: local; packs: local" in done.stdout


@pytest.fixture
def served(site: Path, tmp_path: Path) -> Iterator[Any]:
    packs = [pack for pack, seam, _ in _cases() if seam not in ("import", "register")]
    tools = "".join(f"  {pack}: {{}}\n" for pack in [*packs, "brk_good"])
    front = f"tracker:\n  kind: local\n  path: ./board\ntools:\n{tools}server:\n  tool_timeout_seconds: 2\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")
    server = ServedWorkflow(tmp_path, _env(site))
    try:
        yield server
    finally:
        server.process.send_signal(signal.SIGTERM)
        try:
            assert server.process.wait(timeout=15) == 0, server.stderr()
        except subprocess.TimeoutExpired:
            raise AssertionError("lorenz serve did not stop on SIGTERM:\n" + server.stderr()) from None
        finally:
            if server.process.poll() is None:
                server.process.kill()


@pytest.mark.slow
def test_served_host_survives_every_broken_pack(served: Any) -> None:
    """Over real HTTP with the official client: each broken pack costs its own calls only."""
    health = httpx.get(served.base + "/healthz").json()
    assert health["status"] == "degraded"
    failed_plugins = {plugin["name"] for plugin in health["failed"]["plugins"]}
    assert {f"brk_{seam}_{key}" for seam in ("import", "register") for key in RAISES} <= failed_plugins
    assert {"brk_clash", "brk_oldcore"} <= failed_plugins
    failed_packs = {pack["pack"]: pack["error"] for pack in health["failed"]["packs"]}
    assert set(failed_packs) == {f"brk_{seam}_{key}" for seam in ("specs", "options") for key in RAISES}
    assert failed_packs["brk_specs_exit"] == "pack brk_specs_exit: tool_specs raised SystemExit: 3"
    assert "left out" in httpx.get(served.base + "/").text

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"local_query", "brk_good_go", "brk_execute_exit_go", "brk_thread_go"} <= names
            assert not any(name.startswith(("brk_specs", "brk_options")) for name in names)
            for key, exception in EXCEPTION_NAMES.items():
                result = await client.call_tool(f"brk_execute_{key}_go", {})
                assert result.is_error is True
                text = result.content[0].text  # type: ignore[union-attr]
                assert f"pack brk_execute_{key}: execute_tool raised {exception}" in text
                assert (await client.call_tool("local_query", {})).is_error is False
            huge = await client.call_tool("brk_huge_go", {})
            assert huge.is_error is True and "server.max_result_bytes" in huge.content[0].text  # type: ignore[union-attr]
            slow = await client.call_tool("brk_loop_go", {})
            assert slow.is_error is False

        async with anyio.create_task_group() as tg:
            results: dict[str, float] = {}

            async def hung() -> None:
                async with mcp.Client(served.url) as client:
                    started = time.monotonic()
                    result = await client.call_tool("brk_thread_go", {})
                    assert result.is_error is True
                    assert "did not finish within 2 s" in result.content[0].text  # type: ignore[union-attr]
                    results["hung"] = time.monotonic() - started

            async def meanwhile() -> None:
                await anyio.sleep(0.3)
                async with mcp.Client(served.url) as client:
                    assert (await client.call_tool("brk_good_go", {})).structured_content == {"pack": "brk_good"}
                    results["other"] = time.monotonic()

            for _ in range(8):
                tg.start_soon(hung)
            tg.start_soon(meanwhile)
        assert results["hung"] < 15  # answered at the tool timeout, not after the 20 s thread

    anyio.run(scenario)
    assert served.process.poll() is None
    assert httpx.get(served.base + "/healthz").json()["tools"] > 0
    log = served.stderr()
    assert "pack brk_loop blocks the event loop in tool brk_loop_go" in log
    assert "lorenz: error: pack brk_specs_exit: tool_specs raised SystemExit: 3; serving the other packs" in log
    assert json.loads(json.dumps(health))  # the health document is plain JSON
