"""An upstream's resources and prompts served under its instance: ``@modelcontextprotocol/server-
everything`` mounted twice through ``lorenz serve``, listed, read and rendered with the official SDK
client; prompts under each instance's prefix, resources under the upstream's URIs from the one
instance that serves them."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest
from mcp_types import TextContent, TextResourceContents

pytestmark = pytest.mark.slow


def _calls(served: Any, tmp_path: Path, count: int) -> list[dict[str, Any]]:
    path = tmp_path / "calls.jsonl"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return [json.loads(line) for line in lines]
        time.sleep(0.05)
    raise AssertionError(f"call log has fewer than {count} lines:\n{served.stderr()}")


def test_server_everything_resources_and_prompts_under_two_instances(
    everything_server: list[str], serve: Any, tmp_path: Path
) -> None:
    first = {"provider": "mcp", "command": everything_server, "prefix": "one_"}
    second = {"provider": "mcp", "command": everything_server, "prefix": "two_", "resources": False}
    front = f"tools:\n  one: {json.dumps(first)}\n  two: {json.dumps(second)}\nserver:\n  call_log: calls.jsonl\n"
    served = serve(front)
    served.until_listed({"one_echo", "two_echo"})

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            resources = {str(r.uri): r for r in (await client.list_resources()).resources}
            readme = "demo://resource/static/document/architecture.md"
            assert readme in resources and resources[readme].mime_type == "text/markdown"
            (content,) = (await client.read_resource(readme)).contents
            assert isinstance(content, TextResourceContents) and content.uri == readme and content.text
            templates = [t.uri_template for t in (await client.list_resource_templates()).resource_templates]
            assert "demo://resource/dynamic/text/{resourceId}" in templates
            (dynamic,) = (await client.read_resource("demo://resource/dynamic/text/3")).contents
            assert isinstance(dynamic, TextResourceContents) and "3" in dynamic.text

            prompts = {p.name: p for p in (await client.list_prompts()).prompts}
            assert {"one_simple-prompt", "two_simple-prompt", "one_args-prompt", "two_args-prompt"} <= set(prompts)
            assert "simple-prompt" not in prompts
            arguments = {a.name: a.required for a in prompts["two_args-prompt"].arguments or []}
            assert arguments == {"city": True, "state": False}
            rendered = await client.get_prompt("two_args-prompt", {"city": "Lyon", "state": "Rhône"})
            (message,) = rendered.messages
            assert isinstance(message.content, TextContent) and "Lyon, Rhône" in message.content.text
            with pytest.raises(mcp.MCPError):
                await client.get_prompt("one_args-prompt", {})  # its required city is missing

    anyio.run(scenario)
    records = _calls(served, tmp_path, 4)
    kinds = [(r["kind"], r["pack"], r["instance"]) for r in records]
    assert kinds == [("resource", "mcp", "one")] * 2 + [("prompt", "mcp", "two"), ("prompt", "mcp", "one")]
