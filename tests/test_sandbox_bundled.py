"""Permissions computed from settings (issue 35): the bundled packs declare their board and their
configured sites; a third-party pack's function of its settings runs in a child, never in the
host; and the egress proxy carries a kept-alive client's plain-HTTP requests to the right path.
The bundled packs' whole suites run sandboxed in ``nox -s sandboxed``."""

from __future__ import annotations

import asyncio
import http.server
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from lorenz import Permissions, Settings, TrackerSettings
from lorenz.sandbox import landlock
from lorenz.sandbox.proxy import EgressProxy
from lorenz.workspace import open_workspace
from lorenz_jira.tools import JiraToolPack
from lorenz_linear.tools import LinearToolPack
from lorenz_local.pack import LocalToolPack
from lorenz_slack.tools import SlackToolPack

needs_landlock = pytest.mark.skipif(
    landlock.missing_feature(landlock.abi_version(), network=True) is not None, reason="no Landlock"
)


def test_the_bundled_packs_declare_what_their_settings_reach(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    local = Settings(tool_options={"local": {"path": "boards/main"}})
    assert LocalToolPack().permissions(local) == Permissions(write=[str(tmp_path / "boards" / "main")])
    assert LocalToolPack().permissions(Settings()).write == (str(tmp_path / ".lorenz" / "local"),)
    assert LocalToolPack().permissions(Settings(tool_options={"local": {"path": "~/b"}})).env == ("HOME", "USERPROFILE")

    jira = Settings(
        tracker=TrackerSettings(
            kind="jira", options={"baseUrl": "https://acme.atlassian.net", "mcp": {"url": "http://127.0.0.1:8123/mcp"}}
        )
    )
    assert JiraToolPack().permissions(jira).network == ("acme.atlassian.net:443", "127.0.0.1:8123")
    assert LinearToolPack().permissions(Settings()).network == ("api.linear.app:443",)
    linear = Settings(tool_options={"linear": {"endpoint": "http://[::1]:9000/graphql"}})
    assert LinearToolPack().permissions(linear).network == ("[::1]:9000",)
    slack = Settings(tracker=TrackerSettings(kind="slack", endpoint="http://127.0.0.1:7000/api"))
    assert SlackToolPack().permissions(slack).network == ("127.0.0.1:7000",)
    assert SlackToolPack().permissions(Settings()).network == ("slack.com:443",)


@needs_landlock
def test_a_third_party_pack_computes_its_permissions_in_a_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandbox_packs: ModuleType
) -> None:
    """``permissions(settings)`` of a pack the host never imports is computed in a child and enforced."""
    (tmp_path / "site").mkdir()
    site = sandbox_packs.write_site(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "granted").mkdir()
    (tmp_path / "granted" / "a.txt").write_text("granted", encoding="utf-8")
    (tmp_path / "other.txt").write_text("other", encoding="utf-8")
    granted = tmp_path / "granted"
    front = f"tracker:\n  kind: local\ntools:\n  computed:\n    dir: {granted}\nserver:\n  sandboxed_packs: ['*']\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\nWork.\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    workspace = open_workspace(cwd=tmp_path, env={**env, "LORENZ_LOAD_PLUGINS": "lorenz-local,sbx-computed"})
    try:

        async def run(path: Path) -> Any:
            async with httpx.AsyncClient() as http:
                return await workspace.call("computed_read", {"path": str(path)}, http)

        assert asyncio.run(run(tmp_path / "granted" / "a.txt")).result == {"text": "granted"}
        denied = asyncio.run(run(tmp_path / "other.txt"))
        assert denied.error == (
            f"pack computed tried to read {tmp_path / 'other.txt'}; add it to tools.computed.permissions.read"
        )
        assert "sbx_computed" not in sys.modules
    finally:
        workspace.close()
        sys.modules.pop("sbx_computed", None)


class _Paths(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keeps connections alive, as real APIs do

    def do_GET(self) -> None:
        body = self.path.encode()
        self.send_response(200 if self.path.startswith("/") else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def api() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Paths)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


def test_a_kept_alive_client_gets_each_path_through_the_proxy(api: int) -> None:
    """Regression: the second request on a proxied connection reached the API in absolute form (404)."""

    async def run() -> list[tuple[int, str]]:
        proxy = EgressProxy("acme", Permissions(network=[f"127.0.0.1:{api}"]))
        await proxy.start()
        try:
            async with httpx.AsyncClient(proxy=f"http://127.0.0.1:{proxy.port}", trust_env=False) as http:
                out = []
                for path in ("/one", "/two?x=1", "/three"):
                    response = await http.get(f"http://127.0.0.1:{api}{path}")
                    out.append((response.status_code, response.text))
                return out
        finally:
            await proxy.aclose()

    assert asyncio.run(run()) == [(200, "/one"), (200, "/two?x=1"), (200, "/three")]
