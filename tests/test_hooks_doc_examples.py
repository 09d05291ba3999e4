"""docs/hooks.md's examples of the catalog, call-record, command and lifespan hooks, run as they
are written (the middleware example is run by ``tests/test_call_middleware.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import httpx
import mcp
import pytest
from mcp.client.streamable_http import streamable_http_client

from lorenz import ConfigError
from lorenz.cli import main
from lorenz.host import serve_in_thread
from lorenz.workspace import open_workspace

HOOKS_DOC = (Path(__file__).resolve().parents[1] / "docs" / "hooks.md").read_text(encoding="utf-8")
ENV = {"LORENZ_LOAD_PLUGINS": ""}


def example_source(hook: str) -> str:
    """The first Python block after the heading of ``hook``'s section."""
    section = HOOKS_DOC.split(f"## `{hook}(", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def example(hook: str) -> ModuleType:
    module = ModuleType(f"example_{hook}")
    exec(compile(example_source(hook), "docs/hooks.md", "exec"), module.__dict__)
    return module


def workflow(path: Path, front: str) -> None:
    (path / "WORKFLOW.md").write_text(f"---\ntracker:\n  kind: demo\n{front}---\n", encoding="utf-8")


@pytest.mark.anyio
async def test_the_catalog_example(tmp_path: Path, host_pack: ModuleType) -> None:
    tokens = "    - {token: ci-token-1234567890abcd, name: ci}\n    - {token: ops-token-1234567890abc, name: ops}\n"
    viewers = "  middleware_options:\n    viewers: {viewers: ['token:ci']}\n"
    workflow(tmp_path, f"server:\n  middleware: [viewers]\n{viewers}  tokens:\n{tokens}")
    seen: dict[str, list[str]] = {}
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, example("lorenz_catalog")]) as server:
        for name, token in (("ci", "ci-token-1234567890abcd"), ("ops", "ops-token-1234567890abc")):
            async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
                transport = streamable_http_client(server.url, http_client=http)
                async with mcp.Client(transport) as client:
                    tools = (await client.list_tools()).tools
                    seen[name] = [f"{tool.name}: {tool.description}" for tool in tools]
                    if name == "ci":
                        refused = await client.call_tool("demo_fail", {})
    assert seen["ci"] == ["demo_add: (read-only access) Add two integers."]
    assert len(seen["ops"]) == 4
    assert refused.is_error is True and refused.structured_content is not None
    assert refused.structured_content["error"] == {
        "message": 'Unsupported tool: "demo_fail".',
        "supportedTools": ["demo_add"],
    }
    workflow(tmp_path, "server:\n  middleware: [viewers]\n  middleware_options:\n    viewers: {viewers: ci}\n")
    with pytest.raises(ConfigError, match="server.middleware_options.viewers: viewers.viewers must be a list"):
        open_workspace(cwd=tmp_path, env=ENV, plugins=[host_pack, example("lorenz_catalog")])


@pytest.mark.anyio
async def test_the_call_record_example(tmp_path: Path, host_pack: ModuleType) -> None:
    workflow(tmp_path, "server:\n  middleware: [jsonl]\n  middleware_options:\n    jsonl: {path: calls.jsonl}\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, example("lorenz_call_record")]) as server:
        async with mcp.Client(server.url) as client:
            await client.call_tool("demo_add", {"a": 1, "b": 2})
            await client.call_tool("demo_fail", {})
    # The host stopping gave the sink its queue to finish before it closed.
    lines = [json.loads(line) for line in (tmp_path / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(line["tool"], line["outcome"]) for line in lines] == [("demo_add", "success"), ("demo_fail", "failure")]


def test_the_command_example(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "lorenz_hello_example.py"
    path.write_text(example_source("lorenz_register_commands"), encoding="utf-8")
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "")
    monkeypatch.chdir(tmp_path)
    assert main(["-p", str(path), "hello", "ada", "--shout"]) == 0
    assert capsys.readouterr().out == "HELLO, ADA\n"


@pytest.mark.anyio
async def test_the_lifespan_example(tmp_path: Path, host_pack: ModuleType) -> None:
    warm = example("lorenz_startup")
    workflow(tmp_path, "tools:\n  warm: {}\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, warm]) as server:
        async with mcp.Client(server.url) as client:
            status = await client.call_tool("warm_status", {})
    assert status.structured_content == {"open": True}
    assert warm.CLIENT is None  # closed as the host stopped
