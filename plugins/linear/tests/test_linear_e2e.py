"""End to end: ``lorenz serve`` (the real host under uvicorn on 127.0.0.1) with ``tracker.kind: linear``
pointed at the fake, ``linear_graphql`` called through the official MCP SDK client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import mcp
import pytest
from linear_fake import FakeLinear

from lorenz.host import RunningServer, serve_in_thread
from lorenz.testing import open_workspace

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SECRET = "lin_api_e2e_secret_token"
ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-linear", "LINEAR_API_KEY": SECRET}
VIEWER = "query Viewer { viewer { id name } }"


def workflow(directory: Path, endpoint: str) -> Path:
    path = directory / "WORKFLOW.md"
    path.write_text(
        "---\n"
        "tracker:\n"
        "  kind: linear\n"
        f"  endpoint: {json.dumps(endpoint)}\n"
        "  api_key: $LINEAR_API_KEY\n"
        "  project_slug: mono\n"
        "  active_states: [Todo, In Progress]\n"
        "---\n"
        "Work the Linear project.\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def linear(fake: FakeLinear) -> FakeLinear:
    fake.api_key = SECRET
    return fake


@pytest.fixture
def server(tmp_path: Path, linear: FakeLinear) -> Iterator[RunningServer]:
    with serve_in_thread(workflow(tmp_path, linear.url), cwd=tmp_path, env=ENV) as running:
        yield running


async def call(client: mcp.Client, args: Any) -> tuple[bool, Any]:
    result = await client.call_tool("linear_graphql", args)
    content = result.content[0]
    assert isinstance(content, mcp.types.TextContent)
    return bool(result.is_error), json.loads(content.text)


async def test_linear_graphql_over_mcp(server: RunningServer, linear: FakeLinear) -> None:
    """``linear_graphql`` is listed; queries, GraphQL errors, HTTP errors and bad input come back as tool results."""
    async with mcp.Client(server.url) as client:
        listed = await client.list_tools()
        assert [tool.name for tool in listed.tools] == ["linear_graphql"]
        assert listed.tools[0].input_schema["required"] == ["query"]

        assert await call(client, {"query": VIEWER}) == (
            False,
            {"data": {"viewer": {"id": "viewer-1", "name": "Test", "email": "test@example.com"}}},
        )
        assert linear.requests[-1].headers["authorization"] == SECRET

        assert await call(client, {"query": "   "}) == (
            True,
            {"error": {"message": "`linear_graphql` requires a non-empty `query` string."}},
        )
        # The host checks arguments against the input schema before the pack runs: the top level is
        # strict (a misspelled key never reaches Linear), `variables` is free-form.
        sent = len(linear.requests)
        missing = await client.call_tool("linear_graphql", {})
        assert missing.is_error and missing.structured_content is not None
        message = missing.structured_content["error"]["message"]
        assert message == "invalid arguments for tool linear_graphql: query: required"
        misspelled = await client.call_tool("linear_graphql", {"query": VIEWER, "varaibles": {"id": "x"}})
        assert misspelled.is_error and isinstance(misspelled.content[0], mcp.types.TextContent)
        assert 'Unrecognized key: "varaibles"' in misspelled.content[0].text
        assert len(linear.requests) == sent

        linear.script({"message": "rate limited"}, status=429, headers={"Retry-After": "0"})
        error, payload = await call(client, {"query": VIEWER, "variables": {"id": "x"}})
        assert not error and payload["data"]["viewer"]["id"] == "viewer-1"

        linear.script({"errors": [{"message": f"bad token {SECRET}"}]})
        error, payload = await call(client, {"query": VIEWER})
        assert (error, payload) == (True, {"errors": [{"message": "bad token [REDACTED]"}]})

        linear.script({"errors": [{"message": "Syntax Error: Unexpected Name"}]}, status=400)
        error, payload = await call(client, {"query": "query Broken { nope"})
        message = "Linear GraphQL request failed with HTTP 400."
        assert error and payload == {
            "error": {
                "message": message,
                "status": 400,
                "body": '{"errors":[{"message":"Syntax Error: Unexpected Name"}]}',
                "reason": "request_rejected",
                "retryable": False,
                "recovery": "Read the body in the error, fix the query or variables, and call again.",
            }
        }


async def test_tracker_client_from_the_workflow(tmp_path: Path, linear: FakeLinear) -> None:
    """The workflow's tracker client polls the fake with the key resolved from the environment."""
    linear.add_issue("id-1", "MT-1")
    linear.add_issue("id-2", "MT-2", state={"id": "s-ip", "name": "In Progress", "type": "started"})
    linear.add_issue("id-3", "MT-3", state={"id": "s-done", "name": "Done", "type": "completed"})
    workspace = open_workspace(workflow(tmp_path, linear.url), cwd=tmp_path, env=ENV)
    assert workspace.pack_names() == ["linear"]
    async with httpx.AsyncClient() as http:
        client = workspace.tracker_client(http=http, env=ENV)
        candidates = await client.fetch_candidate_issues()
        by_ids = await client.fetch_issues_by_ids(["MT-3", "id-1"])
    assert [(i.identifier, i.state_type) for i in candidates] == [("MT-1", "unstarted"), ("MT-2", "started")]
    assert [i.identifier for i in by_ids] == ["MT-3", "MT-1"]
    assert {r.headers["authorization"] for r in linear.requests} == {SECRET}
