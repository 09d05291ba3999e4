"""``lorenz call``, ``check`` and ``tools`` on an MCP server slower to start than mounting waits for
(a loaded machine, a cold ``npx``): they wait for it while it is starting, and no longer once its
start failed."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from lorenz.testing import run_cli

#: A stdio MCP server whose one tool, ``hello``, answers with ``$GREETING``, and which lists its tools
#: only once the file ``$LIST_GATE`` exists.
GATED = """
import os
import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("lorenz-gated-test")

@server.tool()
def hello() -> str:
    return "hello " + os.environ.get("GREETING", "(unset)")

listing = server.list_tools

async def gated():
    while not os.path.exists(os.environ["LIST_GATE"]):
        await anyio.sleep(0.02)
    return await listing()

server.list_tools = gated
server.run("stdio")
"""

#: A "server" that exits, having said nothing, once the file ``$LIST_GATE`` exists.
FAILING = """
import os, time
while not os.path.exists(os.environ["LIST_GATE"]):
    time.sleep(0.02)
raise SystemExit(3)
"""


def _server(tmp_path: Path, script: str, greeting: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workflow in ``tmp_path`` (made the current directory) mounting ``script`` as ``one``,
    greeting with ``greeting``, with mounting's wait cut to 0.2 s; the file that opens its gate."""
    import lorenz_mcp.pack

    (tmp_path / "server.py").write_text(script, encoding="utf-8")
    gate = tmp_path / "gate"
    entry = {"provider": "mcp", "command": [sys.executable, str(tmp_path / "server.py")]}
    entry |= {"prefix": "one_", "env": {"LIST_GATE": str(gate), "GREETING": greeting}}
    (tmp_path / "WORKFLOW.md").write_text(f"---\ntools:\n  one: {json.dumps(entry)}\n---\n", encoding="utf-8")
    monkeypatch.setattr(lorenz_mcp.pack, "MOUNT_WAIT_SECONDS", 0.2)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "lorenz-mcp")
    return gate


def _open_on_attach(gate: Path, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The packs the command attaches (filled as it does); attaching opens ``gate``, so the server
    lists, or fails, only after mounting gave up on it."""
    from lorenz.mounting import lifecycle

    attached: list[object] = []
    attach = lifecycle.attach_packs

    def attach_then_open_the_gate(packs: Any, *args: Any) -> None:
        attach(packs, *args)
        attached.extend(packs)
        gate.touch()

    monkeypatch.setattr(lifecycle, "attach_packs", attach_then_open_the_gate)
    return attached


def _run(command: list[str], packs: list[object]) -> int:
    """``lorenz <command>`` in-process; then the upstreams of ``packs`` (filled meanwhile) stopped."""
    try:
        return run_cli(command)
    finally:
        for pack in packs:
            getattr(pack, "close", lambda: None)()


def test_call_waits_for_a_server_slower_than_mounting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`lorenz call` naming a tool of a server still starting waits for it to list, not reporting
    that no pack declares it."""
    attached = _open_on_attach(_server(tmp_path, GATED, "slowly", monkeypatch), monkeypatch)
    status = _run(["call", "one_hello"], attached)
    out = capsys.readouterr()
    assert status == 0, out.err
    assert attached and "hello slowly" in out.out


def test_call_finds_a_server_that_listed_as_it_looked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server that lists its tools just as `lorenz call` asks whether any pack is still starting
    is found: the call once took "none starting" for "no such tool" and answered with the mount
    made before the listing."""
    import time

    from lorenz.mounting import lifecycle

    gate = _server(tmp_path, GATED, "just then", monkeypatch)
    starting, seen = lifecycle.packs_starting, []

    def listed_as_it_looks(packs: Any, settings: Any) -> Any:
        seen.extend(packs)
        gate.touch()
        deadline = time.monotonic() + 60  # a bound on the server's start, not a timing assertion
        while (found := starting(packs, settings)) and time.monotonic() < deadline:
            time.sleep(0.02)
        return found  # none starting by now: its listing has landed

    monkeypatch.setattr(lifecycle, "packs_starting", listed_as_it_looks)
    status = _run(["call", "one_hello"], seen)
    out = capsys.readouterr()
    assert status == 0, out.err
    assert seen and "hello just then" in out.out


@pytest.mark.parametrize("command", [["check", "--json"], ["tools", "--json"]])
def test_check_and_tools_count_a_server_slower_than_mounting(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`lorenz check` and `lorenz tools` wait for a server still starting, and count its tools
    rather than warn that it is not ready."""
    attached = _open_on_attach(_server(tmp_path, GATED, "counted", monkeypatch), monkeypatch)
    status = _run(command, attached)
    out = capsys.readouterr()
    assert status == 0, out.err
    answer = json.loads(out.out)
    names = answer["tools"] if command[0] == "check" else [tool["name"] for tool in answer["tools"]]
    assert names == ["one_hello"], out.err
    assert "notReady" not in answer and "not ready" not in out.err


def test_check_waits_no_longer_once_a_start_failed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A server that exits while `lorenz check` waits for it ends the wait at once: the check
    answers, the pack not ready, well inside a wait made ten minutes long."""
    from lorenz.cli import workspace

    monkeypatch.setattr(workspace, "STARTING_WAIT_SECONDS", 600.0)
    attached = _open_on_attach(_server(tmp_path, FAILING, "never", monkeypatch), monkeypatch)
    statuses: list[int] = []
    check = threading.Thread(target=lambda: statuses.append(_run(["check"], attached)), daemon=True)
    check.start()
    check.join(120)  # a bound on the server's exit, far below the wait
    assert not check.is_alive(), "lorenz check still waits for a server that exited"
    out = capsys.readouterr()
    assert statuses == [0], out.err
    assert "(0 tools; not ready: one)" in out.out
    assert "pack one is not ready" in out.err
