"""Issue 28: every route is authorized like ``/mcp``. Pages and the server card show an anonymous
caller of a server with any token only how to connect, ``/healthz`` only a bare status; a scoped
token sees its own tools, calls and skills; grants fail closed; bad query values never cost a 500."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import mcp
import pytest
from mcp.client.streamable_http import streamable_http_client
from starlette.requests import Request

from lorenz.host import serve_in_thread
from lorenz.host.grants import FULL, NOTHING, Grant, grant_of, remember

pytestmark = pytest.mark.anyio

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
SECRET_BODY = "Private workflow instructions for the agents."
TOKENS = (
    '  tokens:\n    - {token: $CI_TOKEN, tools: ["demo_add"], name: ci}\n'
    '    - {token: $OPS_TOKEN, tools: ["demo_boom", "demo_fail"], name: ops}\n'
)
ENV = {"LORENZ_LOAD_PLUGINS": "", "CI_TOKEN": "ci-token-value-1", "OPS_TOKEN": "ops-token-value-2"}
CI = {"Authorization": "Bearer ci-token-value-1"}
OPS = {"Authorization": "Bearer ops-token-value-2"}


def _workflow(directory: Path, server: str) -> None:
    front = f"tracker:\n  kind: demo\nserver:\n{server}"
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\n{SECRET_BODY}\n", encoding="utf-8")


async def _call(http: httpx.AsyncClient, url: str, headers: dict[str, str], name: str, arguments: Any) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    reply = await http.post(url, json=body, headers={**HEADERS, **headers})
    assert reply.status_code == 200, reply.text


async def test_scoped_tokens_alone_keep_every_page_private(tmp_path: Path, host_pack: ModuleType) -> None:
    """Only ``server.tokens``: the page and card tell an anonymous caller how to connect and no
    more; each scoped token sees its own tools and its own calls, not the other's."""
    _workflow(tmp_path, TOKENS)
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        async with httpx.AsyncClient() as http:
            await _call(http, server.url, CI, "demo_add", {"a": "not-a-number"})  # rejected: an error text
            await _call(http, server.url, OPS, "demo_boom", {})  # fails with "kaboom"
            anonymous_mcp = await http.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            page = await http.get(server.base_url + "/")
            card = await http.get(server.base_url + "/.well-known/mcp.json")
            ci_page = await http.get(server.base_url + "/", headers=CI)
            ci_card = await http.get(server.base_url + "/.well-known/mcp.json", headers=CI)
            ops_page = await http.get(server.base_url + "/", headers=OPS)
            wrong_page = await http.get(server.base_url + "/", headers={"Authorization": "Bearer nope"})
    assert anonymous_mcp.status_code == 401
    for anonymous in (page.text, wrong_page.text):
        assert "requires a bearer token" in anonymous
        for hidden in ("demo_", SECRET_BODY, "Recent calls", "kaboom", "Instructions"):
            assert hidden not in anonymous
    assert card.json()["authentication"] == {"required": True, "type": "bearer"}
    assert "tools" not in card.json() and "packs" not in card.json()
    assert "access-control-allow-origin" not in card.headers
    assert "access-control-allow-origin" not in ci_card.headers
    assert [tool["name"] for tool in ci_card.json()["tools"]] == ["demo_add"]
    assert ci_card.json()["packs"] == ["demo"]
    assert 'id="tool-demo_add"' in ci_page.text and SECRET_BODY in ci_page.text
    assert "demo_boom" not in ci_page.text and "demo_fail" not in ci_page.text and "kaboom" not in ci_page.text
    assert "1 tool from 1 pack" in ci_page.text
    assert "demo_add" not in ops_page.text  # ci's call is not ops's to see, nor is the tool
    assert "kaboom" in ops_page.text and 'id="tool-demo_boom"' in ops_page.text


async def test_failures_are_shown_to_the_full_token_only(tmp_path: Path, host_pack: ModuleType, dist_dir: Path) -> None:
    """A plugin that failed to load: its error (and any path in it) reaches the full token on
    ``/healthz`` and the page; anyone else gets the bare status and counts."""
    _workflow(tmp_path, "  token: $FULL_TOKEN\n" + TOKENS)
    env = {**ENV, "LORENZ_LOAD_PLUGINS": "lorenz-broken", "FULL_TOKEN": "full-token-value-3"}
    full = {"Authorization": "Bearer full-token-value-3"}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[host_pack]) as server:
        async with httpx.AsyncClient() as http:
            health = {
                who: await http.get(server.base_url + "/healthz", headers=headers)
                for who, headers in (("anonymous", {}), ("ci", CI), ("full", full))
            }
            pages = {
                who: (await http.get(server.base_url + "/", headers=headers)).text
                for who, headers in (("anonymous", {}), ("ci", CI), ("full", full))
            }
    error = "lorenz_sdk_that_does_not_exist"
    assert error in json.dumps(health["full"].json()) and health["full"].json()["status"] == "degraded"
    assert error in pages["full"] and 'id="failures"' in pages["full"]
    for who in ("anonymous", "ci"):
        data = health[who].json()
        assert health[who].status_code == 200
        assert set(data) == {"status", "packs", "tools", "reloadFailed", "pid", "generation"}
        assert data["status"] == "degraded"
        assert error not in pages[who] and 'id="failures"' not in pages[who]


async def test_bad_query_values_never_fail_a_page(tmp_path: Path, host_pack: ModuleType) -> None:
    """``?refresh=²`` (``isdigit`` but not ``int``) and friends are ignored, not a 500."""
    _workflow(tmp_path, "  stateful: false\n")
    with serve_in_thread(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[host_pack]) as server:
        async with httpx.AsyncClient() as http:
            odd = ["²", "٣", "9" * 5000, "-1", "0", "1e3", "%ff", "%00", " 5", "5&refresh=²"]
            for value in odd:
                for path in ("/", "/healthz", "/.well-known/mcp.json"):
                    reply = await http.get(f"{server.base_url}{path}?refresh={value}&x={value}")
                    assert reply.status_code == 200, (path, value, reply.status_code)
                    assert 'http-equiv="refresh"' not in reply.text
            five = await http.get(server.base_url + "/?refresh=5")
            long = await http.get(server.base_url + "/?refresh=99999")
            card = await http.get(server.base_url + "/.well-known/mcp.json")
    assert '<meta http-equiv="refresh" content="5">' in five.text
    assert '<meta http-equiv="refresh" content="3600">' in long.text
    assert card.headers["access-control-allow-origin"] == "*"  # no auth at all: a public card
    assert card.json()["authentication"]["required"] is False and card.json()["tools"]


def _skills_workflow(directory: Path, stateful: bool) -> Path:
    board = json.dumps(str(directory / "board"))
    server = (
        f"server:\n  token: $FULL_TOKEN\n  stateful: {json.dumps(stateful)}\n  tokens:\n"
        '    - {token: $LOCAL_TOKEN, tools: ["local_*"], name: local-only}\n'
        '    - {token: $LINEAR_TOKEN, tools: ["linear_graphql"], name: linear-only}\n'
    )
    path = directory / "WORKFLOW.md"
    text = f"---\ntracker:\n  kind: local\n  path: {board}\ntools:\n  linear: {{api_key: lin_api_test}}\n{server}---\n"
    path.write_text(text, encoding="utf-8")
    return path


async def _skills_as(url: str, token: str, mode: str) -> tuple[list[str], list[str], Any, Any]:
    """What a client with ``token`` sees of the skills: resource URIs, prompt names, and the
    outcome (a result or the refusal) of reading the linear skill and getting its prompt."""
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with http, mcp.Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        uris = [str(resource.uri) for resource in (await client.list_resources()).resources]
        prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
        try:
            read: Any = await client.read_resource("skill://lorenz-linear/SKILL.md")
        except mcp.MCPError as exc:
            read = exc
        try:
            prompt: Any = await client.get_prompt("lorenz-linear")
        except mcp.MCPError as exc:
            prompt = exc
    return uris, prompts, read, prompt


@pytest.mark.parametrize(("mode", "stateful"), [("legacy", False), ("auto", False), ("legacy", True)])
async def test_scoped_tokens_see_only_their_packs_skills(tmp_path: Path, mode: str, stateful: bool) -> None:
    """Resources and prompts follow the token: the linear pack's skill exists for a token that may
    call a linear tool (and for the full token), and not for one limited to the local pack."""
    workflow = _skills_workflow(tmp_path, stateful)
    env = {
        "LORENZ_LOAD_PLUGINS": "lorenz-local,lorenz-linear",
        "FULL_TOKEN": "full-token-value-4",
        "LOCAL_TOKEN": "local-token-value-5",
        "LINEAR_TOKEN": "linear-token-value-6",
    }
    with serve_in_thread(workflow, cwd=tmp_path, env=env) as server:
        for token in ("full-token-value-4", "linear-token-value-6"):
            uris, prompts, read, prompt = await _skills_as(server.url, token, mode)
            assert "skill://lorenz-linear/SKILL.md" in uris and prompts == ["lorenz-linear"]
            assert "linear_graphql" in read.contents[0].text and prompt.messages
        uris, prompts, read, prompt = await _skills_as(server.url, "local-token-value-5", mode)
    assert not any(uri.startswith("skill://lorenz-linear/") for uri in uris)
    assert prompts == []
    assert isinstance(read, mcp.MCPError) and "Resource not found" in str(read)
    assert isinstance(prompt, mcp.MCPError) and "Unknown prompt" in str(prompt)


def test_a_request_without_a_grant_gets_nothing() -> None:
    """Fail closed: no grant in the request (or no request, and no local grant given) is none."""
    bare = Request({"type": "http", "headers": [], "state": {}})
    assert grant_of(bare) is NOTHING
    assert grant_of(None) is NOTHING
    assert grant_of(object()) is NOTHING
    assert grant_of(None, FULL) is FULL  # stdio, an in-process client: given explicitly
    scoped = Grant(name="ci", tools=("demo_*",))
    granted = Request({"type": "http", "headers": []})
    remember(granted.scope, scoped)
    assert grant_of(granted, FULL) is scoped
    assert not NOTHING.allows("demo_add") and NOTHING.allowed(["demo_add"]) == []


async def test_an_in_process_server_without_a_local_grant_serves_nothing(tmp_path: Path, host_pack: ModuleType) -> None:
    """The SDK's in-process client reaches the handlers with no HTTP request: only a server built
    with a local grant serves it (what stdio and ``lorenz.testing`` do)."""
    from lorenz.host.mcp.server import build_server
    from lorenz.host.mcp.state import HostState
    from lorenz.host.reload.live import LiveWorkspace

    _workflow(tmp_path, "  stateful: false\n")
    live = LiveWorkspace.open(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[host_pack], reload=False)
    host_pack.CALLS.clear()
    for local, expected in ((None, []), (FULL, ["demo_add", "demo_fail", "demo_boom", "demo_list"])):
        state = HostState(live, local_grant=local)
        try:
            async with mcp.Client(build_server(state)) as client:
                assert [tool.name for tool in (await client.list_tools()).tools] == expected
                result = await client.call_tool("demo_add", {"a": 1, "b": 2})
                assert result.is_error is (local is None)
        finally:
            await state.runner.aclose()
            state.recorder.close()
    assert host_pack.CALLS == ["demo_add"]


@pytest.mark.parametrize(("mode", "stateful"), [("legacy", False), ("auto", False), ("legacy", True)])
async def test_an_http_request_the_guard_granted_nothing_sees_nothing(
    tmp_path: Path, host_pack: ModuleType, monkeypatch: pytest.MonkeyPatch, mode: str, stateful: bool
) -> None:
    """Were the guard ever to let a request through without recording its grant, the handlers
    (the lean path's and the SDK transport's) would list and run nothing, not everything."""
    import lorenz.host.security

    _workflow(tmp_path, f"  stateful: {json.dumps(stateful)}\n")
    monkeypatch.setattr(lorenz.host.security, "remember", lambda scope, grant: None)
    host_pack.CALLS.clear()
    with serve_in_thread(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[host_pack]) as server:
        async with mcp.Client(server.url, mode=mode) as client:
            assert (await client.list_tools()).tools == []
            assert (await client.call_tool("demo_add", {"a": 1, "b": 2})).is_error is True
            assert (await client.list_resources()).resources == []
            assert (await client.list_prompts()).prompts == []
    assert host_pack.CALLS == []


@pytest.mark.slow
async def test_stdio_serves_every_skill_and_tool(tmp_path: Path) -> None:
    """Over stdio the client started the server: the full grant, given explicitly, still serves
    every tool, resource and prompt."""
    import os
    import sys

    from mcp import StdioServerParameters

    workflow = _skills_workflow(tmp_path, stateful=False)
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update(LORENZ_LOAD_PLUGINS="lorenz-local,lorenz-linear", FULL_TOKEN="f" * 16, LOCAL_TOKEN="l" * 16)
    env["LINEAR_TOKEN"] = "n" * 16  # the tokens guard HTTP only: stdio ignores them
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorenz", "serve", "--stdio", str(workflow)], env=env, cwd=tmp_path
    )
    async with mcp.Client(params) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert "linear_graphql" in names and any(name.startswith("local_") for name in names)
        uris = [str(resource.uri) for resource in (await client.list_resources()).resources]
        assert "skill://lorenz-linear/SKILL.md" in uris
        assert [prompt.name for prompt in (await client.list_prompts()).prompts] == ["lorenz-linear"]
