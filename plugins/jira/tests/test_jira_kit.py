"""The ``jira`` pack on the authoring kit, as an MCP SDK client sees it over real HTTP: annotations and
an outputSchema on every tool, results that validate against it (over REST and over jira-mcp), the
text the pack always sent, declared failures with reason/retryable/recovery, and enrichment."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
import pytest
from jira_fake_mcp import FakeJiraMcp, ToolError
from jira_fake_rest import API_TOKEN, EMAIL, FakeJira
from jsonschema import Draft202012Validator
from mcp import Client

from lorenz.host import serve_in_thread
from lorenz.testing import lint_pack
from lorenz_jira.outputs import CommentAdded, Rows, pretty
from lorenz_jira.tools import JIRA_TOOL_NAMES, KIT_PACK

pytestmark = pytest.mark.anyio

REST_WORKFLOW = """---
tracker:
  kind: jira
  base_url: $SITE
  project_keys: [ENG]
  active_states: [To Do]
---
Work on it.
"""

MCP_WORKFLOW = """---
tracker:
  kind: jira-mcp
  project_keys: [ENG]
  mcp:
    url: $JIRA_MCP_URL
    token: $JIRA_MCP_TOKEN
---
Work on it.
"""


@pytest.fixture
def rest_server(jira: FakeJira, tmp_path: Path) -> Iterator[Any]:
    (tmp_path / "WORKFLOW.md").write_text(REST_WORKFLOW, encoding="utf-8")
    env = {"SITE": jira.base_url, "JIRA_EMAIL": EMAIL, "JIRA_API_KEY": API_TOKEN}
    with serve_in_thread(tmp_path / "WORKFLOW.md", cwd=tmp_path, env=env) as server:
        yield server


@pytest.fixture
def mcp_server(jira_mcp: FakeJiraMcp, tmp_path: Path) -> Iterator[Any]:
    (tmp_path / "WORKFLOW.md").write_text(MCP_WORKFLOW, encoding="utf-8")
    env = {"JIRA_MCP_URL": jira_mcp.url, "JIRA_MCP_TOKEN": "mcp-token"}
    with serve_in_thread(tmp_path / "WORKFLOW.md", cwd=tmp_path, env=env) as server:
        yield server


@asynccontextmanager
async def client_of(server: Any) -> AsyncIterator[tuple[Client, dict[str, Any]]]:
    async with Client(server.url) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        yield client, tools


def validated(tools: dict[str, Any], name: str, result: Any) -> dict[str, Any]:
    """The structured result of a successful call, checked against the tool's outputSchema, and
    its text: the pretty JSON the pack sent before the kit (a query's echo and notice are not in it)."""
    assert result.is_error is False, result.content[0].text
    data: dict[str, Any] = result.structured_content
    Draft202012Validator(tools[name].output_schema).validate(data)
    before = {key: value for key, value in data.items() if key not in ("echo", "notice")}
    assert result.content[0].text == json.dumps(before, indent=2, ensure_ascii=False)
    return data


def failure(tools: dict[str, Any], name: str, result: Any) -> dict[str, Any]:
    """The error object of a failed call, which also validates against the outputSchema."""
    assert result.is_error is True
    Draft202012Validator(tools[name].output_schema).validate(result.structured_content)
    error: dict[str, Any] = result.structured_content["error"]
    assert json.loads(result.content[0].text) == {"error": error}
    return error


async def test_every_tool_advertises_hints_and_an_output_schema(rest_server: Any) -> None:
    async with client_of(rest_server) as (_, tools):
        jira = [tools[name] for name in JIRA_TOOL_NAMES]
    for listed in jira:
        hints = listed.annotations
        assert hints is not None and hints.open_world_hint is True, listed.name
        assert hints.read_only_hint is (listed.name in ("jira_read_issue", "jira_query", "jira_list_comments"))
        assert hints.idempotent_hint is not None, listed.name
        assert listed.output_schema is not None and listed.output_schema["type"] == "object"
        reasons = listed.output_schema["properties"]["error"]["properties"]["reason"]["examples"]
        assert {"not_found", "unauthorized", "rate_limited", "not_configured"} <= set(reasons)
    assert tools["jira_update_comment"].annotations.destructive_hint is True
    assert tools["jira_comment"].annotations.idempotent_hint is False
    assert (
        "too_many_results"
        in tools["jira_query"].output_schema["properties"]["error"]["properties"]["reason"]["examples"]
    )


async def test_every_tool_over_rest_validates_against_its_output_schema(jira: FakeJira, rest_server: Any) -> None:
    jira.add_issue("ENG-1")
    jira.add_issue("ENG-2", blocked_by=("ENG-1",))
    async with client_of(rest_server) as (client, tools):
        read = validated(tools, "jira_read_issue", await client.call_tool("jira_read_issue", {"issueId": "ENG-2"}))
        rows = validated(
            tools,
            "jira_query",
            await client.call_tool("jira_query", {"issueIds": ["ENG-1", "ENG-2"], "select": ["id", "nope"]}),
        )
        moved = await client.call_tool("jira_update_status", {"issueId": "ENG-1", "status": "Done"})
        added = await client.call_tool("jira_comment", {"issueId": "ENG-1", "body": "note"})
        comment_id = validated(tools, "jira_comment", added)["comment"]["id"]
        listed = await client.call_tool("jira_list_comments", {"issueId": "ENG-1"})
        edited = await client.call_tool(
            "jira_update_comment", {"issueId": "ENG-1", "commentId": comment_id, "body": "edited"}
        )
        created = await client.call_tool("jira_create_issue", {"title": "Follow-up"})
    assert read["issue"]["blockers"] == [
        {"id": "10001", "identifier": "ENG-1", "state": "To Do", "stateType": "unstarted"}
    ]
    assert rows == {"rows": [{"id": "10001"}, {"id": "10002"}], "total": 2}
    assert validated(tools, "jira_update_status", moved)["issue"]["stateType"] == "completed"
    assert [c["body"] for c in validated(tools, "jira_list_comments", listed)["comments"]] == ["note"]
    assert validated(tools, "jira_update_comment", edited)["comment"]["body"] == "edited"
    assert validated(tools, "jira_create_issue", created)["issue"]["identifier"] == "ENG-3"


async def test_every_tool_over_jira_mcp_validates_against_its_output_schema(
    jira_mcp: FakeJiraMcp, mcp_server: Any
) -> None:
    jira_mcp.script("jira_add_comment", "Done.")  # a server that confirms without the comment
    async with client_of(mcp_server) as (client, tools):
        calls = {
            "jira_read_issue": {"issueId": "ENG-1"},
            "jira_query": {"query": 'project in ("ENG")'},
            "jira_update_status": {"issueId": "ENG-1", "status": "In Progress"},
            "jira_list_comments": {"issueId": "ENG-1"},
            "jira_comment": {"issueId": "ENG-1", "body": "hi"},
            "jira_update_comment": {"issueId": "ENG-1", "commentId": "comment-1", "body": "edited"},
            "jira_create_issue": {"title": "Follow-up"},
        }
        results = {name: validated(tools, name, await client.call_tool(name, args)) for name, args in calls.items()}
    assert results["jira_comment"] == {"ok": True}  # no comment key, as before: the schema allows it
    assert results["jira_query"]["total"] == 1
    assert results["jira_query"]["echo"] == {"query": 'project in ("ENG")', "limit": 100, "offset": 0}
    assert results["jira_update_status"]["issue"]["state"] == "In Progress"


async def test_declared_failures_over_rest(jira: FakeJira, rest_server: Any) -> None:
    """A 404 is not_found pointing at jira_query; a 429 is retryable with Retry-After; a 401 names the
    settings that hold the credentials; a missing transition says what to retry with. The message is
    the one the pack always sent."""
    jira.add_issue("ENG-1")
    async with client_of(rest_server) as (client, tools):
        missing = failure(tools, "jira_read_issue", await client.call_tool("jira_read_issue", {"issueId": "ENG-9"}))
        jira.script(
            "read", status=429, json_body={"errorMessages": ["slow down"]}, headers={"Retry-After": "1"}, times=9
        )
        limited = failure(tools, "jira_read_issue", await client.call_tool("jira_read_issue", {"issueId": "ENG-1"}))
        jira.scripts.clear()
        jira.script("comments", status=401, json_body={"errorMessages": ["nope"]})
        refused = failure(
            tools, "jira_list_comments", await client.call_tool("jira_list_comments", {"issueId": "ENG-1"})
        )
        moved = await client.call_tool("jira_update_status", {"issueId": "ENG-1", "status": "Nowhere"})
    assert missing["message"].startswith("jira api status 404: ")
    assert (missing["reason"], missing["retryable"], missing["status"]) == ("not_found", False, 404)
    assert "call jira_query" in missing["recovery"]
    assert (limited["reason"], limited["retryable"], limited["retryAfter"]) == ("rate_limited", True, 1)
    assert limited["recovery"] == "Wait 1 seconds, then call the tool again."
    assert (refused["reason"], refused["retryable"]) == ("unauthorized", False)
    assert "tracker.api_key" in refused["recovery"] and "tracker.mcp.token" in refused["recovery"]
    unavailable = failure(tools, "jira_update_status", moved)
    assert unavailable["message"] == "jira transition not found for status: Nowhere"
    assert unavailable["reason"] == "status_unavailable" and "'In Progress'" in unavailable["recovery"]


async def test_declared_failures_over_jira_mcp(jira_mcp: FakeJiraMcp, mcp_server: Any) -> None:
    """Over jira-mcp: the server's "does not exist" is not_found; a refused token is unauthorized."""
    jira_mcp.script("jira_get_issue", ToolError("Issue ENG-9 does not exist"))
    async with client_of(mcp_server) as (client, tools):
        missing = failure(tools, "jira_read_issue", await client.call_tool("jira_read_issue", {"issueId": "ENG-9"}))
        jira_mcp.token = "rotated"
        refused = failure(tools, "jira_read_issue", await client.call_tool("jira_read_issue", {"issueId": "ENG-1"}))
    assert missing["message"] == "jira-mcp error: Issue ENG-9 does not exist"
    assert (missing["reason"], missing["retryable"]) == ("not_found", False)
    assert refused["message"].startswith("jira-mcp status 401")
    assert (refused["reason"], refused["retryable"]) == ("unauthorized", False)


async def test_a_site_that_is_not_configured_is_not_configured() -> None:
    """Mounted over another tracker, the pack's failure says which settings to ask the operator for."""
    import httpx

    from lorenz import Settings, ToolContext, TrackerSettings
    from lorenz_jira.tools import JiraToolPack

    settings = Settings(tracker=TrackerSettings(kind="local", options={"path": "./board"}))
    async with httpx.AsyncClient() as http:
        context = ToolContext(settings=settings, http=http)
        result = await JiraToolPack().execute_tool("jira_read_issue", {"issueId": "ENG-1"}, context)
    error = result.result["error"]
    assert (error["message"], error["reason"], error["retryable"]) == (
        "tracker.base_url is required for jira tracker",
        "not_configured",
        False,
    )
    assert "tracker.base_url" in error["recovery"] and "tracker.mcp.url" in error["recovery"]


async def test_query_enrichment_echo_and_notices(jira: FakeJira, rest_server: Any) -> None:
    """An empty search says what to try; a filter is echoed as parsed; an offset past the end says so;
    the text stays byte for byte what the pack answered before (no echo or notice in it)."""
    jira.add_issue("ENG-1", summary="Alpha", assignee="account-current")  # a candidate
    where = {"field": "title", "op": "eq", "value": "Zulu"}
    async with client_of(rest_server) as (client, tools):
        empty = await client.call_tool("jira_query", {"query": 'status in ("Done")'})
        filtered = await client.call_tool("jira_query", {"where": where, "order_by": [{"field": "title"}]})
        paged = await client.call_tool("jira_query", {"states": ["To Do"], "offset": 5})
    assert empty.content[0].text == '{\n  "rows": [],\n  "total": 0\n}'
    data = validated(tools, "jira_query", empty)
    assert data["rows"] == [] and data["total"] == 0
    assert data["notice"].startswith("The JQL matched no issue")
    assert list(data) == ["rows", "notice", "echo", "total"]
    data = validated(tools, "jira_query", filtered)
    assert data["echo"] == {
        "where": {"field": "title", "op": "eq", "value": "Zulu"},
        "order_by": [{"field": "title", "dir": "asc"}],
        "limit": 100,
        "offset": 0,
    }
    assert data["notice"] == "1 issues were found but none matched where; loosen or drop the filter."
    data = validated(tools, "jira_query", paged)
    assert data == {
        "rows": [],
        "notice": "offset 5 is past the 1 matching rows; call again with a smaller offset.",
        "total": 1,
    }


async def test_reads_by_id_over_jira_mcp_report_progress(jira_mcp: FakeJiraMcp) -> None:
    """jira-mcp reads issueIds one remote call each, and says how far it got."""
    import httpx
    from jira_fake_settings import mcp_settings

    from lorenz import ToolContext
    from lorenz.testing import run_tool
    from lorenz_jira.tools import JiraToolPack

    jira_mcp.issues["ENG-2"] = {**jira_mcp.issues["ENG-1"], "key": "ENG-2", "id": "10002"}
    seen: list[tuple[float, float | None, str | None]] = []

    async def sink(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async with httpx.AsyncClient() as http:
        context = ToolContext(settings=mcp_settings(jira_mcp.url), http=http, progress_sink=sink)
        args = {"issueIds": ["ENG-1", "ENG-2"], "select": ["identifier"]}
        result = await run_tool(JiraToolPack(), "jira_query", args, context)
    assert result.result == {"rows": [{"identifier": "ENG-1"}, {"identifier": "ENG-2"}], "total": 2}
    assert seen == [(1, 2, "read 1 of 2 issues"), (2, 2, "read 2 of 2 issues")]


def test_the_typed_tools_pass_the_lint() -> None:
    """Contracts, format parity and hints of the typed tools themselves: no error, no warning; the
    names the plugin lists without loading the kit are the kit pack's."""
    assert [str(d) for d in lint_pack(KIT_PACK)] == []
    assert tuple(entry.name for entry in KIT_PACK.tools) == JIRA_TOOL_NAMES


@pytest.mark.parametrize(
    "output",
    [
        CommentAdded(ok=True),
        CommentAdded(ok=True, comment={"id": "1", "body": "Grüße — ✓"}),
        Rows(rows=[{"id": "1", "labels": ["a", "b"], "description": None}, {}]),
        Rows(rows=[]),
    ],
)
def test_the_kit_text_is_the_json_the_host_sends(output: Any) -> None:
    """``format()`` renders exactly the pretty JSON a plain result gets from the host."""
    from lorenz import tool_success
    from lorenz.testing import result_text

    data = {key: value for key, value in attrs.asdict(output, recurse=False).items() if value is not None}
    assert pretty(output) == result_text(tool_success(data))


@pytest.mark.slow
async def test_over_stdio_results_and_failures_fit_the_output_schema(jira: FakeJira, tmp_path: Path) -> None:
    """``lorenz serve --stdio`` started by the SDK client: a result and a declared failure, each
    validating against the advertised outputSchema."""
    import os
    import sys

    from mcp import StdioServerParameters

    jira.add_issue("ENG-1")
    (tmp_path / "WORKFLOW.md").write_text(REST_WORKFLOW, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LORENZ_", "JIRA_"))}
    env.update(LORENZ_LOAD_PLUGINS="lorenz-jira", SITE=jira.base_url, JIRA_EMAIL=EMAIL, JIRA_API_KEY=API_TOKEN)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorenz", "serve", "--stdio", "WORKFLOW.md"], env=env, cwd=tmp_path
    )
    async with Client(params) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        read = await client.call_tool("jira_read_issue", {"issueId": "ENG-1"})
        missing = await client.call_tool("jira_read_issue", {"issueId": "ENG-404"})
    assert validated(tools, "jira_read_issue", read)["issue"]["identifier"] == "ENG-1"
    error = failure(tools, "jira_read_issue", missing)
    assert (error["reason"], error["retryable"]) == ("not_found", False)
    assert error["recovery"] == "Check the key, or call jira_query to list the issue keys you can use."
