"""Isolated packs under the real commands (issue 17): ``lorenz serve`` supervises them, shows them
on ``/healthz`` and the landing page, and leaves no process behind on SIGTERM, nor when it is
killed outright; ``lorenz tools`` and ``lorenz call`` honour ``server.isolated_packs`` too."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import mcp
import pytest
from mcp.client.stdio import StdioServerParameters

from lorenz.testing import ServedWorkflow

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, isolation_packs: ModuleType) -> Path:
    root: Path = isolation_packs.write_site(tmp_path_factory.mktemp("isolation-site"))
    return root


def _env(site: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-local,iso-acme,iso-beta"
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _pids(server: Any) -> dict[str, list[int]]:
    health = httpx.get(server.base + "/healthz").json()
    return {status["pack"]: status["pids"] for status in health.get("isolatedPacks", [])}


@pytest.fixture
def served(site: Path, tmp_path: Path, isolation_packs: ModuleType) -> Iterator[Any]:
    isolation_packs.workflow(tmp_path)
    server = ServedWorkflow(tmp_path, _env(site))
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def _text(result: Any) -> str:
    return str(result.content[0].text)


def test_lorenz_serve_supervises_isolated_packs_and_stops_them_on_sigterm(
    served: Any, isolation_packs: ModuleType
) -> None:
    health = httpx.get(served.base + "/healthz").json()
    assert health["status"] == "ok" and health["packs"] == 3
    first = _pids(served)
    assert set(first) == {"acme", "beta"} and all(len(pids) == 1 for pids in first.values())
    assert 'acme <span class="pill">isolated</span>' in httpx.get(served.base + "/").text

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"acme_segv", "beta_pid", "local_query"} <= names
            crashed = await client.call_tool("acme_segv", {})
            assert crashed.is_error is True and "pack acme crashed (signal 11); restarted" in _text(crashed)
            assert (await client.call_tool("local_query", {})).is_error is False
            beta = await client.call_tool("beta_pid", {})
            assert beta.structured_content == {"pid": first["beta"][0]}

    anyio.run(scenario)
    deadline = time.monotonic() + 30
    while _pids(served).get("acme") in (first["acme"], []) and time.monotonic() < deadline:
        time.sleep(0.1)
    restarted = _pids(served)
    assert restarted["acme"] != first["acme"] and isolation_packs.gone(first["acme"][0])
    acme_status = next(
        status for status in httpx.get(served.base + "/healthz").json()["isolatedPacks"] if status["pack"] == "acme"
    )
    assert acme_status["restarts"] == 1 and acme_status["state"] == "running"
    served.until_stderr(f"pack acme [pid {first['acme'][0]}]: Fatal Python error: Segmentation fault")

    served.process.send_signal(signal.SIGTERM)
    assert served.process.wait(timeout=20) == 0, served.stderr()
    for pid in [*restarted["acme"], *restarted["beta"]]:
        assert isolation_packs.gone(pid), f"process {pid} outlived lorenz serve"


def test_a_reload_while_serving_keeps_kept_packs_and_stops_unmounted_ones(
    served: Any, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    first = _pids(served)
    isolation_packs.workflow(tmp_path, tools="  acme: {}\n")
    deadline = time.monotonic() + 30
    while "beta" in _pids(served) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _pids(served) == {"acme": first["acme"]}
    assert isolation_packs.gone(first["beta"][0])

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            result = await client.call_tool("acme_pid", {})
            assert result.structured_content == {"pid": first["acme"][0]}

    anyio.run(scenario)


def test_isolated_processes_end_when_the_host_is_killed_even_spinning(
    served: Any, isolation_packs: ModuleType, tmp_path: Path
) -> None:
    pids = _pids(served)

    began = tmp_path / "began"

    def spin() -> None:
        params = {"name": "acme_spin", "arguments": {"began": str(began)}}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
        with contextlib.suppress(httpx.HTTPError):  # the host is killed under it
            httpx.post(served.url, json=body, headers=headers, timeout=10)

    threading.Thread(target=spin, daemon=True).start()
    deadline = time.monotonic() + 30
    while not began.exists():  # then acme's process spins, holding its event loop
        assert time.monotonic() < deadline, "acme_spin never began"
        time.sleep(0.02)
    served.process.send_signal(signal.SIGKILL)
    served.process.wait(timeout=10)
    for pid in [*pids["acme"], *pids["beta"]]:
        assert isolation_packs.gone(pid), f"process {pid} was orphaned"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_what_isolated_packs_start_does_not_outlive_lorenz_serve(
    served: Any, isolation_packs: ModuleType, stop: signal.Signals
) -> None:
    """A plain child, a ``setsid`` child and a double-forked daemon of an isolated pack all end
    when ``lorenz serve`` is stopped."""

    async def spawn() -> list[int]:
        async with mcp.Client(served.url) as client:
            result = await client.call_tool("acme_spawn", {})
            assert result.structured_content is not None, _text(result)
            pids: list[int] = result.structured_content["pids"]
            return pids

    spawned = anyio.run(spawn)
    try:
        served.process.send_signal(stop)
        assert served.process.wait(timeout=20) == 0, served.stderr()
        for pid in spawned:
            assert isolation_packs.gone(pid), f"process {pid} outlived lorenz serve"
    finally:
        for pid in spawned:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _lorenz(site: Path, directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lorenz", *args],
        cwd=directory,
        env=_env(site),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_lorenz_tools_and_call_honour_isolated_packs(site: Path, tmp_path: Path, isolation_packs: ModuleType) -> None:
    isolation_packs.workflow(tmp_path)
    listed = _lorenz(site, tmp_path, "tools", "--json")
    assert listed.returncode == 0, listed.stderr
    owners = {tool["name"]: tool["pack"] for tool in json.loads(listed.stdout)["tools"]}
    assert owners["acme_segv"] == "acme" and owners["beta_pid"] == "beta"

    called = _lorenz(site, tmp_path, "call", "acme_pid")
    assert called.returncode == 0, called.stderr
    pid = json.loads(called.stdout)["result"]["pid"]
    assert isolation_packs.gone(pid)  # the one-shot command stopped it when it ended

    crashed = _lorenz(site, tmp_path, "call", "acme_exit")
    assert crashed.returncode == 1
    assert json.loads(crashed.stdout)["error"] == "pack acme crashed (exit code 3); restarted"


@pytest.mark.anyio
async def test_lorenz_serve_stdio_supervises_isolated_packs(
    site: Path, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    isolation_packs.workflow(tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorenz", "serve", "--stdio"], env=_env(site), cwd=tmp_path
    )
    async with mcp.Client(params) as client:
        first = (await client.call_tool("acme_pid", {})).structured_content
        assert first is not None and first["pid"] > 0
        crashed = await client.call_tool("acme_exit", {})
        assert crashed.is_error is True and "pack acme crashed (exit code 3); restarted" in _text(crashed)
        assert (await client.call_tool("beta_pid", {})).is_error is False
        for _ in range(15):  # a call waits for the restart up to the 2 s tool timeout; a busy machine may need more
            restarted = await client.call_tool("acme_pid", {})
            if not restarted.is_error:
                break
        second = restarted.structured_content
        assert second is not None and second["pid"] != first["pid"]
    assert isolation_packs.gone(second["pid"])  # the client closed stdin: lorenz exited and took its children along


@pytest.mark.anyio
async def test_an_isolated_packs_progress_logs_and_enabled_tools_cross_its_pipe(
    site: Path, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    isolation_packs.workflow(tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorenz", "serve", "--stdio"], env=_env(site), cwd=tmp_path
    )
    progress: list[tuple[float, float | None, str | None]] = []
    logged: list[tuple[str, Any]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def on_log(params: Any) -> None:
        logged.append((params.level, params.data))

    async with mcp.Client(params, mode="legacy", logging_callback=on_log) as client:
        await client.set_logging_level("info")
        result = await client.call_tool("acme_report", {}, progress_callback=on_progress)
    assert result.is_error is False
    # Over stdio the caller holds every grant: beta's tool is callable, an unknown one is not.
    assert result.structured_content == {"enabled": ["beta_pid", "acme_report"], "logLevel": "info"}
    assert progress == [(1, 2, "half way"), (2, 2, "done")]
    assert logged == [("warning", "acme is half way")]  # debug is below the level the client asked for


def test_an_isolated_pack_is_told_only_the_tools_a_scoped_token_may_call(
    site: Path, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    tokens = "  tokens:\n    - {name: acme-only, token: acme-t0ken-0123456789, tools: [acme_*]}\n"
    isolation_packs.workflow(tmp_path, server=tokens)
    server = ServedWorkflow(tmp_path, _env(site))
    try:

        async def scenario() -> Any:
            headers = {"Authorization": "Bearer acme-t0ken-0123456789"}
            async with httpx.AsyncClient(headers=headers) as http:
                transport = mcp.client.streamable_http.streamable_http_client(server.base + "/mcp", http_client=http)
                async with mcp.Client(transport) as client:
                    return await client.call_tool("acme_report", {})

        result = anyio.run(scenario)
    finally:
        server.process.kill()
        server.process.wait()
    assert result.is_error is False and result.structured_content == {"enabled": ["acme_report"], "logLevel": None}


def test_each_worker_supervises_its_own_isolated_packs_and_none_outlive_sigterm(
    site: Path, tmp_path: Path, isolation_packs: ModuleType
) -> None:
    """`lorenz serve --workers 2` with isolated packs: each worker runs its own pack processes (its
    calls answered by them), and SIGTERM to the supervisor leaves none of them behind."""
    isolation_packs.workflow(tmp_path)
    command = [sys.executable, "-m", "lorenz", "serve", "--port", "0", "--workers", "2"]
    server = ServedWorkflow(tmp_path, _env(site), command)
    try:
        by_worker: dict[int, dict[str, list[int]]] = {}
        deadline = time.monotonic() + 60
        while len(by_worker) < 2 and time.monotonic() < deadline:
            # A new connection each time: the kernel spreads them over the workers.
            health = httpx.get(server.base + "/healthz", headers={"Connection": "close"}).json()
            isolated = {status["pack"]: status["pids"] for status in health.get("isolatedPacks", [])}
            if all(isolated.get(pack) for pack in ("acme", "beta")):
                by_worker[health["pid"]] = isolated
        assert len(by_worker) == 2, by_worker
        assert server.process.pid not in by_worker
        beta_pids = {pids["beta"][0] for pids in by_worker.values()}
        assert len(beta_pids) == 2  # one beta process per worker, not one shared

        async def answered_by() -> set[int]:
            seen: set[int] = set()
            with anyio.fail_after(60):  # a call the worker's pool never answers fails here
                for _ in range(20):
                    async with mcp.Client(server.url) as client:
                        result = await client.call_tool("beta_pid", {})
                        seen.add(result.structured_content["pid"])
            return seen

        assert anyio.run(answered_by) <= beta_pids
        server.process.send_signal(signal.SIGTERM)
        assert server.wait(30) == 0, server.stderr()
        for pids in by_worker.values():
            for pid in [*pids["acme"], *pids["beta"]]:
                assert isolation_packs.gone(pid), f"process {pid} outlived lorenz serve --workers 2"
    finally:
        server.stop()
