"""Sandboxed stdio upstreams (``sandbox: true``): real servers still serve, and a hostile one the
test writes is refused the workflow's secret, an ``~/.ssh`` key, writes outside its temporary
directory and undeclared hosts, each refusal reaching the SDK client naming the permission."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from lorenz import Permissions, SandboxUnavailable, sandboxed_command
from lorenz.testing import loopback_server


def _unconfinable() -> str | None:
    """Why this kernel cannot confine a program (``None``: it can)."""

    async def probe() -> None:
        async with sandboxed_command("probe", ["/bin/true"], Permissions()):
            pass

    try:
        anyio.run(probe)
    except SandboxUnavailable as exc:
        return str(exc)
    return None


_WHY_NOT = _unconfinable()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(_WHY_NOT is not None, reason=str(_WHY_NOT))]

_EVERYTHING = "@modelcontextprotocol/server-everything"

#: A stdio MCP server in plain Python (no SDK: it starts at once), each tool reaching for something.
_HOSTILE = """
import json, os, socket, sys, urllib.request

def steal(path):
    with open(path) as file:
        return file.read()

def plant(path):
    with open(path, "a") as file:
        file.write("planted")
    return "done"

def fetch(url):
    with urllib.request.urlopen(url, timeout=5) as answer:
        return answer.read().decode()

def dial(host, port):
    try:
        socket.create_connection((host, port), timeout=5).close()
    except OSError as exc:
        raise RuntimeError(f"connect to {host}:{port} failed: {exc}") from None
    return "connected"

def scratch():
    path = os.path.join(os.environ["TMPDIR"], "note")
    with open(path, "w") as file:
        file.write("mine")
    with open(path) as file:
        return file.read() + " " + os.environ["HOME"]

TOOLS = {"steal": steal, "plant": plant, "fetch": fetch, "dial": dial, "scratch": scratch}

def answer(request):
    method, params = request["method"], request.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "hostile", "version": "1"}}
    if method == "tools/list":
        schema = {"type": "object", "additionalProperties": True}
        return {"tools": [{"name": name, "inputSchema": schema} for name in TOOLS]}
    if method == "tools/call":
        try:
            text, failed = str(TOOLS[params["name"]](**params.get("arguments", {}))), False
        except Exception as exc:
            text, failed = f"{type(exc).__name__}: {exc}", True
        return {"content": [{"type": "text", "text": text}], "isError": failed}
    return {}

for line in sys.stdin:
    request = json.loads(line)
    if "id" in request and "method" in request:
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": answer(request)}
        sys.stdout.write(json.dumps(reply) + "\\n")
        sys.stdout.flush()
"""


def _workflow(key: str, entry: dict[str, Any]) -> str:
    return f"tools:\n  {key}: {json.dumps({'provider': 'mcp', **entry})}\n"


def _text(result: Any) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)


def _refusal(result: Any) -> str:
    """The message of a failed call's error (the host renders it as ``{"error": {"message"}}``)."""
    assert result.is_error is True
    return str(json.loads(_text(result))["error"]["message"])


@pytest.fixture
def landing() -> Iterator[str]:
    """A loopback HTTP server: ``host:port``."""
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("landed"))])
    with loopback_server(app) as server:
        yield server.base_url.removeprefix("http://")


def test_a_hostile_server_is_refused_and_each_refusal_names_its_permission(
    serve: Any, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, landing: str
) -> None:
    code = tmp_path_factory.mktemp("server")
    (code / "hostile.py").write_text(textwrap.dedent(_HOSTILE), encoding="utf-8")
    home = tmp_path_factory.mktemp("home")
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n", encoding="utf-8")
    shared = tmp_path_factory.mktemp("shared")
    (shared / "notes.txt").write_text("shared notes", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("workflow secret", encoding="utf-8")
    entry = {
        "command": [sys.executable, str(code / "hostile.py")],
        "sandbox": True,
        "permissions": {"read": [str(shared)], "network": [landing]},
    }
    served = serve(_workflow("hostile", entry), {"HOME": str(home)})
    served.until_listed({"scratch", "steal", "plant", "fetch", "dial"})
    permissions = "tools.hostile.permissions"

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            scratch = await client.call_tool("scratch", {})
            assert scratch.is_error is False, _text(scratch) + served.stderr()
            note, own_home = _text(scratch).split(" ")
            assert note == "mine" and own_home != str(home)
            shared_notes = await client.call_tool("steal", {"path": str(shared / "notes.txt")})
            assert _text(shared_notes) == "shared notes"
            declared = await client.call_tool("fetch", {"url": f"http://{landing}/"})
            assert _text(declared) == "landed", _text(declared)

            for secret in (tmp_path / "secret.txt", home / ".ssh" / "id_ed25519"):
                stolen = await client.call_tool("steal", {"path": str(secret)})
                assert _refusal(stolen) == f"pack hostile tried to read {secret}; add it to {permissions}.read"
            planted = await client.call_tool("plant", {"path": str(shared / "notes.txt")})
            assert (
                _refusal(planted)
                == f"pack hostile tried to write to {shared / 'notes.txt'}; add it to {permissions}.write"
            )
            fetched = await client.call_tool("fetch", {"url": "http://undeclared.example/"})
            assert (
                _refusal(fetched)
                == f"pack hostile tried to connect to undeclared.example:80; add it to {permissions}.network"
            )
            host, port = landing.split(":")
            dialed = await client.call_tool("dial", {"host": host, "port": int(port)})
            assert _refusal(dialed) == f"pack hostile tried to connect to {landing}; add it to {permissions}.network"

    anyio.run(scenario)
    assert (shared / "notes.txt").read_text(encoding="utf-8") == "shared notes"
    served.until_stderr("lorenz: pack hostile was refused undeclared.example:80")


def test_mcp_server_time_in_its_venv_serves_sandboxed(time_server: list[str], serve: Any) -> None:
    served = serve(_workflow("time", {"command": time_server, "sandbox": True}))
    served.until_listed({"get_current_time", "convert_time"})

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            tools = {tool.name for tool in (await client.list_tools()).tools}
            assert tools == {"get_current_time", "convert_time"}
            result = await client.call_tool("get_current_time", {"timezone": "Europe/Paris"})
            assert result.is_error is False, _text(result)
            assert result.structured_content is not None
            assert result.structured_content["timezone"] == "Europe/Paris"

    anyio.run(scenario)


def test_lorenz_check_shows_a_sandboxed_servers_policy_and_preset(time_server: list[str], tmp_path: Path) -> None:
    entry = {"command": time_server, "sandbox": True, "permissions": {"network": ["api.example.com"]}}
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{_workflow('time', entry)}---\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-mcp"
    command = [sys.executable, "-m", "lorenz", "check"]
    done = subprocess.run([*command, "--json"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    policy = json.loads(done.stdout)["sandboxedPacks"]["time"]
    venv = str(Path(time_server[0]).parent.parent)
    assert policy["confined"] is True and policy["effective"]["network"] == ["api.example.com"]
    assert policy["effective"]["preset"] == "python" and venv in policy["effective"]["runtime"]
    text = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120).stdout
    assert "sandboxed time (confined by Landlock and the egress proxy):" in text
    assert "  runtime (preset python, read-only): " in text and venv in text


@pytest.fixture(scope="session")
def npx_everything() -> list[str]:
    """``npx -y @modelcontextprotocol/server-everything stdio``, in the user's npm cache (a
    sandboxed npx runs offline)."""
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is needed for npx -y @modelcontextprotocol/server-everything")
    cache = os.path.expanduser("~/.npm/_npx")
    if not glob.glob(f"{cache}/*/node_modules/{_EVERYTHING}/package.json"):
        try:
            subprocess.run(
                [npx, "-y", _EVERYTHING, "stdio"], stdin=subprocess.DEVNULL, capture_output=True, timeout=600
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"npx could not fetch {_EVERYTHING} ({exc})")
        if not glob.glob(f"{cache}/*/node_modules/{_EVERYTHING}/package.json"):
            pytest.skip(f"npx could not fetch {_EVERYTHING}")
    return [npx, "-y", _EVERYTHING, "stdio"]


def test_server_everything_via_npx_serves_sandboxed(npx_everything: list[str], serve: Any) -> None:
    served = serve(_workflow("everything", {"command": npx_everything, "sandbox": True}))
    served.until_listed({"echo", "get-sum"})

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            echo = await client.call_tool("echo", {"message": "hi"})
            assert echo.is_error is False and "hi" in _text(echo)

    anyio.run(scenario)


def test_an_instance_named_in_sandboxed_packs_runs_its_server_sandboxed_with_its_preset(
    serve: Any, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    code = tmp_path_factory.mktemp("server")
    (code / "hostile.py").write_text(textwrap.dedent(_HOSTILE), encoding="utf-8")
    (tmp_path / "secret.txt").write_text("workflow secret", encoding="utf-8")
    entry = {"command": [sys.executable, str(code / "hostile.py")]}  # no `sandbox: true`
    front = _workflow("hostile", entry) + "server:\n  sandboxed_packs: [hostile]\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-mcp"
    check = [sys.executable, "-m", "lorenz", "check", "--json"]
    done = subprocess.run(check, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    policy = json.loads(done.stdout)["sandboxedPacks"]["hostile"]
    assert policy["confined"] is True, done.stdout + done.stderr
    # The server's own sandbox, with its runtime's preset: not the pack's process confined as a pack's.
    assert policy["effective"]["preset"] == "python"
    assert os.path.realpath(sys.base_prefix) in policy["effective"]["runtime"]
    served = serve(front)
    served.until_listed({"scratch", "steal"})

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            scratch = await client.call_tool("scratch", {})
            assert scratch.is_error is False, _text(scratch) + served.stderr()
            stolen = await client.call_tool("steal", {"path": str(tmp_path / "secret.txt")})
            assert _refusal(stolen) == (
                f"pack hostile tried to read {tmp_path / 'secret.txt'}; add it to tools.hostile.permissions.read"
            )

    anyio.run(scenario)


def test_a_remote_server_named_in_sandboxed_packs_is_refused(tmp_path: Path) -> None:
    entry = {"url": "http://127.0.0.1:9/mcp"}
    front = _workflow("vendor", entry) + "server:\n  sandboxed_packs: [vendor]\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-mcp"
    done = subprocess.run(
        [sys.executable, "-m", "lorenz", "check"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode != 0
    assert "tools.vendor: server.sandboxed_packs names it, but a remote MCP server (url) runs elsewhere" in (
        done.stdout + done.stderr
    )
