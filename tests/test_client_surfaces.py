"""What clients see (issue 15): the workflow's body as ``instructions`` (both eras, following hot
reload), and ``server.disabled_tools`` switching off any pack's tools with a reason and a hint."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import mcp
import pytest

from lorenz.host import serve_in_thread

pytestmark = pytest.mark.anyio

ENV = {"LORENZ_LOAD_PLUGINS": ""}


def write(path: Path, front_matter: str, body: str = "") -> None:
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(f"---\n{front_matter}---\n{body}", encoding="utf-8")
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_instructions_are_the_workflow_body_and_follow_reload(
    tmp_path: Path, host_pack: ModuleType, mode: str
) -> None:
    workflow = tmp_path / "WORKFLOW.md"
    write(workflow, "tracker:\n  kind: demo\n", "\n  Add numbers with demo_add.\n\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        async with mcp.Client(server.url, mode=mode) as client:
            assert client.instructions == "Add numbers with demo_add."
        write(workflow, "tracker:\n  kind: demo\n", "Now: never call demo_boom.\n")
        async with mcp.Client(server.url, mode=mode) as client:
            await client.list_tools()  # a request first, so the reload is in
        async with mcp.Client(server.url, mode=mode) as client:
            assert client.instructions == "Now: never call demo_boom."
        async with httpx.AsyncClient() as http:
            page = (await http.get(server.base_url + "/")).text
        assert "Now: never call demo_boom." in page


async def test_embedded_default_has_useful_instructions(tmp_path: Path) -> None:
    with serve_in_thread(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": "lorenz-local"}) as server:
        async with mcp.Client(server.url) as client:
            assert client.instructions is not None and "local_query" in client.instructions


async def test_operator_disabled_tools_are_hidden_and_explained(tmp_path: Path, host_pack: ModuleType) -> None:
    write(tmp_path / "WORKFLOW.md", 'tracker:\n  kind: demo\nserver:\n  disabled_tools: ["demo_b*", "nothing_*"]\n')
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        async with mcp.Client(server.url) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert names == ["demo_add", "demo_fail", "demo_list"]
            result = await client.call_tool("demo_boom", {})
            assert result.is_error is True and result.structured_content is not None
            error = result.structured_content["error"]
            assert error["message"] == (
                'Tool "demo_boom" is disabled: switched off by the operator (server.disabled_tools: "demo_b*"). '
                'To enable it: remove "demo_b*" from server.disabled_tools in WORKFLOW.md'
            )
            assert error["reason"] == "tool_disabled"
        async with httpx.AsyncClient() as http:
            page = (await http.get(server.base_url + "/")).text
    assert '<section class="tool disabled" id="tool-demo_boom">' in page
    assert "switched off by the operator" in page


async def _as(url: str, token: str) -> tuple[list[str], Any, Any]:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers) as http:
        transport = mcp.client.streamable_http.streamable_http_client(url, http_client=http)
        async with mcp.Client(transport) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            add = await client.call_tool("demo_add", {"a": 1, "b": 2})
            boom = await client.call_tool("demo_boom", {})
    return names, add, boom


async def test_scoped_tokens_see_and_call_only_their_tools(tmp_path: Path, host_pack: ModuleType) -> None:
    front = (
        "tracker:\n  kind: demo\nserver:\n  token: $FULL_TOKEN\n  call_log: calls.jsonl\n"
        '  tokens:\n    - {token: $CI_TOKEN, tools: ["demo_a*", "demo_list"], name: ci}\n'
    )
    write(tmp_path / "WORKFLOW.md", front)
    env = {**ENV, "FULL_TOKEN": "full-token-value-1", "CI_TOKEN": "ci-token-value-22"}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[host_pack]) as server:
        names, add, boom = await _as(server.url, "ci-token-value-22")
        assert names == ["demo_add", "demo_list"]
        assert add.is_error is False
        assert boom.is_error is True and boom.structured_content is not None
        assert boom.structured_content["error"]["message"] == 'Unsupported tool: "demo_boom".'
        assert boom.structured_content["error"]["supportedTools"] == ["demo_add", "demo_list"]
        names, _, boom = await _as(server.url, "full-token-value-1")
        assert names == ["demo_add", "demo_fail", "demo_boom", "demo_list"]
        assert boom.structured_content is not None and boom.structured_content["error"]["message"] == "kaboom"
        async with httpx.AsyncClient(headers={"Authorization": "Bearer nope"}) as http:
            refused = await http.post(server.url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert refused.status_code == 401
    lines = (tmp_path / "calls.jsonl").read_text(encoding="utf-8")
    assert '"token":"ci"' in lines and "ci-token-value" not in lines and "full-token-value" not in lines


async def test_project_url_is_on_the_landing_page(tmp_path: Path, host_pack: ModuleType) -> None:
    class Linked:
        kind = "linked"

        def create_client(self, settings: Any, context: Any) -> Any:
            raise NotImplementedError

        def default_tool_packs(self, settings: Any) -> list[str]:
            return ["demo"]

        def project_url(self, settings: Any) -> str:
            return "https://tracker.example/projects/ACME?x=<y>"

    from lorenz import hookimpl

    class Plugin:
        __name__ = "linked-plugin"

        @hookimpl
        def lorenz_register_trackers(self, register: Any) -> None:
            register(Linked())

    write(tmp_path / "WORKFLOW.md", "tracker:\n  kind: linked\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, Plugin()]) as server:
        async with httpx.AsyncClient() as http:
            page = (await http.get(server.base_url + "/")).text
    assert '<a href="https://tracker.example/projects/ACME?x=&lt;y&gt;">' in page
