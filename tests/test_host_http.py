"""End to end over Streamable HTTP: the real app under uvicorn on 127.0.0.1:0, the official SDK
client, and raw httpx probes for what the client cannot send."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import httpx2
import mcp
import pytest
from mcp.client.streamable_http import streamable_http_client

from lorenz.host import RunningServer, serve_in_thread

pytestmark = pytest.mark.anyio

WORKFLOW = "---\ntracker:\n  kind: demo\n{extra}---\nprompt\n"
TOOLS = ["demo_add", "demo_fail", "demo_boom", "demo_list"]
JSON_HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


def write_workflow(directory: Path, extra: str = "") -> Path:
    path = directory / "WORKFLOW.md"
    path.write_text(WORKFLOW.format(extra=extra))
    return path


@pytest.fixture
def server(tmp_path: Path, host_pack: ModuleType) -> Iterator[RunningServer]:
    write_workflow(tmp_path)
    with serve_in_thread(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[host_pack]) as running:
        yield running


@pytest.fixture
def token_server(tmp_path: Path, host_pack: ModuleType) -> Iterator[RunningServer]:
    write_workflow(tmp_path)
    env = {"LORENZ_LOAD_PLUGINS": ""}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[host_pack], token="s3cret-token") as running:
        yield running


def rpc(method: str, params: dict[str, Any] | None = None, id: int = 1) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        body["params"] = params
    return body


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_initialize_list_and_call(server: RunningServer, mode: str, host_pack: ModuleType) -> None:
    """Both protocol eras list the mounted tools and return a structured success."""
    async with mcp.Client(server.url, mode=mode) as client:
        assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        listed = await client.list_tools()
        assert [tool.name for tool in listed.tools] == TOOLS
        add = listed.tools[0]
        assert add.input_schema == host_pack.ADD_SCHEMA
        assert add.annotations is not None and add.annotations.read_only_hint is True
        result = await client.call_tool("demo_add", {"a": 40, "b": 2})
        assert result.is_error is False
        assert result.structured_content == {"sum": 42}
        assert result.content[0].type == "text"
        assert result.content[0].text == json.dumps({"sum": 42}, indent=2)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tool_failures_are_error_results(server: RunningServer, mode: str) -> None:
    """A failing pack, a raising pack and an unknown tool are isError results, not protocol errors."""
    async with mcp.Client(server.url, mode=mode) as client:
        failed = await client.call_tool("demo_fail", {})
        assert failed.is_error is True
        assert json.loads(failed.content[0].text) == {"error": {"message": "nope", "code": "demo"}}
        assert failed.structured_content == {"error": {"message": "nope", "code": "demo"}}
        boom = await client.call_tool("demo_boom", {})
        assert boom.is_error is True
        assert json.loads(boom.content[0].text) == {"error": {"message": "kaboom"}}
        unknown = await client.call_tool("nope", {})
        assert unknown.is_error is True
        assert json.loads(unknown.content[0].text) == {
            "error": {"message": 'Unsupported tool: "nope".', "supportedTools": TOOLS}
        }


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_bad_arguments_name_the_field(server: RunningServer, mode: str) -> None:
    """Arguments are checked against inputSchema before the pack runs; the error names the field."""
    async with mcp.Client(server.url, mode=mode) as client:
        wrong_type = await client.call_tool("demo_add", {"a": "forty", "b": 2})
        assert wrong_type.is_error is True and wrong_type.structured_content is not None
        error = wrong_type.structured_content["error"]
        assert error["path"] == "$.a"
        assert error["message"] == "invalid arguments for tool demo_add: a: must be an integer"
        assert wrong_type.content[0].text.startswith(f"Error: {error['message']}\n")
        missing = await client.call_tool("demo_add", {"a": 1})
        assert missing.is_error is True and missing.structured_content is not None
        assert missing.structured_content["error"]["message"] == "invalid arguments for tool demo_add: b: required"


async def test_non_object_payload_has_no_structured_content(server: RunningServer) -> None:
    """A list payload is text only: structuredContent is reserved for objects."""
    async with mcp.Client(server.url, mode="legacy") as client:
        result = await client.call_tool("demo_list", {"n": 2})
        assert result.is_error is False
        assert result.structured_content is None
        assert json.loads(result.content[0].text) == [0, 1]


async def test_bearer_token_rejected_and_accepted(token_server: RunningServer) -> None:
    """Without the token /mcp answers 401 and nothing runs; with it the SDK client works."""
    async with httpx.AsyncClient() as http:
        missing = await http.post(token_server.url, json=rpc("tools/call", {"name": "demo_add"}), headers=JSON_HEADERS)
        wrong = await http.post(
            token_server.url,
            json=rpc("tools/list"),
            headers={**JSON_HEADERS, "Authorization": "Bearer wrong"},
        )
    assert missing.status_code == 401
    assert missing.json() == {"error": {"code": "unauthorized", "message": "Missing or invalid MCP bearer token"}}
    assert wrong.status_code == 401
    for mode in ("legacy", "auto"):
        async with (
            httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret-token"}) as authed,
            mcp.Client(streamable_http_client(token_server.url, http_client=authed), mode=mode) as client,
        ):
            result = await client.call_tool("demo_add", {"a": 1, "b": 1})
            assert result.structured_content == {"sum": 2}


async def test_foreign_origin_and_host_rejected(server: RunningServer) -> None:
    """DNS-rebinding guard: a foreign Origin (another loopback port included) gets 403 and a foreign
    Host 421; the server's own origin passes."""
    async with httpx.AsyncClient() as http:
        origin = await http.post(
            server.url, json=rpc("tools/list"), headers={**JSON_HEADERS, "Origin": "http://evil.example"}
        )
        host = await http.post(server.url, json=rpc("tools/list"), headers={**JSON_HEADERS, "Host": "evil.example"})
        landing = await http.get(server.base_url + "/", headers={"Host": "evil.example:80"})
        other_port = await http.post(
            server.url, json=rpc("tools/list"), headers={**JSON_HEADERS, "Origin": "http://localhost:3000"}
        )
        local = await http.post(server.url, json=rpc("tools/list"), headers={**JSON_HEADERS, "Origin": server.base_url})
    assert origin.status_code == 403
    assert other_port.status_code == 403
    assert host.status_code == 421
    assert landing.status_code == 421
    assert local.status_code == 200
    assert [tool["name"] for tool in local.json()["result"]["tools"]] == TOOLS


async def test_oversize_body_is_413(server: RunningServer) -> None:
    """A body over server.max_body_bytes is refused with 413, even when sent chunked."""
    big = json.dumps(rpc("tools/call", {"name": "demo_add", "arguments": {"pad": "x" * (1024 * 1024 + 10)}}))

    async def chunks() -> Any:  # no Content-Length: the cap must read the stream
        for start in range(0, len(big), 65536):
            yield big[start : start + 65536].encode()

    async with httpx.AsyncClient() as http:
        declared = await http.post(server.url, content=big, headers=JSON_HEADERS)
        streamed = await http.post(server.url, content=chunks(), headers=JSON_HEADERS)
    assert declared.status_code == 413
    assert streamed.status_code == 413


async def test_malformed_json_is_parse_error(server: RunningServer) -> None:
    """Malformed JSON gets a JSON-RPC parse error (-32700), never a 500."""
    async with httpx.AsyncClient() as http:
        response = await http.post(server.url, content=b"{", headers=JSON_HEADERS)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


async def test_healthz(server: RunningServer) -> None:
    """/healthz answers 200 with the pack and tool counts, and the process that answered."""
    async with httpx.AsyncClient() as http:
        response = await http.get(server.base_url + "/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "packs": 1,
        "tools": 4,
        "reloadFailed": False,
        "pid": os.getpid(),
        "generation": 0,
    }
    assert "server" not in response.headers  # what the host runs on is not advertised
    assert "date" in response.headers  # RFC 9110: an origin server with a clock sends it


async def test_landing_page_and_card_list_exactly_the_mounted_tools(server: RunningServer) -> None:
    """The landing page and the server card list the mounted tools, each with its pack."""
    async with httpx.AsyncClient() as http:
        page = await http.get(server.base_url + "/")
        card = await http.get(server.base_url + "/.well-known/mcp.json")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    html = page.text
    for name in TOOLS:
        assert f'id="tool-{name}"' in html
    assert html.count('<section class="tool"') == len(TOOLS)
    assert "extra_ping" not in html
    assert "Raises &lt;b&gt;kaboom&lt;/b&gt;." in html  # escaped, not markup
    assert f"claude mcp add --transport http lorenz {server.url}" in html
    assert card.status_code == 200
    data = card.json()
    assert data["endpoints"] == {"streamable_http": server.url}
    assert [(tool["name"], tool["pack"]) for tool in data["tools"]] == [(name, "demo") for name in TOOLS]
    assert data["capabilities"]["logging"] is False


async def test_stateless_get_and_delete_are_405(server: RunningServer) -> None:
    """Stateless /mcp has no stream to open or session to end: GET and DELETE get 405."""
    async with httpx.AsyncClient() as http:
        get = await http.get(server.url, headers={"Accept": "text/event-stream"})
        delete = await http.delete(server.url)
    assert (get.status_code, delete.status_code) == (405, 405)
    assert get.headers["allow"] == "POST"


async def test_initialize_declares_tools_and_logging(server: RunningServer) -> None:
    """initialize advertises tools and logging, and logging/setLevel (which the Inspectors call
    when logging is declared) answers, even stateless, where it has no session to apply to."""
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    async with httpx.AsyncClient() as http:
        response = await http.post(server.url, json=rpc("initialize", params), headers=JSON_HEADERS)
        level = await http.post(server.url, json=rpc("logging/setLevel", {"level": "info"}), headers=JSON_HEADERS)
    result = response.json()["result"]
    assert result["serverInfo"]["name"] == "lorenz"
    assert "tools" in result["capabilities"]
    assert result["capabilities"]["logging"] == {}
    assert level.json()["result"] == {}


async def test_modern_era_header_mismatch_is_rejected(server: RunningServer) -> None:
    """2026-07-28 requests whose Mcp-Method header disagrees with the body get -32020 / 400."""
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    body = rpc("tools/call", {"name": "demo_add", "arguments": {"a": 1, "b": 1}, "_meta": meta})
    headers = {**JSON_HEADERS, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    async with httpx.AsyncClient() as http:
        response = await http.post(server.url, json=body, headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020


async def test_stateful_session_delete_then_404(tmp_path: Path, host_pack: ModuleType) -> None:
    """Stateful mode: DELETE ends the session (2xx) and a later request with its id gets 404."""
    write_workflow(tmp_path, "server:\n  stateful: true\n")
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    with serve_in_thread(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[host_pack]) as running:
        async with httpx.AsyncClient() as http:
            init = await http.post(running.url, json=rpc("initialize", params), headers=JSON_HEADERS)
            session = {**JSON_HEADERS, "Mcp-Session-Id": init.headers["mcp-session-id"]}
            listed = await http.post(running.url, json=rpc("tools/list", id=2), headers=session)
            deleted = await http.delete(running.url, headers=session)
            after = await http.post(running.url, json=rpc("tools/list", id=3), headers=session)
    assert [tool["name"] for tool in listed.json()["result"]["tools"]] == TOOLS
    assert 200 <= deleted.status_code < 300
    assert after.status_code == 404


async def test_unknown_route_is_json_404(server: RunningServer) -> None:
    """Unknown paths get a JSON 404; a wrong method on a page gets a JSON 405."""
    async with httpx.AsyncClient() as http:
        missing = await http.get(server.base_url + "/missing")
        wrong = await http.post(server.base_url + "/healthz")
    assert missing.status_code == 404
    assert missing.json() == {"error": {"code": "not_found", "message": "Route not found"}}
    assert wrong.status_code == 405
    assert wrong.json()["error"]["code"] == "method_not_allowed"
