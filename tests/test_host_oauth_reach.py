"""Who an OAuth caller can reach, seen from outside: ``lorenz tools --json`` shows a tool's own
scopes, ``lorenz lint`` flags one that is no scope token, ``lorenz check`` warns about a tool no
``server.auth.scopes`` entry grants, and the landing page shows an OAuth caller its own recent
calls (by subject), against the loopback issuer (``tests/oauth_issuer.py``) and the official SDK."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import httpx2
import mcp
import pytest
from mcp.client.streamable_http import streamable_http_client

from lorenz.cli import main
from lorenz.host import serve_in_thread
from lorenz.testing import loopback_server

HERE = Path(__file__).parent
MODULE = "oauth_reach_plugin"
PLUGIN = """
from typing import Any

from attrs import frozen

from lorenz import ToolSpec, hookimpl, unsupported_tool_failure
from lorenz.authoring import CallContext, Pack, tool
from lorenz.testing import FakeTracker


@frozen
class NoArgs:
    pass


@tool(name="acme_read_item", description="Read an item.", input=NoArgs)
async def read_item(ctx: CallContext, args: NoArgs) -> dict[str, Any]:
    return {"read": True}


@tool(name="acme_list_items", description="List the items.", input=NoArgs)
async def list_items(ctx: CallContext, args: NoArgs) -> dict[str, Any]:
    return {"items": []}


@tool(name="acme_delete_item", description="Delete an item.", input=NoArgs, auth=["items:delete"])
async def delete_item(ctx: CallContext, args: NoArgs) -> dict[str, Any]:
    return {"deleted": True}


class Loose:
    name = "loose"

    def tool_specs(self, settings):
        schema = {"type": "object", "properties": {}, "additionalProperties": False}
        return [ToolSpec(name="loose_drop", description="Drop it.", input_schema=schema, auth=("items drop",))]

    async def execute_tool(self, name, input, context):
        return unsupported_tool_failure(name, ["loose_drop"])


@hookimpl
def lorenz_register_tool_packs(register):
    register(Pack(name="acme", tools=[read_item, list_items, delete_item]))
    register(Loose())


@hookimpl
def lorenz_register_trackers(register):
    register(FakeTracker(packs=["acme"]))
"""


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


oauth_issuer = _load("oauth_issuer")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory holding the plugin module (on ``sys.path``) and, once written, its workflow."""
    (tmp_path / f"{MODULE}.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "")
    monkeypatch.delenv("LORENZ_WORKFLOW", raising=False)
    yield tmp_path
    sys.modules.pop(MODULE, None)  # each test's copy is its own


def _workflow(directory: Path, server: str = "") -> None:
    front = f"tracker:\n  kind: lorenz-testing\n{server}"
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")


def test_tools_json_shows_a_tools_own_scopes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _workflow(project)
    assert main(["-p", MODULE, "tools", "--json"]) == 0
    tools = {tool["name"]: tool for tool in json.loads(capsys.readouterr().out)["tools"]}
    assert tools["acme_delete_item"]["auth"] == ["items:delete"]
    assert "auth" not in tools["acme_read_item"]  # only a tool that has scopes carries the key
    assert main(["-p", MODULE, "tools", "--all", "--json"]) == 0
    everything = {tool["name"]: tool for tool in json.loads(capsys.readouterr().out)["tools"]}
    assert everything["acme_delete_item"]["auth"] == ["items:delete"]
    assert everything["loose_drop"]["mounted"] is False and everything["loose_drop"]["auth"] == ["items drop"]


def test_lint_warns_about_an_auth_scope_that_is_no_scope_token(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["lint", str(project / f"{MODULE}.py"), "--json"])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert "diagnostics" in report, out + err
    found = [d for d in report["diagnostics"] if d["rule"] == "auth-scope"]
    assert [(d["severity"], d["pack"], d["tool"]) for d in found] == [("warning", "loose", "loose_drop")]
    assert "'items drop'" in found[0]["message"]
    assert code == (1 if report["errors"] else 0)


@pytest.mark.parametrize(
    ("scopes", "expected"),
    [
        (
            '      "tools:read": ["acme_read_*", "acme_raed_*"]\n',
            [
                'server.auth.scopes.tools:read: "acme_raed_*" matches no mounted tool (did you mean "acme_read_item"?)',
                "server.auth.scopes: no scope grants acme_delete_item (which declares auth items:delete): "
                "no OAuth caller can see or call it; add it to a scope's tool globs",
                "server.auth.scopes: no scope grants acme_list_items: no OAuth caller can see or call it",
            ],
        ),
        ('      "tools:read": ["acme_read_*"]\n      "tools:write": ["*"]\n', []),
    ],
)
def test_check_warns_about_tools_no_scope_grants(
    project: Path, capsys: pytest.CaptureFixture[str], scopes: str, expected: list[str]
) -> None:
    _workflow(project, f"server:\n  auth:\n    issuer: https://login.example.com/\n    scopes:\n{scopes}")
    assert main(["-p", MODULE, "check"]) == 0
    err = capsys.readouterr().err
    prefix = "lorenz: warning: WORKFLOW.md: "
    warnings = [line.removeprefix(prefix) for line in err.splitlines() if line.startswith(prefix)]
    assert warnings == expected, err


@pytest.fixture(scope="module")
def issuer() -> Iterator[Any]:
    authority = oauth_issuer.Issuer()
    with loopback_server(authority.app()) as served:
        authority.base_url = served.base_url
        yield authority


ROW = re.compile(r'<tr class="call-\w+"><td>[^<]*</td><td><code>(\w+)</code>')


@pytest.mark.anyio
@pytest.mark.slow
async def test_the_landing_page_shows_an_oauth_caller_its_own_calls(project: Path, issuer: Any) -> None:
    _workflow(project, f"server:\n  token: full-token-value-123\n  auth:\n    issuer: {issuer.base_url}\n")
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", "")}
    plugin = importlib.import_module(MODULE)
    with serve_in_thread(cwd=project, env=env, plugins=[plugin], reload=False) as running:
        alice = issuer.token(aud=running.url, sub="alice@example.com")
        bob = issuer.token(aud=running.url, sub="bob@example.com")
        for token, name in ((alice, "acme_read_item"), (bob, "acme_list_items"), (bob, "acme_list_items")):
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            async with http, mcp.Client(streamable_http_client(running.url, http_client=http)) as client:
                assert (await client.call_tool(name, {})).is_error is False
        pages = {}
        async with httpx.AsyncClient(base_url=running.url.removesuffix("/mcp")) as web:
            for who, token in (("alice", alice), ("bob", bob), ("full", "full-token-value-123")):
                pages[who] = (await web.get("/", headers={"Authorization": f"Bearer {token}"})).text
    assert "Signed in as <b>alice@example.com</b>" in pages["alice"]
    assert ROW.findall(pages["alice"]) == ["acme_read_item"]
    assert ROW.findall(pages["bob"]) == ["acme_list_items", "acme_list_items"]
    assert sorted(ROW.findall(pages["full"])) == ["acme_list_items", "acme_list_items", "acme_read_item"]
