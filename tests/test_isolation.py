"""Isolated packs with real child processes, the host in this process (issue 17): whatever an
isolated pack does to its process, its call gets an ``isError`` result within the timeout, the
host and the other packs keep answering, the process is restarted, and nothing is left behind."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from lorenz.contracts import ToolContext
from lorenz.host.ops.status import health_data
from lorenz.host.reload.live import LiveWorkspace
from lorenz.isolation.proxy import IsolatedPack
from lorenz.isolation.supervisor import MAX_CRASHES
from lorenz.plugins.discovery import discover
from lorenz.results import ToolResult
from lorenz.settings import ConfigError
from lorenz.toolcall.execution import CallOutcome, ClientGone, ToolRunner
from lorenz.workspace import Workspace, open_workspace

pytestmark = pytest.mark.slow

ALLOWED = "lorenz-local,iso-acme,iso-beta"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, isolation_packs: ModuleType) -> Path:
    root: Path = isolation_packs.write_site(tmp_path_factory.mktemp("isolation-site"))
    return root


@pytest.fixture
def installed(site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)  # the local board's ./board, in the host and in a child alike
    yield site
    for name in list(sys.modules):
        if name.startswith("iso_"):
            del sys.modules[name]


def _env(allowed: str = ALLOWED, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    return {**env, "LORENZ_LOAD_PLUGINS": allowed, **extra}


@pytest.fixture
def workspace(installed: Path, tmp_path: Path, isolation_packs: ModuleType) -> Iterator[Workspace]:
    isolation_packs.workflow(tmp_path)
    opened = open_workspace(cwd=tmp_path, env=_env())
    try:
        yield opened
    finally:
        pids = _isolated_pids(opened.mounted.packs)
        opened.close()
        assert all(isolation_packs.gone(pid) for pid in pids)


@pytest.fixture
def live(installed: Path, tmp_path: Path, isolation_packs: ModuleType) -> Iterator[LiveWorkspace]:
    """The workflow as ``lorenz serve`` holds it: reloaded from disk by ``check()``."""
    isolation_packs.workflow(tmp_path)
    served = LiveWorkspace.open(cwd=tmp_path, env=_env())
    try:
        yield served
    finally:
        pids = _isolated_pids(served.snapshot().packs)
        asyncio.run(served.aclose())
        assert all(isolation_packs.gone(pid) for pid in pids)


def _isolated_pids(packs: Any) -> list[int]:
    return [pid for pack in packs if isinstance(pack, IsolatedPack) for pid in _pids(pack)]


def _pids(pack: Any) -> list[int]:
    pids: list[int] = pack.status()["pids"]
    return pids


def _proxy(workspace: Workspace, name: str) -> IsolatedPack:
    pack = next(pack for pack in workspace.mounted.packs if pack.name == name)
    assert isinstance(pack, IsolatedPack)
    return pack


def _restarted(pack: IsolatedPack, old: list[int], within: float = 30.0) -> list[int]:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        status = pack.status()
        if status["state"] == "running" and status["pids"] and not set(status["pids"]) & set(old):
            return _pids(pack)
        time.sleep(0.05)
    raise AssertionError(f"not restarted: {pack.status()}")


async def _call(workspace: Workspace, tool: str, arguments: Any = None) -> ToolResult:
    async with httpx.AsyncClient() as http:
        return await workspace.call(tool, {} if arguments is None else arguments, http)


def call(workspace: Workspace, tool: str, arguments: Any = None) -> ToolResult:
    return asyncio.run(_call(workspace, tool, arguments))


def _flooded(records: list[logging.LogRecord]) -> tuple[list[str], int]:
    """acme's logged stderr lines, and how many lines the notes say were dropped."""
    lines = [record.getMessage() for record in records if record.getMessage().startswith("lorenz: pack acme [pid")]
    notes = [re.search(r": (\d+) lines of its stderr dropped", line) for line in lines]
    dropped = sum(int(note[1]) for note in notes if note is not None)
    return [line for line, note in zip(lines, notes, strict=True) if note is None], dropped


def _message(result: ToolResult) -> str:
    assert not result.success, result
    return str(result.error)


def test_an_isolated_pack_is_served_from_its_own_process_and_never_imported_here(workspace: Workspace) -> None:
    assert "iso_acme" not in sys.modules and "iso_beta" not in sys.modules
    assert workspace.pack_names() == ["local", "acme", "beta"]
    assert "acme_segv" in workspace.tool_owners() and workspace.tool_owners()["beta_pid"] == "beta"
    acme = _proxy(workspace, "acme")
    pid = call(workspace, "acme_pid").result["pid"]
    assert pid != os.getpid() and _pids(acme) == [pid]
    assert call(workspace, "beta_pid").result["pid"] not in (pid, os.getpid())
    assert call(workspace, "local_query").success  # a bundled pack stays in the host
    origin = next(info for info in workspace.discovery.plugins if info.distribution == "iso-acme")
    assert origin.packs == ("acme",) and origin.version == "1.0"
    assert call(workspace, "acme_echo", {"text": "hé ✓", "n": [1.5, None]}).result["input"] == {
        "text": "hé ✓",
        "n": [1.5, None],
    }
    status = acme.status()
    assert status["state"] == "running" and status["restarts"] == 0


MISBEHAVIOURS = {
    "segv": "pack acme crashed (signal 11); restarted",
    "exit": "pack acme crashed (exit code 3); restarted",
    "alloc": "pack acme ran out of memory (server.pack_memory_mb: 512); restarted",
    "spin": "tool acme_spin did not finish within 2 s",
    "thread": "tool acme_thread did not finish within 2 s",
}


@pytest.mark.parametrize("tool", list(MISBEHAVIOURS))
def test_a_pack_that_takes_its_process_down_costs_only_its_call(
    workspace: Workspace, tool: str, isolation_packs: ModuleType
) -> None:
    acme = _proxy(workspace, "acme")
    before = _pids(acme)

    async def scenario() -> dict[str, Any]:
        started = time.monotonic()
        bad = asyncio.ensure_future(_call(workspace, f"acme_{tool}"))
        await asyncio.sleep(0.3)
        others = [await _call(workspace, "beta_pid"), await _call(workspace, "local_query")]  # while acme misbehaves
        result = await bad
        return {"result": result, "seconds": time.monotonic() - started, "others": others}

    outcome = asyncio.run(scenario())
    assert MISBEHAVIOURS[tool] in _message(outcome["result"])
    assert outcome["seconds"] < 2 + 3  # at the tool timeout at the latest, never a hang
    assert all(other.success for other in outcome["others"])
    after = _restarted(acme, before)
    assert all(isolation_packs.gone(pid) for pid in before)
    assert call(workspace, "acme_pid").result["pid"] == after[0]
    assert acme.status()["restarts"] == 1


def test_calls_are_multiplexed_over_the_pipe(workspace: Workspace) -> None:
    async def eight() -> list[ToolResult]:
        meet = {"seconds": 20, "meet": 8}  # each waits until all eight are in the process at once
        return list(await asyncio.gather(*(_call(workspace, "acme_sleep", meet) for _ in range(8))))

    results = asyncio.run(eight())
    assert all(result.success for result in results)
    assert len({result.result["pid"] for result in results}) == 1  # one process
    # yet not one call after another: one at a time, the first would have waited its 20 s alone
    assert all(result.result["met"] for result in results)


def test_a_slow_call_does_not_hold_up_a_quick_one(workspace: Workspace) -> None:
    async def scenario() -> float:
        slow = asyncio.ensure_future(_call(workspace, "acme_sleep", {"seconds": 1.5}))
        await asyncio.sleep(0.1)
        started = time.monotonic()
        assert (await _call(workspace, "acme_pid")).success
        quick = time.monotonic() - started
        assert (await slow).success
        return quick

    assert asyncio.run(scenario()) < 1.0


class _Gates:
    """Two FIFOs an ``acme_write`` call meets: ``began`` (it writes a byte once it is at work) and
    ``gate`` (it waits for a byte before it writes ``out``)."""

    def __init__(self, directory: Path) -> None:
        self.out = directory / "out"
        os.mkfifo(directory / "began")
        os.mkfifo(directory / "gate")
        # Opened read-write: the pack's process opens them without blocking, whatever happens here.
        self._began = os.open(directory / "began", os.O_RDWR | os.O_NONBLOCK)
        self._gate = os.open(directory / "gate", os.O_RDWR)
        self.arguments = {"began": str(directory / "began"), "gate": str(directory / "gate"), "out": str(self.out)}

    async def began(self) -> None:
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        loop.add_reader(self._began, lambda: ready.done() or ready.set_result(None))
        try:
            await asyncio.wait_for(ready, 30)
        finally:
            loop.remove_reader(self._began)

    def open(self) -> None:
        os.write(self._gate, b"g")

    def close(self) -> None:
        os.close(self._began)
        os.close(self._gate)


class _Wrapped:
    """An isolated pack behind another (as a ``tools:`` instance wraps it): the runner runs its
    calls as tasks of their own, as it does an in-process pack's."""

    def __init__(self, pack: IsolatedPack) -> None:
        self.name = pack.name
        self._pack = pack

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        return await self._pack.execute_tool(name, input, context)


def _left_after_it_began(
    workspace: Workspace, gates: _Gates, via: str, *, wrapped: bool = False
) -> tuple[CallOutcome, ClientGone]:
    """An ``acme_write`` call whose caller leaves once it began; the gate opens after that. How the
    runner then says the call ended (what the call log records, with ``clientGone``)."""

    async def scenario() -> tuple[CallOutcome, ClientGone]:
        reported: asyncio.Future[CallOutcome] = asyncio.get_running_loop().create_future()
        left = ClientGone(reported.set_result)
        async with httpx.AsyncClient() as http:
            context = ToolContext(settings=workspace.settings, http=http)
            arguments = {**gates.arguments, "via": via}
            acme = _proxy(workspace, "acme")
            run = ToolRunner().run(
                _Wrapped(acme) if wrapped else acme,
                "acme_write",
                arguments,
                context,
                time_limit=30,
                concurrency=2,
                when_left=left,
            )
            caller = asyncio.ensure_future(run)
            await gates.began()
            caller.cancel()
            with pytest.raises(asyncio.CancelledError):
                await caller
            gates.open()
            return await asyncio.wait_for(reported, 30), left

    try:
        return asyncio.run(scenario())
    finally:
        gates.close()


@pytest.mark.parametrize(("via", "wrapped"), [("run_in_thread", False), ("asyncio", False), ("run_in_thread", True)])
def test_an_isolated_call_whose_caller_left_is_reported_as_its_work_ended(
    workspace: Workspace, tmp_path: Path, via: str, wrapped: bool
) -> None:
    """The pack's thread writes after the caller left (a cancel cannot stop a thread): the call
    ended in a write, so it is reported ``success`` with the pack's result, never ``cancelled``."""
    gates = _Gates(tmp_path)
    outcome, left = _left_after_it_began(workspace, gates, via, wrapped=wrapped)
    assert left.following
    assert gates.out.read_text() == "written"
    assert (outcome.kind, outcome.result.result) == ("success", {"written": True})


def test_an_isolated_call_stopped_by_its_caller_leaving_is_reported_cancelled(
    workspace: Workspace, tmp_path: Path
) -> None:
    """The cancel reached the pack's process while the call awaited: its work stopped there."""
    gates = _Gates(tmp_path)
    outcome, _ = _left_after_it_began(workspace, gates, "await")
    assert (outcome.kind, outcome.result.error) == ("cancelled", "tool acme_write was cancelled")
    assert not gates.out.exists()
    assert call(workspace, "acme_pid").success  # the process serves on


@pytest.mark.parametrize("server", ["", "server:\n  isolated_packs: [beta]\n", "server:\n  isolated_packs: ['*']\n"])
def test_a_trackers_default_pack_from_another_plugin_mounts(installed: Path, tmp_path: Path, server: str) -> None:
    """``tracker: {kind: desk}`` alone mounts the ``gamma`` pack its tracker names by default,
    though another installed plugin provides it (imported here unless the workflow isolates it)."""
    (tmp_path / "WORKFLOW.md").write_text(f"---\ntracker:\n  kind: desk\n{server}---\nWork.\n", encoding="utf-8")
    opened = open_workspace(cwd=tmp_path, env=_env("lorenz-local,iso-desk,iso-gamma,iso-beta"))
    try:
        assert opened.pack_names() == ["gamma"] and not opened.mounted.failures
        pid = call(opened, "gamma_pid").result["pid"]
        assert (pid == os.getpid()) is ("*" not in server)
    finally:
        opened.close()


def test_a_trackers_default_pack_it_names_only_for_its_settings_says_what_to_add(
    installed: Path, tmp_path: Path
) -> None:
    """A default pack the tracker names only once it has the workflow's settings, from a plugin the
    host did not import: the pack is left out naming the tracker, the pack and what to add."""
    front = "tracker:\n  kind: desk\n  assignee: me\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\nWork.\n", encoding="utf-8")
    opened = open_workspace(cwd=tmp_path, env=_env("lorenz-local,iso-desk,iso-gamma,iso-beta"))
    try:
        assert opened.pack_names() == ["gamma"]
        [failure] = opened.mounted.failures
        assert failure.pack == "beta"
        assert failure.error.startswith("tracker desk mounts pack beta by default (default_tool_packs)")
        assert "iso-beta 1.0" in failure.error and failure.error.endswith("add `beta: {}` under `tools:` to mount it")
    finally:
        opened.close()
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}tools:\n  beta: {{}}\n---\nWork.\n", encoding="utf-8")
    opened = open_workspace(cwd=tmp_path, env=_env("lorenz-local,iso-desk,iso-gamma,iso-beta"))
    try:
        assert opened.pack_names() == ["gamma", "beta"] and not opened.mounted.failures
    finally:
        opened.close()


def test_a_call_that_waited_for_a_slot_times_out_without_killing_a_healthy_process(
    installed: Path, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    isolation_packs.workflow(tmp_path)
    workspace = open_workspace(cwd=tmp_path, env=_env())
    try:
        pids = _pids(_proxy(workspace, "acme"))

        async def scenario() -> tuple[ToolResult, ToolResult]:
            runner = ToolRunner()  # the host's: one set of call slots per pack

            async def sleep(seconds: float) -> ToolResult:
                async with httpx.AsyncClient() as http:
                    context = ToolContext(settings=workspace.settings, http=http)
                    acme = _proxy(workspace, "acme")
                    outcome = await runner.run(
                        acme, "acme_sleep", {"seconds": seconds}, context, time_limit=2, concurrency=1
                    )
                    return outcome.result

            first = asyncio.ensure_future(sleep(1.5))
            await asyncio.sleep(0.1)
            # Waits ~1.4 s for the one slot, then runs 1 s: its 2 s are up after 0.6 s in the process.
            second = await sleep(1.0)
            return await first, second

        first, second = asyncio.run(scenario())
        assert first.success
        assert _message(second) == "tool acme_sleep did not finish within 2 s (server.tool_timeout_seconds)"
        time.sleep(2.0)  # past a full timeout after the process got the call
        assert call(workspace, "acme_pid").result["pid"] == pids[0]
        assert _proxy(workspace, "acme").status()["restarts"] == 0
    finally:
        workspace.close()


def test_pack_processes_runs_several_and_spreads_the_calls(
    installed: Path, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    isolation_packs.workflow(tmp_path, server="  pack_processes: 3\n")
    workspace = open_workspace(cwd=tmp_path, env=_env())
    try:
        acme = _proxy(workspace, "acme")
        pids = _pids(acme)
        assert len(set(pids)) == 3

        async def six() -> set[int]:
            # One client made first: six made in turn could stagger the calls past a call's length.
            async with httpx.AsyncClient() as http:
                calls = (workspace.call("acme_sleep", {"seconds": 0.5}, http) for _ in range(6))
                results = await asyncio.gather(*calls)
            return {result.result["pid"] for result in results}

        assert asyncio.run(six()) == set(pids)
        assert "pack acme crashed (signal 11)" in _message(call(workspace, "acme_segv"))
        assert len(set(_pids(acme)) & set(pids)) == 2  # the other two kept running
    finally:
        workspace.close()
    assert all(isolation_packs.gone(pid) for pid in pids)


def test_a_pack_crashing_again_and_again_is_marked_failed_until_a_reload(live: LiveWorkspace) -> None:
    acme = _proxy(live.snapshot().workspace, "acme")
    for attempt in range(MAX_CRASHES):
        before = _pids(acme)
        message = _message(call(live.snapshot().workspace, "acme_exit"))
        if attempt < MAX_CRASHES - 1:
            assert message == "pack acme crashed (exit code 3); restarted"
            _restarted(acme, before)
    assert message == (
        f"pack acme crashed (exit code 3); it crashed {MAX_CRASHES} times within 60 s, so it is not restarted "
        "until the workflow is reloaded"
    )
    started = time.monotonic()
    assert "not restarted" in _message(call(live.snapshot().workspace, "acme_pid"))
    assert time.monotonic() - started < 1  # at once, no waiting for a process
    assert call(live.snapshot().workspace, "beta_pid").success
    health = health_data(live.snapshot(), reload_failed=False)
    assert health["status"] == "degraded"
    assert health["failed"]["packs"] == [{"pack": "acme", "error": message}]
    acme_status = next(status for status in health["isolatedPacks"] if status["pack"] == "acme")
    assert acme_status["state"] == "failed" and acme_status["pids"] == []

    beta_pids = _pids(_proxy(live.snapshot().workspace, "beta"))
    path = live.watched_path
    assert path is not None
    path.write_text(path.read_text(encoding="utf-8") + "\nEdited.\n", encoding="utf-8")
    assert live.check()
    assert call(live.snapshot().workspace, "acme_pid").success  # a reload mounts it afresh
    assert health_data(live.snapshot(), reload_failed=False)["status"] == "ok"
    assert _pids(_proxy(live.snapshot().workspace, "beta")) == beta_pids  # kept: same plan


def test_a_reload_keeps_the_processes_of_the_packs_it_keeps_and_stops_the_rest(
    live: LiveWorkspace, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    path = tmp_path / "WORKFLOW.md"
    acme, beta = (_pids(_proxy(live.snapshot().workspace, name)) for name in ("acme", "beta"))
    path.write_text(path.read_text(encoding="utf-8").replace("Work the board.", "Work it."), encoding="utf-8")
    assert live.check()
    assert _pids(_proxy(live.snapshot().workspace, "acme")) == acme
    isolation_packs.workflow(tmp_path, tools="  acme: {}\n")  # beta is unmounted
    assert live.check()
    assert "beta" not in live.snapshot().workspace.pack_names()
    assert all(isolation_packs.gone(pid) for pid in beta)
    assert _pids(_proxy(live.snapshot().workspace, "acme")) == acme
    isolation_packs.workflow(tmp_path, tools="  acme: {limit: 3}\n")  # other options: other processes
    assert live.check()
    assert not set(_pids(_proxy(live.snapshot().workspace, "acme"))) & set(acme)
    assert all(isolation_packs.gone(pid) for pid in acme)
    isolation_packs.workflow(tmp_path, tools="  acme: {bad: 1}\n")  # refused in its process: old config stays
    assert not live.check()
    assert live.last_error == "tools.acme.bad: not an option of acme"
    assert call(live.snapshot().workspace, "acme_pid").success


def test_no_longer_isolating_a_pack_imports_it_afresh(
    live: LiveWorkspace, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    path = tmp_path / "WORKFLOW.md"
    pids = _pids(_proxy(live.snapshot().workspace, "acme"))
    path.write_text(path.read_text(encoding="utf-8").replace("isolated_packs: ['*']", "isolated_packs: []"))
    assert live.check()
    assert "iso_acme" in sys.modules  # discovery ran again and imported it
    assert call(live.snapshot().workspace, "acme_pid").result["pid"] == os.getpid()
    assert all(isolation_packs.gone(pid) for pid in pids)


def test_a_plugin_mounted_only_after_start_is_imported_then(installed: Path, tmp_path: Path) -> None:
    """Discovery leaves a surveyed plugin the workflow does not mount unimported; once the edited
    workflow mounts its pack unisolated, the live workspace discovers again and imports it."""
    path = tmp_path / "WORKFLOW.md"
    front = "tracker:\n  kind: local\n  path: ./board\ntools:\n  acme: {}\nserver:\n  isolated_packs: [acme]\n"
    path.write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")
    served = LiveWorkspace.open(cwd=tmp_path, env=_env())
    try:
        assert "iso_beta" not in sys.modules and "beta" not in served.snapshot().workspace.pack_names()
        mounting = front.replace("acme: {}", "acme: {}\n  beta: {}")
        path.write_text(f"---\n{mounting}---\nWork the board.\n", encoding="utf-8")
        assert served.check()
        assert "iso_beta" in sys.modules
        assert call(served.snapshot().workspace, "beta_pid").result["pid"] == os.getpid()
    finally:
        asyncio.run(served.aclose())


def test_a_pack_refusing_its_options_in_its_process_is_a_config_error(
    installed: Path, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    isolation_packs.workflow(tmp_path, tools="  acme: {bad: true}\n")
    with pytest.raises(ConfigError, match=r"^tools\.acme\.bad: not an option of acme$"):
        open_workspace(cwd=tmp_path, env=_env())


def test_a_pack_that_cannot_start_is_left_out_and_the_rest_mount(
    installed: Path, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    isolation_packs.workflow(tmp_path, tools="  doomed: {}\n  beta: {}\n")
    workspace = open_workspace(cwd=tmp_path, env=_env(f"{ALLOWED},iso-doomed"))
    try:
        assert workspace.pack_names() == ["local", "beta"]
        (failure,) = workspace.mounted.failures
        assert failure.pack == "doomed" and failure.error == "pack doomed crashed while starting (exit code 9)"
        assert call(workspace, "beta_pid").success
    finally:
        workspace.close()


def test_a_start_failure_from_a_pack_process_is_redacted(
    installed: Path, tmp_path: Path, isolation_packs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAKY_API_TOKEN", "leaky-credential-0123456789")
    isolation_packs.workflow(tmp_path, tools="  leaky: {}\n  beta: {}\n")
    workspace = open_workspace(cwd=tmp_path, env=_env(f"{ALLOWED},iso-leaky"))
    try:
        (failure,) = workspace.mounted.failures
        assert failure.pack == "leaky" and "upstream refused [REDACTED]" in failure.error, failure.error
        assert "leaky-credential" not in failure.error
    finally:
        workspace.close()


def test_discovery_surveys_isolated_plugins_in_a_child_and_reports_their_failures(installed: Path) -> None:
    discovery = discover(env=_env(f"{ALLOWED},iso-crash-import,iso-fail-import"), isolate=("*",))
    failures = {failure.distribution: failure for failure in discovery.failures}
    assert failures["iso-crash-import"].error == "importing it crashed its survey process (signal 11)"
    assert failures["iso-fail-import"].error == "ModuleNotFoundError: No module named 'lorenz_sdk_that_does_not_exist'"
    assert failures["iso-fail-import"].name == "fail_import" and failures["iso-fail-import"].version == "1.0"
    assert not {"iso_crash_import", "iso_fail_import", "iso_acme"} & set(sys.modules)
    assert {"acme", "beta", "local"} <= set(discovery.tools.names())
    assert discovery.isolate == ("*",)


def test_a_child_is_told_its_slice_only_and_its_stderr_is_logged_redacted(
    installed: Path, tmp_path: Path, isolation_packs: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    tracker = "  kind: trk\n  api_key: $TRK_KEY\n"
    server = "  token: $MCP_TOKEN_VALUE\n"
    isolation_packs.workflow(tmp_path, tools="  acme: {secret: $ACME_SECRET}\n", server=server, tracker=tracker)
    env = _env(f"{ALLOWED},iso-tracked", TRK_KEY="trk-key-123", MCP_TOKEN_VALUE="mcp-token-456", ACME_SECRET="acme-789")
    os.environ.update({name: env[name] for name in ("TRK_KEY", "MCP_TOKEN_VALUE", "ACME_SECRET")})
    try:
        workspace = open_workspace(cwd=tmp_path, env=env)
        try:
            assert "iso_tracked" in sys.modules  # its tracker runs in the host...
            assert isinstance(_proxy(workspace, "trk"), IsolatedPack)  # ...its pack does not
            echoed = call(workspace, "acme_echo").result
            assert echoed == {
                "input": {},
                "apiKey": None,  # another distribution's tracker
                "serverToken": None,
                "tools": ["acme"],
                "secrets": ["acme-789"],
            }
            names = call(workspace, "acme_env").result["names"]
            assert "TRK_KEY" not in names and "MCP_TOKEN_VALUE" not in names and "ACME_SECRET" in names
            assert call(workspace, "trk_key").result["apiKey"] == "trk-key-123"  # its own tracker
            with caplog.at_level(logging.WARNING, logger="lorenz.isolation"):
                assert call(workspace, "acme_log", {"text": "acme-789 and trk-key-123"}).success
                deadline = time.monotonic() + 5
                while "prints to stdout" not in caplog.text and time.monotonic() < deadline:
                    time.sleep(0.05)
            pid = _pids(_proxy(workspace, "acme"))[0]
            assert f"pack acme [pid {pid}]: acme says [REDACTED] and [REDACTED]" in caplog.text
            assert f"pack acme [pid {pid}]: acme prints to stdout too" in caplog.text
        finally:
            workspace.close()
    finally:
        for name in ("TRK_KEY", "MCP_TOKEN_VALUE", "ACME_SECRET"):
            os.environ.pop(name, None)


def test_an_isolated_packs_resources_are_mounted_and_check_has_no_note(
    workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _proxy(workspace, "beta").resource_specs(workspace.settings)[0].uri == "beta://status"
    assert _proxy(workspace, "acme").resource_specs(workspace.settings) == []
    found = workspace.mounted.offers.resource("beta://status")
    assert found is not None and found[1].name == "beta"
    from lorenz.cli import main

    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", ALLOWED)
    assert main(["check"]) == 0
    assert "its resources and prompts are not served" not in capsys.readouterr().out


def test_a_bundled_pack_named_in_isolated_packs_runs_in_a_child_too(installed: Path, tmp_path: Path) -> None:
    (tmp_path / "WORKFLOW.md").write_text(
        "---\ntracker:\n  kind: local\n  path: ./board\nserver:\n  isolated_packs: [local]\n---\n", encoding="utf-8"
    )
    workspace = open_workspace(cwd=tmp_path, env=_env())
    try:
        local = _proxy(workspace, "local")
        assert call(workspace, "local_create_issue", {"title": "From a child"}).success
        assert call(workspace, "local_query", {}).result["total"] == 1
        assert _pids(local)[0] != os.getpid()
    finally:
        workspace.close()


def test_a_result_past_the_cap_is_refused_in_the_child(
    installed: Path, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    isolation_packs.workflow(tmp_path, server="  max_result_bytes: 1000\n")
    workspace = open_workspace(cwd=tmp_path, env=_env())
    try:
        assert "more than 1,000 bytes of JSON (server.max_result_bytes)" in _message(
            call(workspace, "acme_big", {"size": 5000})
        )
        assert call(workspace, "acme_big", {"size": 10}).result == {"blob": "x" * 10}
        assert _proxy(workspace, "acme").status()["restarts"] == 0
    finally:
        workspace.close()


@pytest.fixture
def strays() -> Iterator[list[int]]:
    """Pids a test's pack started; killed afterwards should the test fail with them still alive."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _spawn(workspace: Workspace, strays: list[int]) -> list[int]:
    """A plain child, a ``setsid`` child and a double-forked daemon of acme's, all running."""
    pids: list[int] = call(workspace, "acme_spawn").result["pids"]
    strays += pids
    assert len(pids) == 3 and all(Path(f"/proc/{pid}").exists() for pid in pids)
    return pids


@pytest.mark.parametrize("event", ["exit", "segv", "spin", "close"])
def test_what_an_isolated_pack_starts_dies_with_its_process(
    workspace: Workspace, event: str, strays: list[int], isolation_packs: ModuleType
) -> None:
    """Whether the pack's process crashes, is killed at the tool timeout, or is stopped with its
    pool, its children die with it, even those in a session of their own."""
    acme = _proxy(workspace, "acme")
    before = _pids(acme)
    spawned = _spawn(workspace, strays)
    if event == "close":
        workspace.close()
    else:
        assert not call(workspace, f"acme_{event}").success
        _restarted(acme, before)
    assert all(isolation_packs.gone(pid) for pid in before)
    for pid in spawned:
        assert isolation_packs.gone(pid), f"process {pid} outlived acme's process"


@pytest.mark.parametrize("kind", ["GeneratorExit", "KeyboardInterrupt", "SystemExit", "Custom"])
def test_a_pack_raising_a_base_exception_fails_its_call_and_its_process_serves_on(
    workspace: Workspace, kind: str
) -> None:
    acme = _proxy(workspace, "acme")
    before = _pids(acme)
    assert f"pack acme: execute_tool raised {kind}: 3" in _message(call(workspace, "acme_raise", {"kind": kind}))
    assert call(workspace, "acme_pid").result["pid"] == before[0]
    assert acme.status()["restarts"] == 0


def test_a_pack_cannot_answer_another_call_in_flight(workspace: Workspace, caplog: pytest.LogCaptureFixture) -> None:
    """The child's pack code writes a result frame for another caller's call (its id is easy to
    find): the host takes it for a protocol violation, never for that call's result."""
    acme = _proxy(workspace, "acme")
    before = _pids(acme)

    async def scenario() -> tuple[ToolResult, ToolResult]:
        victim = asyncio.ensure_future(_call(workspace, "acme_sleep", {"seconds": 1.5}))
        await asyncio.sleep(0.3)
        forger = await _call(workspace, "acme_forge")
        return await victim, forger

    with caplog.at_level(logging.WARNING, logger="lorenz.isolation"):
        victim, forger = asyncio.run(scenario())
    expected = "pack acme sent a result for a call it was not answering"
    assert expected in _message(victim) and expected in _message(forger)
    assert any(expected in record.getMessage() for record in caplog.records)
    _restarted(acme, before)


def test_a_pack_flooding_its_stderr_is_logged_within_a_bound(
    workspace: Workspace, caplog: pytest.LogCaptureFixture
) -> None:
    """50,000 lines and a 100 kB one: a bounded number logged, each cut, the rest counted as dropped."""
    with caplog.at_level(logging.WARNING, logger="lorenz.isolation"):
        assert call(workspace, "acme_flood", {"lines": 50_000}).success
        assert call(workspace, "beta_pid").success
        workspace.close()  # the end of the process says what was dropped
    logged, dropped = _flooded(caplog.records)
    assert 0 < len(logged) <= 1000 and dropped > 49_000
    assert len(logged) + dropped == 50_001  # every line accounted for
    assert all(len(line) < 4100 for line in logged)
