"""The jira-mcp client against a fake remote MCP server built with the official SDK
: handshake, headers, tool-name map, argument-shape fallbacks."""

from __future__ import annotations

import httpx
import pytest
from jira_fake_mcp import FakeJiraMcp, RpcError, ToolError, jira_comment, jira_issue
from jira_fake_settings import mcp_settings

from lorenz import PaginationError
from lorenz.testing import loopback_server
from lorenz_jira.backend import JiraError, NewIssue, PaginationLimits
from lorenz_jira.mcp_client import JiraMcpClient
from lorenz_jira.options import jira_options

pytestmark = pytest.mark.anyio

FIELDS = ["summary", "description", "status", "labels", "issuelinks", "assignee", "priority", "created", "updated"]


def client(fake: FakeJiraMcp, http: httpx.AsyncClient, **mcp: object) -> JiraMcpClient:
    settings = mcp_settings(fake.url, **mcp)  # type: ignore[arg-type]
    return JiraMcpClient(jira_options(settings), http, secrets=settings.secrets)


async def test_candidates_after_a_real_handshake(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """The client initialises a session, sends the bearer token and calls the configured search tool."""
    (issue,) = await client(jira_mcp, http, tools={"search": "atlassian_search_jira"}).fetch_candidate_issues()
    assert (issue.identifier, issue.state_type, issue.description) == ("ENG-1", "unstarted", "Fix the thing")
    assert issue.url is None  # no base_url configured
    assert jira_mcp.calls == [
        (
            "atlassian_search_jira",
            {
                "jql": 'project in ("ENG") AND status in ("To Do") AND assignee = currentUser() AND labels = "agent"',
                "fields": FIELDS,
            },
        )
    ]
    methods = [r.rpc_method for r in jira_mcp.http if r.rpc_method]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/call"]
    posts = [r for r in jira_mcp.http if r.method == "POST"]
    assert all(r.headers["authorization"] == "Bearer mcp-token" for r in posts)
    assert "mcp-session-id" in posts[-1].headers


@pytest.mark.parametrize(("json_response", "stateless"), [(True, False), (True, True), (False, True)])
async def test_json_and_stateless_servers(json_response: bool, stateless: bool, http: httpx.AsyncClient) -> None:
    """The same client works with JSON replies and with servers that keep no session."""
    fake = FakeJiraMcp(json_response=json_response, stateless=stateless)
    with loopback_server(fake.app) as server:
        fake.url = f"{server.base_url}/mcp"
        comments = await client(fake, http).list_comments("ENG-1")
    assert [c.id for c in comments] == ["comment-1"]
    assert next(r.rpc_method for r in fake.http if r.rpc_method) == "initialize"


async def test_custom_headers_are_sent_and_override_authorization(
    jira_mcp: FakeJiraMcp, http: httpx.AsyncClient
) -> None:
    """``mcp.headers`` go on every request and win over the bearer header."""
    jira_mcp.token = "custom"
    await client(
        jira_mcp, http, headers={"x-atlassian-cloud-id": "cloud-1", "Authorization": "Bearer custom"}
    ).read_issue("ENG-1")
    posts = [r for r in jira_mcp.http if r.method == "POST"]
    assert {r.headers["x-atlassian-cloud-id"] for r in posts} == {"cloud-1"}
    assert {r.headers["authorization"] for r in posts} == {"Bearer custom"}


async def test_issue_urls_use_base_url_when_configured(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """With ``base_url`` set, MCP issues get browse URLs too."""
    settings = mcp_settings(jira_mcp.url)
    options = jira_options(settings)
    options = type(options)(
        **{**{f: getattr(options, f) for f in ("mcp", "project_keys")}, "base_url": "https://x.test/"}
    )
    issue = await JiraMcpClient(options, http).read_issue("ENG-1")
    assert issue.url == "https://x.test/browse/ENG-1"


async def test_search_item_limit(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """The item guard applies to the single MCP search page."""
    jira_mcp.issues["ENG-2"] = jira_issue("ENG-2")
    options = jira_options(mcp_settings(jira_mcp.url))
    with pytest.raises(
        PaginationError, match="jira_pagination_item_limit_exceeded: mcpSearchIssues items=2 max_items=1"
    ):
        await JiraMcpClient(options, http, pagination=PaginationLimits(max_items=1)).search_issues("x")


async def test_search_skips_unreadable_entries_and_finds_nested_lists(
    jira_mcp: FakeJiraMcp, http: httpx.AsyncClient
) -> None:
    """Issues may sit under ``data.issues``; entries that do not normalise are skipped."""
    jira_mcp.script("jira_search", {"data": {"issues": [jira_issue("ENG-7"), {"key": "ENG-8"}, "junk"]}})
    issues = await client(jira_mcp, http).search_issues("project = ENG")
    assert [i.identifier for i in issues] == ["ENG-7"]


async def test_read_and_by_ids(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """Reads pass every key spelling; by-ids reads each id in order and omits missing ones."""
    jira_mcp.issues["ENG-2"] = jira_issue("ENG-2")
    issues = await client(jira_mcp, http).fetch_issues_by_ids(["ENG-2", "ENG-404", "ENG-1", "ENG-2"])
    assert [i.identifier for i in issues] == ["ENG-2", "ENG-1"]
    assert jira_mcp.calls[0] == ("jira_get_issue", {"issueIdOrKey": "ENG-2", "issueId": "ENG-2", "key": "ENG-2"})
    assert len(jira_mcp.calls) == 3


async def test_by_ids_searches_when_no_read_tool(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """A blank read tool falls back to one key search."""
    issues = await client(jira_mcp, http, tools={"readIssue": ""}).fetch_issues_by_ids(["ENG-1"])
    assert [i.identifier for i in issues] == ["ENG-1"]
    assert jira_mcp.calls == [("jira_search", {"jql": 'key in ("ENG-1")', "fields": FIELDS})]


async def test_read_issue_missing(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """A payload without an issue is reported; a tool error is surfaced as such."""
    jira_mcp.script("jira_get_issue", {"nothing": True})
    with pytest.raises(JiraError, match="^jira-mcp read issue returned no issue$"):
        await client(jira_mcp, http).read_issue("ENG-1")
    with pytest.raises(JiraError, match="^jira-mcp error: Issue ENG-404 does not exist$"):
        await client(jira_mcp, http).read_issue("ENG-404")


async def test_update_status(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """The transition tool gets the status and its returned issue is used."""
    issue = await client(jira_mcp, http, tools={"update_status": "atlassian_transition_issue"}).update_issue_status(
        "ENG-1", "In Progress"
    )
    assert (issue.state, issue.state_type) == ("In Progress", "started")
    assert jira_mcp.calls == [
        (
            "atlassian_transition_issue",
            {"issueIdOrKey": "ENG-1", "issueId": "ENG-1", "key": "ENG-1", "status": "In Progress"},
        )
    ]


async def test_add_comment_parses_the_id_from_text(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """``Comment added. ID: 10000`` yields a comment with that id and the sent body."""
    jira_mcp.script("jira_add_comment", "Comment added. ID: 10000")
    comment = await client(jira_mcp, http).add_comment("ENG-1", "Looks good")
    assert comment is not None
    assert comment.to_record() == {"id": "10000", "body": "Looks good"}
    assert jira_mcp.calls == [("jira_add_comment", {"issue_key": "ENG-1", "comment": "Looks good"})]


async def test_add_comment_without_an_id(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """A confirmation without an id returns no comment."""
    jira_mcp.script("jira_add_comment", "Done.")
    assert await client(jira_mcp, http).add_comment("ENG-1", "Looks good") is None


async def test_list_comments_with_renamed_tool(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """Comments come from the renamed tool with the first argument shape."""
    comments = await client(jira_mcp, http, tools={"list_comments": "atlassian_get_jira_comments"}).list_comments(
        "ENG-1"
    )
    assert (comments[0].id, comments[0].body) == ("comment-1", "## Codex Workpad")
    assert jira_mcp.calls == [("atlassian_get_jira_comments", {"issue_key": "ENG-1"})]


async def test_list_comments_falls_back_through_shapes(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """A strict server is retried with the next argument spelling; nested comment lists are found."""
    jira_mcp.strict["jira_get_comments"] = {"issueIdOrKey"}
    jira_mcp.script("jira_get_comments")
    comments = await client(jira_mcp, http).list_comments("ENG-1")
    assert [c.id for c in comments] == ["comment-1"]
    assert [args for _, args in jira_mcp.calls] == [
        {"issue_key": "ENG-1"},
        {"issueKey": "ENG-1"},
        {"issueIdOrKey": "ENG-1"},
    ]


async def test_update_comment_shapes(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """The first shape is ``issue_key/comment_id/comment``; a refusal moves to ``issueKey``."""
    updated = await client(jira_mcp, http, tools={"update_comment": "atlassian_update_jira_comment"}).update_comment(
        "ENG-1", "comment-1", "Updated"
    )
    assert updated.body == "Updated"
    assert jira_mcp.calls == [
        ("atlassian_update_jira_comment", {"issue_key": "ENG-1", "comment_id": "comment-1", "comment": "Updated"})
    ]
    jira_mcp.calls.clear()
    jira_mcp.script(
        "jira_update_comment", "Error: issue_key is not accepted", {"comment": jira_comment("comment-1", "Updated")}
    )
    await client(jira_mcp, http).update_comment("ENG-1", "comment-1", "Updated")
    assert jira_mcp.calls[1] == (
        "jira_update_comment",
        {"issueKey": "ENG-1", "comment_id": "comment-1", "comment": "Updated"},
    )


async def test_add_comment_shapes(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """Refusals walk the reference spellings in order: after three errors the fourth is ``issueId``."""
    jira_mcp.script("jira_add_comment", *["Error: not accepted"] * 3, "Comment added. ID: 7")
    comment = await client(jira_mcp, http).add_comment("ENG-1", "Looks good")
    assert comment is not None and comment.id == "7"
    assert [args for _, args in jira_mcp.calls][1] == {"issueKey": "ENG-1", "comment": "Looks good"}
    assert jira_mcp.calls[3] == ("jira_add_comment", {"issueId": "ENG-1", "comment": "Looks good"})


async def test_add_comment_all_shapes_fail(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """Ten refusals fail with every reason joined; tool errors and RPC errors count as refusals."""
    jira_mcp.script("jira_add_comment", *["Error: comment failed"] * 8, ToolError("nope"), RpcError("bad args"))
    with pytest.raises(JiraError) as raised:
        await client(jira_mcp, http).add_comment("ENG-1", "Looks good")
    message = str(raised.value)
    assert message.startswith("jira-mcp add comment failed: Error: comment failed; Error: comment failed")
    assert message.endswith("; nope; jira-mcp error: bad args")
    assert len(jira_mcp.calls) == 10
    assert jira_mcp.calls[5][1] == {"issue_key": "ENG-1", "body": "Looks good"}


async def test_create_issue_without_concrete_assignee(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """No assignee (or ``me``) sends no assignee arguments."""
    await client(jira_mcp, http, assignee="me").create_issue(NewIssue(title="Follow-up"))
    ((_, args),) = jira_mcp.calls
    assert not {"assignee", "assigneeId", "assigneeAccountId", "body"} & set(args)


async def test_create_issue_with_assignee(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """Every spelling of the assignee and body is sent; the created issue is returned."""
    issue = await client(jira_mcp, http, assignee="account-1").create_issue(NewIssue(title="Follow-up", body="details"))
    assert jira_mcp.calls == [
        (
            "jira_create_issue",
            {
                "projectKey": "ENG",
                "issueType": "Task",
                "title": "Follow-up",
                "summary": "Follow-up",
                "body": "details",
                "description": "details",
                "assignee": "account-1",
                "assigneeId": "account-1",
                "assigneeAccountId": "account-1",
            },
        )
    ]
    assert issue.identifier == "ENG-2"


async def test_rpc_error_is_redacted(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """A JSON-RPC error message is reported with its secrets redacted."""
    jira_mcp.script("jira_get_issue", RpcError("bad auth api_key=jira-token Basic Ym90OmppcmEtdG9rZW4= mcp-token"))
    with pytest.raises(JiraError) as raised:
        await client(jira_mcp, http).read_issue("ENG-1")
    assert str(raised.value) == "jira-mcp error: bad auth api_key=[REDACTED] Basic [REDACTED] [REDACTED]"


async def test_bad_token_reports_the_status(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """A rejected bearer token surfaces as ``jira-mcp status 401`` without echoing the token."""
    with pytest.raises(JiraError) as raised:
        await client(jira_mcp, http, token="wrong-token").read_issue("ENG-1")
    assert str(raised.value).startswith("jira-mcp status 401: ")
    assert "wrong-token" not in str(raised.value)


async def test_429_on_the_mcp_endpoint_is_retried(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """A rate-limited MCP POST is retried after ``Retry-After`` through the shared policy."""
    jira_mcp.http_replies.append((429, {"retry-after": "0", "content-type": "application/json"}, b'{"error":"slow"}'))
    issue = await client(jira_mcp, http).read_issue("ENG-1")
    assert issue.identifier == "ENG-1"
    assert [r.rpc_method for r in jira_mcp.http][:2] == ["initialize", "initialize"]


async def test_500_on_the_mcp_endpoint_names_the_status(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """A non-JSON server error on a call is reported with its status and a redacted body."""
    jira_mcp.http_replies.append((200, {"content-type": "application/json"}, b"not json"))
    with pytest.raises(JiraError, match="^jira-mcp error: "):
        await client(jira_mcp, http).read_issue("ENG-1")
    jira_mcp.http_replies.append((500, {"content-type": "text/html"}, b"<h1>oops</h1> token=mcp-token"))
    with pytest.raises(JiraError, match=r"^jira-mcp status 500: <h1>oops</h1> token=\[REDACTED\]$"):
        await client(jira_mcp, http).read_issue("ENG-1")


async def test_missing_url(http: httpx.AsyncClient) -> None:
    """Without ``mcp.url`` nothing is sent."""
    with pytest.raises(JiraError, match="^tracker.mcp.url is required for jira-mcp tracker$"):
        await JiraMcpClient(jira_options(mcp_settings("")), http).read_issue("ENG-1")


async def test_unreachable_server(http: httpx.AsyncClient) -> None:
    """A refused connection is a ``jira-mcp request failed`` error, not a hang."""
    options = jira_options(mcp_settings("http://127.0.0.1:9/mcp"))
    with pytest.raises(JiraError, match="^jira-mcp request failed: ConnectError"):
        await JiraMcpClient(options, http).read_issue("ENG-1")


async def test_a_server_that_never_answers_names_host_and_limit(silent_server: str, http: httpx.AsyncClient) -> None:
    """A remote MCP server that never answers is a timeout naming the host and the limit, not a hang."""
    options = jira_options(mcp_settings(f"{silent_server}/mcp"))
    with pytest.raises(JiraError) as info:
        await JiraMcpClient(options, http, timeout=0.3).read_issue("ENG-1")
    assert str(info.value) == f"jira-mcp request to {silent_server} timed out after 0.3 s"


class _ToolCall503(httpx.AsyncBaseTransport):
    """Forwards everything, but answers the first ``tools/call`` with a 503 after the server applied it."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.tool_calls = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        if request.method == "POST" and b'"tools/call"' in request.content:
            self.tool_calls += 1
            if self.tool_calls == 1:
                await response.aclose()
                return httpx.Response(503, headers={"retry-after": "0"}, text="upstream timeout")
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_503_on_a_tool_call_is_not_retried(jira_mcp: FakeJiraMcp) -> None:
    """A ``tools/call`` answered 503 is reported, not replayed (it may have been applied)."""
    transport = _ToolCall503()
    async with httpx.AsyncClient(transport=transport) as http:
        with pytest.raises(JiraError, match="^jira-mcp status 503: upstream timeout$"):
            await client(jira_mcp, http).add_comment("ENG-1", "hello")
    assert transport.tool_calls == 1
    assert len(jira_mcp.tool_calls("jira_add_comment")) == 1


async def test_503_on_initialize_is_still_retried(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """A 503 on the ``initialize`` handshake (no Jira effect) is retried through the shared policy."""
    jira_mcp.http_replies.append((503, {"retry-after": "0", "content-type": "text/plain"}, b"busy"))
    issue = await client(jira_mcp, http).read_issue("ENG-1")
    assert issue.identifier == "ENG-1"
    assert [r.rpc_method for r in jira_mcp.http][:2] == ["initialize", "initialize"]


async def test_custom_header_values_are_redacted(jira_mcp: FakeJiraMcp, http: httpx.AsyncClient) -> None:
    """``mcp.headers`` values (and the credential of a secret-looking one) never reach an error."""
    headers = {"x-atlassian-site-key": "SITEKEY-9f8e7d6c", "X-Api-Key": "Token apikey-5a4b"}
    jira_mcp.http_replies.append((403, {"content-type": "text/plain"}, b"site key SITEKEY-9f8e7d6c, key apikey-5a4b"))
    with pytest.raises(JiraError) as raised:
        await client(jira_mcp, http, headers=headers).read_issue("ENG-1")
    assert str(raised.value) == "jira-mcp status 403: site key [REDACTED], key [REDACTED]"
