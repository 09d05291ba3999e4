"""The ``jira`` pack: specs, argument checks, ``jira_query`` routing, results and redacted failures
."""

from __future__ import annotations

import base64
import json
from typing import Any

import attrs
import httpx
import pytest
from jira_fake_mcp import FakeJiraMcp, RpcError
from jira_fake_rest import API_TOKEN, EMAIL, FakeJira
from jira_fake_settings import mcp_settings, rest_settings

from lorenz import Settings, ToolContext, ToolResult, TrackerSettings
from lorenz_jira.tools import JIRA_TOOL_NAMES, JiraToolPack

pytestmark = pytest.mark.anyio

PACK = JiraToolPack()
QUERY_NIN_BOUND = "filter: 'nin' value has more than 1000 items"


async def call(settings: Settings, http: httpx.AsyncClient, name: str, args: Any) -> ToolResult:
    return await PACK.execute_tool(name, args, ToolContext(settings=settings, http=http))


def undescribed(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the properties' descriptions left out: the shape the spec pins."""
    properties = {
        key: {k: v for k, v in prop.items() if k != "description"} for key, prop in schema["properties"].items()
    }
    return {**schema, "properties": properties}


def test_seven_tools_in_order_with_schemas() -> None:
    """The pack lists its seven tools in order, every schema strict (issue 12: a misspelled key is
    refused); only ``jira_query`` has no required keys and it declares its ``jql`` alias."""
    specs = PACK.tool_specs(Settings())
    assert [s.name for s in specs] == [
        "jira_read_issue",
        "jira_query",
        "jira_update_status",
        "jira_list_comments",
        "jira_comment",
        "jira_update_comment",
        "jira_create_issue",
    ]
    schemas = {s.name: s.input_schema for s in specs}
    for name, schema in schemas.items():
        for key, prop in schema["properties"].items():
            assert prop.get("description"), f"{name}.{key} has no description"
    assert undescribed(schemas["jira_read_issue"]) == {
        "type": "object",
        "additionalProperties": False,
        "properties": {"issueId": {"type": "string"}},
        "required": ["issueId"],
    }
    assert all(schema["additionalProperties"] is False for schema in schemas.values())
    assert "required" not in schemas["jira_query"]
    assert undescribed(schemas["jira_query"])["properties"]["jql"] == {"type": "string"}
    order_by = undescribed(schemas["jira_query"])["properties"]["order_by"]
    assert order_by["type"] == "array" and order_by["items"]["additionalProperties"] is False
    assert schemas["jira_update_comment"]["required"] == ["issueId", "commentId", "body"]
    assert schemas["jira_create_issue"]["required"] == ["title"]
    assert (
        specs[0].description
        == "Read one issue from the configured tracker. Args: issueId (tracker id or key when supported)."
    )
    assert not hasattr(PACK, "validate_options")


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("jira_read_issue", {}, "'issueId' is required"),
        ("jira_read_issue", {"issueId": "  "}, "'issueId' is required"),
        ("jira_update_status", {"issueId": "ENG-1"}, "'status' is required"),
        ("jira_list_comments", None, "'issueId' is required"),
        ("jira_comment", {"issueId": "ENG-1", "body": 3}, "'body' is required"),
        ("jira_update_comment", {"issueId": "ENG-1", "body": "x"}, "'commentId' is required"),
        ("jira_update_comment", {"issueId": "ENG-1", "commentId": "c"}, "'body' is required"),
        ("jira_create_issue", {"body": "x"}, "'title' is required"),
        ("jira_query", {"issueIds": "ENG-1"}, "expected an array of strings"),
        ("jira_query", {"states": ["ok", 3]}, "expected an array of strings"),
        ("jira_query", {"select": "id"}, "select must be an array of field-name strings"),
        ("jira_query", {"limit": 0}, "limit must be a positive integer"),
        ("jira_query", {"issueIds": ["ENG-1"] * 1001}, "issueIds has more than 1000 items"),
        ("jira_query", {"issueIds": [3] * 1001}, "issueIds has more than 1000 items"),
        ("jira_query", {"states": ["x" * 4097]}, "states has a string longer than 4096 characters"),
        ("jira_query", {"where": {"field": "t", "op": "nin", "value": [0] * 150_000}}, QUERY_NIN_BOUND),
        ("jira_query", {"order_by": [{"field": "title"}] * 10_000}, "order_by has more than 8 keys"),
        ("jira_query", {"select": ["title"] * 100_000}, "select has more than 64 fields"),
    ],
)
async def test_bad_arguments_fail_before_any_request(name: str, args: Any, message: str) -> None:
    """Missing or malformed arguments fail with their message and no HTTP request."""
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(500)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        result = await call(rest_settings("https://example.atlassian.net"), http, name, args)
    assert result.to_dict() == {"success": False, "error": message, "result": {"error": {"message": message}}}
    assert requests == []


async def test_unknown_tool() -> None:
    """An unknown name lists the seven supported tools."""
    async with httpx.AsyncClient() as http:
        result = await call(rest_settings("https://example.atlassian.net"), http, "jira_bogus", {})
    assert result.error == 'Unsupported tool: "jira_bogus".'
    assert result.result["error"]["supportedTools"] == list(JIRA_TOOL_NAMES)


async def test_read_issue_over_rest(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """``jira_read_issue`` returns ``{issue}`` in wire form, read from the issue URL."""
    jira.add_issue("ENG-1")
    result = await call(rest_settings(jira.base_url), http, "jira_read_issue", {"issueId": "ENG-1"})
    assert result.success
    issue = result.result["issue"]
    assert (issue["identifier"], issue["stateType"], issue["url"]) == (
        "ENG-1",
        "unstarted",
        f"{jira.base_url}/browse/ENG-1",
    )
    assert jira.requests[0].path == "/rest/api/3/issue/ENG-1"


async def test_read_issue_over_mcp(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """With ``jira-mcp`` settings the same tool calls ``jira_get_issue`` on the MCP server."""
    result = await call(mcp_settings(jira_mcp.url), http, "jira_read_issue", {"issueId": "ENG-1"})
    assert result.success
    assert result.result["issue"]["identifier"] == "ENG-1"
    assert [name for name, _ in jira_mcp.calls] == ["jira_get_issue"]
    assert "tools/call" in [r.rpc_method for r in jira_mcp.http]


async def test_query_by_ids_with_select(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """``issueIds`` routes to a by-ids search; ``select`` projects the rows."""
    jira.add_issue("ENG-1")
    args = {"issueIds": ["ENG-1"], "select": ["id", "identifier", "state"]}
    result = await call(rest_settings(jira.base_url), http, "jira_query", args)
    assert result.result == {"rows": [{"id": "10001", "identifier": "ENG-1", "state": "To Do"}], "total": 1}
    assert jira.requests[0].path == "/rest/api/3/search/jql"
    assert jira.requests[0].body["jql"] == 'key in ("ENG-1")'


async def test_query_routing(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """``query``/``jql`` search natively, ``states`` query by state, nothing means candidates."""
    jira.add_issue("ENG-1")
    settings = rest_settings(jira.base_url, assignee="account-1")
    await call(settings, http, "jira_query", {"query": 'project in ("ENG")', "states": ["Done"]})
    await call(settings, http, "jira_query", {"jql": 'status in ("To Do")'})
    await call(settings, http, "jira_query", {"query": "  ", "states": ["To Do"]})
    await call(settings, http, "jira_query", {})
    assert [r.body["jql"] for r in jira.requests] == [
        'project in ("ENG")',
        'status in ("To Do")',
        'project in ("ENG") AND status in ("To Do")',
        'project in ("ENG") AND status in ("To Do") AND assignee = "account-1" AND labels = "agent"',
    ]


async def test_query_without_active_states_is_empty(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """No arguments and no active states return nothing without a request."""
    settings = rest_settings(jira.base_url)
    settings = attrs.evolve(settings, tracker=attrs.evolve(settings.tracker, active_states=()))
    result = await call(settings, http, "jira_query", {})
    assert result.result == {"rows": [], "total": 0}
    assert jira.requests == []


async def test_query_filters_sorts_and_pages(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """The core DSL filters, orders and pages the issues; the default select has seven keys."""
    jira.add_issue("ENG-1", summary="Alpha", status="Done", category="done")
    jira.add_issue("ENG-2", summary="Bravo")
    jira.add_issue("ENG-3", summary="Charlie")
    args = {
        "query": 'project in ("ENG")',
        "where": {"field": "stateType", "op": "ne", "value": "completed"},
        "order_by": [{"field": "title", "dir": "desc"}],
        "limit": 1,
    }
    result = await call(rest_settings(jira.base_url), http, "jira_query", args)
    assert result.result["total"] == 2
    (row,) = result.result["rows"]
    assert row == {
        "id": "10003",
        "identifier": "ENG-3",
        "title": "Charlie",
        "state": "To Do",
        "stateType": "unstarted",
        "labels": ["agent", "lorenz:backend"],
        "url": f"{jira.base_url}/browse/ENG-3",
    }


async def test_update_status_and_create(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """Moving and creating return ``{issue}``; blank optionals are ignored."""
    jira.add_issue("ENG-1")
    settings = rest_settings(jira.base_url, assignee="account-1")
    moved = await call(settings, http, "jira_update_status", {"issueId": "ENG-1", "status": "Done"})
    assert moved.result["issue"]["stateType"] == "completed"
    created = await call(settings, http, "jira_create_issue", {"title": "Follow-up", "body": " ", "status": ""})
    assert created.result["issue"]["identifier"] == "ENG-2"
    assert "description" not in jira.calls("POST", "/rest/api/3/issue")[-1].body["fields"]


async def test_comment_tools(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """Comment, list and update return the documented shapes."""
    jira.add_issue("ENG-1")
    settings = rest_settings(jira.base_url)
    added = await call(settings, http, "jira_comment", {"issueId": "ENG-1", "body": "progress note"})
    comment = added.result["comment"]
    assert added.result["ok"] is True
    assert comment == {
        "id": comment["id"],
        "body": "progress note",
        "author": "account-current",
        "createdAt": "2026-06-01T00:00:00.000+0000",
        "updatedAt": "2026-06-01T00:00:00.000+0000",
        "url": f"{jira.base_url}/rest/api/3/issue/10001/comment/{comment['id']}",
    }
    listed = await call(settings, http, "jira_list_comments", {"issueId": "ENG-1"})
    assert [c["body"] for c in listed.result["comments"]] == ["progress note"]
    updated = await call(
        settings, http, "jira_update_comment", {"issueId": "ENG-1", "commentId": comment["id"], "body": "**done**"}
    )
    assert updated.result == {"comment": {**comment, "body": "done", "updatedAt": "2026-06-02T00:00:00.000+0000"}}


async def test_comment_without_returned_comment(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """When the backend confirms without a comment the result is just ``{ok: true}``."""
    jira_mcp.script("jira_add_comment", "Done.")
    result = await call(mcp_settings(jira_mcp.url), http, "jira_comment", {"issueId": "ENG-1", "body": "hi"})
    assert result.to_dict() == {"success": True, "result": {"ok": True}}


async def test_http_500_is_a_failure(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """A server error becomes a failure naming the status and the error body."""
    jira.script("read", status=500, json_body={"errorMessages": ["boom"]})
    result = await call(rest_settings(jira.base_url), http, "jira_read_issue", {"issueId": "ENG-1"})
    assert result.success is False
    assert result.error == 'jira api status 500: {"errorMessages":["boom"]}'


async def test_secrets_are_redacted_from_failures(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """Credentials, Basic tokens and ``op://`` references echoed by the server become ``[REDACTED]``."""
    basic = base64.b64encode(f"{EMAIL}:{API_TOKEN}".encode()).decode()
    body = {"errorMessages": [f"api_key={API_TOKEN} Basic {basic} op://vault/item/jira-token"]}
    jira.script("read", status=500, json_body=body)
    result = await call(rest_settings(jira.base_url), http, "jira_read_issue", {"issueId": "ENG-1"})
    text = json.dumps(result.to_dict())
    assert "jira api status 500" in text
    assert "[REDACTED]" in text
    for leak in (API_TOKEN, basic, "op://"):
        assert leak not in text


async def test_mcp_errors_are_redacted(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """A JSON-RPC error echoing secrets is redacted in the failure."""
    jira_mcp.script("jira_get_issue", RpcError("bad auth api_key=jira-token Basic Ym90OmppcmEtdG9rZW4= mcp-token"))
    result = await call(mcp_settings(jira_mcp.url), http, "jira_read_issue", {"issueId": "ENG-1"})
    assert result.error == "jira-mcp error: bad auth api_key=[REDACTED] Basic [REDACTED] [REDACTED]"


async def test_pack_over_another_tracker_reports_missing_jira_config() -> None:
    """Mounted over a non-Jira tracker, the pack ignores that tracker's options and asks for a Jira site."""
    settings = Settings(tracker=TrackerSettings(kind="local", options={"path": "./board"}))
    async with httpx.AsyncClient() as http:
        result = await call(settings, http, "jira_read_issue", {"issueId": "ENG-1"})
    assert result.error == "tracker.base_url is required for jira tracker"


async def test_dot_ids_fail_before_any_request(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """``.``/``..`` as ``issueId`` or ``commentId`` is a failure naming the argument; nothing is sent."""
    settings = rest_settings(jira.base_url)
    updated = await call(settings, http, "jira_update_comment", {"issueId": "ENG-1", "commentId": "..", "body": "x"})
    commented = await call(settings, http, "jira_comment", {"issueId": "..", "body": "x"})
    listed = await call(settings, http, "jira_list_comments", {"issueId": "."})
    assert [updated.error, commented.error, listed.error] == [
        'invalid commentId: ".."',
        'invalid issueId: ".."',
        'invalid issueId: "."',
    ]
    assert jira.requests == []


async def test_invalid_options_are_a_redacted_failure() -> None:
    """Invalid Jira options are returned as a redacted failure, never raised out of ``execute_tool``."""
    settings = Settings(tracker=TrackerSettings(kind="jira", api_key="key-7c1d9e", options={"baseUrl": 5}))
    async with httpx.AsyncClient() as http:
        result = await call(settings, http, "jira_read_issue", {"issueId": "ENG-1"})
    assert (result.success, result.error) == (False, "tracker.baseUrl must be a string")


async def test_a_multi_page_search_reports_progress(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """`jira_query` over several result pages tells the client how far it got after each page."""
    from lorenz.testing import run_tool

    for n in range(1, 6):
        jira.add_issue(f"ENG-{n}", summary=f"Issue {n}")
    jira.search_page_size = 2
    seen: list[tuple[float, float | None, str | None]] = []

    async def sink(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    context = ToolContext(settings=rest_settings(jira.base_url), http=http, progress_sink=sink)
    args = {"query": 'project in ("ENG")'}
    result = await run_tool(PACK, "jira_query", args, context)
    assert result.result["total"] == 5
    assert seen == [(2, None, "2 issues so far"), (4, None, "4 issues so far")]


async def test_multi_page_comments_report_progress(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """`jira_list_comments` over several pages says how many of the total it has read after each."""
    from lorenz.testing import run_tool

    jira.add_issue("ENG-1")
    for n in range(5):
        jira.add_comment("ENG-1", f"Note {n}", comment_id=f"comment-{n}")
    jira.comment_page_size = 2
    seen: list[tuple[float, float | None, str | None]] = []

    async def sink(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    context = ToolContext(settings=rest_settings(jira.base_url), http=http, progress_sink=sink)
    result = await run_tool(PACK, "jira_list_comments", {"issueId": "ENG-1"}, context)
    assert len(result.result["comments"]) == 5
    assert seen == [(2, 5, "2 of 5 comments read"), (4, 5, "4 of 5 comments read")]
