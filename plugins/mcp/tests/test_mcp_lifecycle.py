"""The upstreams' life under ``lorenz serve``: owned by the mounted instance, stopped when a reload
drops it and when the host stops, a broken or slow one a degraded instance on ``/healthz``, and an
upstream's ``tools/list_changed`` re-mounting its tools and reaching the host's own clients."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp
import pytest
from mcp.server.mcpserver import Context, MCPServer

from lorenz.testing import loopback_server

pytestmark = pytest.mark.slow


def _children(parent: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == parent:
                    found.append(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _until(what: Callable[[], Any], message: Callable[[], str], seconds: float = 60) -> Any:
    """Poll ``what`` until it is truthy (a bound on waiting, not a timing assertion)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(message())


def _health(served: Any) -> dict[str, Any]:
    data: dict[str, Any] = httpx.get(served.base + "/healthz").json()
    return data


def _entry(options: dict[str, Any]) -> str:
    return json.dumps({"provider": "mcp", **options})


def test_reload_and_shutdown_stop_the_upstreams_they_drop(time_server: list[str], serve: Any, tmp_path: Path) -> None:
    one = {"command": time_server, "env": {"WHICH": "one"}, "prefix": "one_"}
    two = {"command": time_server, "env": {"WHICH": "two"}, "prefix": "two_"}
    served = serve(f"tools:\n  first: {_entry(one)}\n  second: {_entry(two)}\n")
    served.until_listed({"one_get_current_time", "two_get_current_time"})
    before = _children(served.process.pid)
    assert len(before) == 2, served.stderr()

    async def names() -> set[str]:
        async with mcp.Client(served.url) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    every = {"one_get_current_time", "one_convert_time", "two_get_current_time", "two_convert_time"}
    _until(lambda: anyio.run(names) == every, served.stderr)  # a slow start is mounted, its tools added later

    # Drop `second`, keep `first` as it was: its process stays, the other one ends.
    (tmp_path / "WORKFLOW.md").write_text(f"---\ntools:\n  first: {_entry(one)}\n---\n", encoding="utf-8")
    _until(lambda: anyio.run(names) == {"one_get_current_time", "one_convert_time"}, served.stderr)
    _until(lambda: len([pid for pid in before if _alive(pid)]) == 1, lambda: f"{before}\n{served.stderr()}")
    kept = [pid for pid in before if _alive(pid)]
    # Nothing else stays: a reload may briefly run a child of its own (a discovery survey).
    _until(lambda: _children(served.process.pid) == kept, lambda: f"{kept}\n{served.stderr()}")

    served.stop()
    assert served.process.returncode == 0
    assert not any(_alive(pid) for pid in before)


def test_a_broken_instance_degrades_only_itself(time_server: list[str], serve: Any) -> None:
    good = {"command": time_server, "prefix": "time_"}
    broken = {"command": [sys.executable, "-c", "print('garbage, not JSON-RPC'); import time; time.sleep(600)"]}
    missing = {"command": ["/nonexistent/mcp-server"]}
    served = serve(
        f"tools:\n  clock: {_entry(good)}\n  noisy: {_entry({**broken, 'start_timeout_seconds': 1})}\n"
        f"  gone: {_entry(missing)}\n"
    )

    def failed() -> dict[str, str]:
        health = _health(served)
        return {f["pack"]: f["error"] for f in health.get("failed", {}).get("packs", [])}

    errors = _until(lambda: (f := failed()) and "did not answer" in f.get("noisy", "") and f, served.stderr)
    assert set(errors) == {"noisy", "gone"}
    assert "/nonexistent/mcp-server" in errors["gone"] and "being restarted" in errors["gone"]
    assert _health(served)["status"] == "degraded"

    async def names() -> set[str]:
        async with mcp.Client(served.url) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    async def call() -> bool:
        async with mcp.Client(served.url) as client:
            return (await client.call_tool("time_get_current_time", {"timezone": "UTC"})).is_error

    # On a loaded machine the clock may answer after the mount's wait; it is listed once it does.
    _until(lambda: anyio.run(names) == {"time_get_current_time", "time_convert_time"}, served.stderr)
    assert anyio.run(call) is False


def _changing_upstream() -> Any:
    server = MCPServer("lorenz-mcp-test-changing")

    @server.tool()
    async def grow(ctx: Context) -> str:  # type: ignore[type-arg]
        """Add the tool `extra` and say so."""

        def extra() -> str:
            """A tool that came later."""
            return "extra here"

        server.add_tool(extra, name="extra")
        await ctx.session.send_tool_list_changed()
        return "grown"

    return server.streamable_http_app()


@pytest.fixture
def changing_upstream() -> Iterator[str]:
    with loopback_server(_changing_upstream()) as server:
        yield f"{server.base_url}/mcp"


@pytest.mark.parametrize("args", [[], ["--no-reload"]])
def test_upstream_list_changed_remounts_and_reaches_clients(
    changing_upstream: str, serve: Any, args: list[str], tmp_path: Path
) -> None:
    """And with ``--no-reload`` too, which pins the first config: the upstream's news remounts it
    as it stands, WORKFLOW.md edited meanwhile left unread."""
    front = f"tools:\n  vendor: {_entry({'url': changing_upstream, 'prefix': 'v_'})}\nserver:\n  stateful: true\n"
    served = serve(front, args=args)
    served.until_listed({"v_grow"})
    if args:
        workflow = tmp_path / "WORKFLOW.md"
        workflow.write_text(workflow.read_text(encoding="utf-8").replace("v_", "w_"), encoding="utf-8")
    told = anyio.Event()

    async def on_message(message: Any) -> None:
        if getattr(getattr(message, "root", message), "method", None) == "notifications/tools/list_changed":
            told.set()

    async def scenario() -> None:
        async with mcp.Client(served.url, message_handler=on_message, mode="legacy") as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == {"v_grow"}
            assert (await client.call_tool("v_grow", {})).is_error is False
            with anyio.fail_after(30):  # a bound on the wait, not a timing assertion
                await told.wait()
            assert {tool.name for tool in (await client.list_tools()).tools} == {"v_grow", "v_extra"}
            extra = await client.call_tool("v_extra", {})
            assert extra.is_error is False and "extra here" in extra.content[0].text  # type: ignore[union-attr]

    anyio.run(scenario)


def test_upstream_list_changed_reaches_a_stdio_client_without_reloads(changing_upstream: str, tmp_path: Path) -> None:
    """``lorenz serve --stdio --no-reload`` still tells its one client when an upstream's tools
    change (it once watched nothing without reloads)."""
    from mcp.client.stdio import StdioServerParameters

    front = f"tools:\n  vendor: {_entry({'url': changing_upstream, 'prefix': 'v_'})}\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    command = ["-m", "lorenz", "serve", "--stdio", "--no-reload"]
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-mcp"
    params = StdioServerParameters(command=sys.executable, args=command, env=env)
    params.cwd = tmp_path
    told = [anyio.Event()]

    async def on_message(message: Any) -> None:
        if getattr(getattr(message, "root", message), "method", None) == "notifications/tools/list_changed":
            told[0].set()

    async def until_listed(client: mcp.Client, want: set[str]) -> None:
        with anyio.fail_after(60):  # a bound on the wait, not a timing assertion
            while not want <= {tool.name for tool in (await client.list_tools()).tools}:
                await told[0].wait()
                told[0] = anyio.Event()

    async def scenario() -> None:
        async with mcp.Client(params, message_handler=on_message, mode="legacy") as client:
            await until_listed(client, {"v_grow"})  # listed late on a loaded machine: told then too
            assert (await client.call_tool("v_grow", {})).is_error is False
            await until_listed(client, {"v_grow", "v_extra"})

    anyio.run(scenario)


def test_a_slow_upstream_does_not_hold_the_host_up(time_server: list[str], serve: Any, tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    slow = [
        sys.executable,
        "-c",
        "import os, sys, time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.05)\n"
        "os.execv(sys.argv[2], sys.argv[2:])",
        str(gate),
        *time_server,
    ]
    served = serve(f"tools:\n  later: {_entry({'command': slow, 'prefix': 'later_'})}\n")
    # Served while the upstream has not answered: no tools yet, the instance is starting.
    failure = _health(served)["failed"]["packs"][0]
    assert failure["pack"] == "later" and "starting" in failure["error"]

    async def names() -> set[str]:
        async with mcp.Client(served.url) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    assert anyio.run(names) == set()
    assert " (later still starting: its tools follow)\n" in served.stderr()  # said as it starts serving
    gate.write_text("go")
    _until(lambda: anyio.run(names) == {"later_get_current_time", "later_convert_time"}, served.stderr)
    _until(lambda: _health(served)["status"] == "ok", lambda: json.dumps(_health(served)))
    served.until_stderr(": 2 tools from 1 pack (a pack's tools changed)\n")  # not taken for an edit


def _upstream_growing_a_bad_name() -> Any:
    server = MCPServer("lorenz-mcp-test-bad-name")

    @server.tool()
    async def grow(ctx: Context) -> str:  # type: ignore[type-arg]
        """Add a tool whose name the host cannot serve, and say so."""
        server.add_tool(lambda: "bad", name="bad/name")
        await ctx.session.send_tool_list_changed()
        return "grown"

    return server.streamable_http_app()


def test_an_upstream_tool_the_host_cannot_serve_never_blocks_a_reload(serve: Any, tmp_path: Path) -> None:
    with loopback_server(_upstream_growing_a_bad_name()) as upstream:
        entry = _entry({"url": f"{upstream.base_url}/mcp", "prefix": "v_"})
        served = serve(f"tools:\n  vendor: {entry}\n")

        async def names() -> set[str]:
            async with mcp.Client(served.url) as client:
                return {tool.name for tool in (await client.list_tools()).tools}

        async def grow() -> None:
            async with mcp.Client(served.url) as client:
                assert (await client.call_tool("v_grow", {})).is_error is False

        _until(lambda: anyio.run(names) == {"v_grow"}, served.stderr)
        anyio.run(grow)

        def dropped() -> list[dict[str, Any]]:
            packs = _health(served).get("failed", {}).get("packs", [])
            return [entry for entry in packs if entry.get("tool") == "v_bad/name"]

        found = _until(dropped, lambda: json.dumps(_health(served)))
        assert found[0]["pack"] == "vendor" and "not a valid tool name" in found[0]["error"]
        assert anyio.run(names) == {"v_grow"}
        # The operator's edits still apply: the reload does not fail on the upstream's listing.
        (tmp_path / "WORKFLOW.md").write_text(
            f"---\ntools:\n  vendor: {entry}\nserver:\n  disabled_tools: [v_grow]\n---\n", encoding="utf-8"
        )
        _until(lambda: anyio.run(names) == set(), served.stderr)
        assert _health(served)["reloadFailed"] is False
        assert served.stderr().count("v_bad/name") == 1  # logged once, however often it is mounted again


def test_tools_listed_between_the_mount_and_the_attach_reach_the_host(
    time_server: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upstream that answers after the mount's wait but before the host attaches its instance
    still tells the host (it once went unheard, and the instance stayed without tools)."""
    from lorenz import PackInstance, Settings
    from lorenz_mcp import pack as mcp_pack

    monkeypatch.setattr(mcp_pack, "MOUNT_WAIT_SECONDS", 0.1)
    gate = tmp_path / "gate"
    slow = [
        sys.executable,
        "-c",
        "import os, sys, time\nwhile not os.path.exists(sys.argv[1]): time.sleep(0.05)\n"
        "os.execv(sys.argv[2], sys.argv[2:])",
        str(gate),
        *time_server,
    ]
    settings = Settings(tool_options={"mcp": {"command": slow}})
    pack = mcp_pack.McpPack()
    changed = threading.Event()
    instance = PackInstance(name="later", settings=settings, tools_changed=changed.set)
    try:
        assert pack.tool_specs(settings) == []  # mounted before the upstream answered
        gate.write_text("go")
        _until(lambda: pack.health(instance) is None, lambda: str(pack.health(instance)))  # it answered
        pack.attach(instance)
        assert changed.wait(10)
        assert {spec.name for spec in pack.tool_specs(settings)} == {"get_current_time", "convert_time"}
    finally:
        pack.close()


def test_lorenz_check_waits_for_an_upstream_starting_and_says_it_is_not_ready(
    time_server: list[str], tmp_path: Path
) -> None:
    """An upstream still starting after mounting's wait is waited for, its start timeout included;
    one that never answers is then reported not ready, why, and the check passes."""
    import subprocess

    never = [sys.executable, "-c", "import time; time.sleep(60)"]  # never answers initialize
    later = {"command": never, "prefix": "later_", "start_timeout_seconds": 8}  # beyond mounting's 5 s
    entries = {"now": {"command": time_server, "prefix": "now_"}, "later": later}
    tools = "".join(f"  {key}: {_entry(entry)}\n" for key, entry in entries.items())
    (tmp_path / "WORKFLOW.md").write_text(f"---\ntools:\n{tools}---\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    checked = subprocess.run(
        [sys.executable, "-m", "lorenz", "check", "--json"],
        cwd=tmp_path,
        env={**env, "LORENZ_LOAD_PLUGINS": "lorenz-mcp"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    assert [entry["pack"] for entry in report["notReady"]] == ["later"], report
    assert "did not answer within 8 s (start_timeout_seconds)" in report["notReady"][0]["error"], report
    assert set(report["tools"]) == {"now_get_current_time", "now_convert_time"}
    assert "pack later is not ready, so its tools may not all be counted" in checked.stderr
