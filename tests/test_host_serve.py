"""``lorenz serve`` as a user runs it: refusing bad workflows, HTTP in a subprocess (URL, SIGTERM),
and ``--stdio`` driven by the official SDK client."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import mcp
import pytest
from mcp import StdioServerParameters

from lorenz.host import serve
from lorenz.testing import ServedWorkflow

HERE = Path(__file__).parent
ENV = {"LORENZ_LOAD_PLUGINS": ""}
DEMO = ["demo_add", "demo_fail", "demo_boom", "demo_list"]


def workspace(tmp_path: Path, front_matter: str = "tracker:\n  kind: demo\n") -> Path:
    """A directory holding WORKFLOW.md and the test plugin module ``host_pack``."""
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front_matter}---\nprompt\n")
    shutil.copy(HERE / "host_pack.py", tmp_path / "host_pack.py")
    return tmp_path


def subprocess_env(directory: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update(ENV)
    env["PYTHONPATH"] = os.pathsep.join([str(directory), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def load_pack(directory: Path) -> object:
    sys.path.insert(0, str(directory))
    try:
        import host_pack

        return host_pack
    finally:
        sys.path.remove(str(directory))


def test_unknown_pack_refuses_to_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A workflow mounting an unregistered pack exits 1 with one `lorenz:` line, no traceback."""
    directory = workspace(tmp_path, "tracker:\n  kind: demo\ntools:\n  nowhere: {}\n")
    code = serve(workflow=None, host=None, port=0, stdio=False, plugins=[load_pack(directory)], cwd=directory, env=ENV)
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("lorenz: ")
    assert "nowhere" in err
    assert "Traceback" not in err


def test_collision_refuses_to_start_with_exact_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two packs declaring one tool name stop `lorenz serve` with the mount error's exact text."""
    directory = workspace(tmp_path, "tracker:\n  kind: demo\ntools:\n  collide: {}\n")
    code = serve(workflow=None, host=None, port=0, stdio=False, plugins=[load_pack(directory)], cwd=directory, env=ENV)
    assert code == 1
    assert capsys.readouterr().err == (
        'lorenz: tool name collision: demo_add is declared by both the "demo" and "collide" packs; '
        "serve one under other names with prefix: or rename: (tools: {collide: {prefix: collide_}})\n"
    )


def test_missing_local_plugin_says_how_to_install(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With no WORKFLOW.md and no local tracker installed, the message says to install it."""
    code = serve(workflow=None, host=None, port=0, stdio=False, cwd=tmp_path, env=ENV)
    err = capsys.readouterr().err
    assert code == 1
    assert "pip install -e plugins/local" in err
    assert "Traceback" not in err


@pytest.mark.slow
def test_http_subprocess_prints_url_and_stops_on_sigterm(tmp_path: Path) -> None:
    """`lorenz serve --port 0` prints the bound URL, serves it, and exits 0 on SIGTERM."""
    directory = workspace(tmp_path)
    server = ServedWorkflow(directory, subprocess_env(directory), HOST_PACK_SERVE, timeout=30)
    try:
        assert server.url.endswith("/mcp")

        async def call() -> None:
            async with mcp.Client(server.url) as client:
                result = await client.call_tool("demo_add", {"a": 1, "b": 2})
                assert result.structured_content == {"sum": 3}

        import anyio

        anyio.run(call)
        server.process.send_signal(signal.SIGTERM)
        assert server.wait(15) == 0
        landing = server.url.removesuffix("mcp")
        assert f"at {server.url}\nlorenz: landing page {landing}\n" in server.stderr()
        assert "lorenz: stopped" in server.stderr()
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_stdio_subprocess(tmp_path: Path, mode: str) -> None:
    """`lorenz serve --stdio` speaks MCP on stdin/stdout to the official client, in both eras."""
    directory = workspace(tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "lorenz", "-p", "host_pack", "serve", "--stdio"],
        env=subprocess_env(directory),
        cwd=directory,
    )
    async with mcp.Client(params, mode=mode) as client:
        listed = await client.list_tools()
        assert [tool.name for tool in listed.tools] == DEMO
        result = await client.call_tool("demo_add", {"a": 20, "b": 22})
        assert result.structured_content == {"sum": 42}
        failed = await client.call_tool("nope", {})
        assert failed.is_error is True


@pytest.mark.slow
def test_stdio_subprocess_stops_on_sigterm(tmp_path: Path) -> None:
    """`lorenz serve --stdio` answers on stdout and exits 0 on SIGTERM."""
    directory = workspace(tmp_path)
    process = subprocess.Popen(
        [sys.executable, "-m", "lorenz", "-p", "host_pack", "serve", "--stdio"],
        cwd=directory,
        env=subprocess_env(directory),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        process.stdin.write(json.dumps(request).encode() + b"\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())  # serving now: the handlers are installed
        assert answer["result"]["serverInfo"]["name"] == "lorenz"
        process.send_signal(signal.SIGTERM)
        out, _err = process.communicate(timeout=15)
        assert process.returncode == 0
        assert out == b""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


#: ``lorenz serve`` on an ephemeral port, with the test's demo pack.
HOST_PACK_SERVE = [sys.executable, "-m", "lorenz", "-p", "host_pack", "serve", "--port", "0"]


@pytest.mark.slow
def test_sigterm_with_an_open_session_stream_stops_promptly(tmp_path: Path) -> None:
    """SIGTERM ends a stateful session's open GET stream at once: no grace-period wait, no traceback."""
    import threading

    import httpx

    directory = workspace(tmp_path, "tracker:\n  kind: demo\nserver:\n  stateful: true\n  json_response: false\n")
    server = ServedWorkflow(directory, subprocess_env(directory), HOST_PACK_SERVE, timeout=30)
    url = server.url
    try:
        headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        opened = httpx.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}, headers=headers
        )
        headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        streaming = threading.Event()

        def listen() -> None:
            with httpx.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}, timeout=30) as stream:
                streaming.set()
                for _ in stream.iter_raw():
                    pass

        threading.Thread(target=listen, daemon=True).start()
        assert streaming.wait(10)
        time.sleep(0.3)
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        assert server.wait(15) == 0
        assert time.monotonic() - started < 3  # the graceful-shutdown grace period is 5 s
        err = server.stderr()
        assert "Traceback" not in err and "CancelledError" not in err and "ERROR" not in err
    finally:
        server.stop()


NOISY_PACK = """
import os

import lorenz
from host_pack import DemoPack

print("noisy imported")


class Noisy(DemoPack):
    name = "noisy"

    def tool_specs(self, settings):
        print("listing noisy tools")
        os.write(1, b"raw write to fd 1\\n")
        return []


@lorenz.hookimpl
def lorenz_register_tool_packs(register):
    register(Noisy())
"""


@pytest.mark.slow
def test_stdio_setup_prints_go_to_stderr(tmp_path: Path) -> None:
    """With --stdio, what plugins print while loading and listing tools never reaches stdout."""
    directory = workspace(tmp_path, "tracker:\n  kind: demo\ntools:\n  noisy: {}\n")
    (directory / "noisy_pack.py").write_text(NOISY_PACK)
    env = subprocess_env(directory)
    env.pop("PYTHONUNBUFFERED", None)  # stdout a pipe, as for any MCP client
    process = subprocess.Popen(
        [sys.executable, "-m", "lorenz", "-p", "host_pack", "-p", "noisy_pack", "serve", "--stdio"],
        cwd=directory,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        process.stdin.write(json.dumps(request).encode() + b"\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())  # the very first line is the protocol's
        assert answer["result"]["serverInfo"]["name"] == "lorenz"
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=15)
        assert out == b""
        assert b"noisy imported" in err and b"listing noisy tools" in err and b"raw write to fd 1" in err
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
