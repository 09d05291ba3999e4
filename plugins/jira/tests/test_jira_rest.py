"""The REST v3 client against a loopback fake Jira: search paging, reads, transitions, comments,
creation, retries and error reporting."""

from __future__ import annotations

import base64
import json
import logging
import re

import httpx
import pytest
from jira_fake_rest import API_TOKEN, EMAIL, FakeJira, adf
from jira_fake_settings import rest_settings

from lorenz import PaginationError, RetryPolicy
from lorenz_jira.backend import JiraError, NewIssue, PaginationLimits
from lorenz_jira.options import jira_options
from lorenz_jira.rest import JiraRestClient

pytestmark = pytest.mark.anyio


def client(jira: FakeJira, http: httpx.AsyncClient, **kwargs: object) -> JiraRestClient:
    settings = rest_settings(jira.base_url + "/", **kwargs)  # type: ignore[arg-type]
    return JiraRestClient(jira_options(settings), http, secrets=settings.secrets, retry=RetryPolicy(base_delay=0))


async def test_candidates_are_normalised_with_basic_auth(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """Candidates: JQL with scope, states, assignee and label; Basic auth; normalised issue with URL."""
    jira.add_issue("ENG-1")
    jira.add_issue("ENG-2", labels=("backend",))  # no agent label
    jira.add_issue("ENG-3", assignee="someone-else")
    (issue,) = await client(jira, http, assignee="account-1").fetch_candidate_issues()
    assert (issue.id, issue.identifier, issue.title) == ("10001", "ENG-1", "Fix login")
    assert (issue.state, issue.state_type, issue.description) == ("To Do", "unstarted", "Fix the thing")
    assert issue.assigned_to_worker is True
    assert issue.url == f"{jira.base_url}/browse/ENG-1"
    assert issue.labels == ("agent", "lorenz:backend")
    assert issue.priority == 1
    (search,) = jira.calls("POST", "/rest/api/3/search/jql")
    assert (
        search.body["jql"]
        == 'project in ("ENG") AND status in ("To Do") AND assignee = "account-1" AND labels = "agent"'
    )
    assert search.body["fields"][:3] == ["summary", "description", "status"]
    expected = "Basic " + base64.b64encode(f"{EMAIL}:{API_TOKEN}".encode()).decode()
    assert search.headers["authorization"] == expected
    assert search.headers["accept"] == "application/json"


async def test_search_follows_next_page_token(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """Pages are followed via ``nextPageToken``; the first request carries none."""
    for n in range(1, 6):
        jira.add_issue(f"ENG-{n}")
    jira.search_page_size = 2
    issues = await client(jira, http).search_issues('project in ("ENG")')
    assert [i.identifier for i in issues] == ["ENG-1", "ENG-2", "ENG-3", "ENG-4", "ENG-5"]
    tokens = [r.body.get("nextPageToken") for r in jira.calls("POST", "/search/jql")]
    assert tokens == [None, "page-2", "page-4"]


async def test_repeated_token_is_refused(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """A cursor returned twice stops the loop with the guard's message."""
    page = {"issues": [jira.add_issue("ENG-1")], "nextPageToken": "page-2"}
    jira.script("search", json_body=page, times=2)
    with pytest.raises(
        PaginationError,
        match='jira_pagination_repeated_cursor: searchIssues nextPageToken="page-2" was returned more than once',
    ):
        await client(jira, http).search_issues("x")


async def test_malformed_token_is_refused(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """A non-string ``nextPageToken`` is malformed."""
    jira.script("search", json_body={"issues": [], "nextPageToken": 42})
    with pytest.raises(
        PaginationError, match="jira_pagination_malformed_cursor: searchIssues nextPageToken must be a non-empty string"
    ):
        await client(jira, http).search_issues("x")


async def test_page_and_item_limits(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """The guard's page and item limits stop runaway searches."""
    for n in range(1, 4):
        jira.add_issue(f"ENG-{n}")
    jira.search_page_size = 1
    options = jira_options(rest_settings(jira.base_url))
    pages = JiraRestClient(options, http, pagination=PaginationLimits(max_pages=2))
    with pytest.raises(PaginationError, match="jira_pagination_page_limit_exceeded: searchIssues pages=3 max_pages=2"):
        await pages.search_issues('project in ("ENG")')
    jira.search_page_size = None
    items = JiraRestClient(options, http, pagination=PaginationLimits(max_items=1))
    with pytest.raises(PaginationError, match="jira_pagination_item_limit_exceeded: searchIssues items=3 max_items=1"):
        await items.search_issues('project in ("ENG")')


async def test_by_ids_keeps_requested_order(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """Ids or keys come back in the order asked for; unknown ones are omitted."""
    for n in range(1, 4):
        jira.add_issue(f"ENG-{n}")
    issues = await client(jira, http).fetch_issues_by_ids(["ENG-3", "ENG-404", "ENG-1"])
    assert [i.identifier for i in issues] == ["ENG-3", "ENG-1"]
    assert jira.calls("POST")[-1].body["jql"] == 'key in ("ENG-3", "ENG-404", "ENG-1")'
    numeric = await client(jira, http).fetch_issues_by_ids(["10002", "10001"])
    assert [i.id for i in numeric] == ["10002", "10001"]
    assert await client(jira, http).fetch_issues_by_ids([]) == []


async def test_by_states_has_no_gate(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """States queries skip the assignee and label clauses; no states makes no request."""
    jira.add_issue("ENG-1", status="Done", category="done", labels=(), assignee=None)
    (issue,) = await client(jira, http).fetch_issues_by_states(["Done"])
    assert (issue.identifier, issue.state_type) == ("ENG-1", "completed")
    assert await client(jira, http).fetch_issues_by_states([]) == []
    assert len(jira.calls("POST")) == 1


async def test_blockers_and_oversized_metadata(
    jira: FakeJira, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Blocking links become blockers; more than 500 labels or links are dropped with a warning."""
    jira.add_issue("ENG-1", status="In Progress", category="indeterminate")
    jira.add_issue("ENG-2", blocked_by=("ENG-1",))
    blocked = await client(jira, http).read_issue("ENG-2")
    assert [b.to_record() for b in blocked.blockers] == [
        {"id": "10001", "identifier": "ENG-1", "state": "In Progress", "stateType": "started"}
    ]
    big = jira.add_issue("ENG-3", labels=tuple(f"l{n}" for n in range(501)))
    big["fields"]["issuelinks"] = jira.issues["ENG-2"]["fields"]["issuelinks"] * 501
    with caplog.at_level(logging.WARNING, logger="lorenz_jira"):
        issue = await client(jira, http).read_issue("ENG-3")
    assert (issue.labels, issue.blockers) == ((), ())
    warnings = [r.getMessage() for r in caplog.records]
    assert any("field=labels issue=ENG-3 items=501 max_items=500" in w for w in warnings)
    assert any("field=issuelinks issue=ENG-3 items=501 max_items=500" in w for w in warnings)


async def test_read_issue_asks_for_the_fields(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """A read requests the fields list with encoded commas and an encoded key."""
    jira.add_issue("ENG-1")
    await client(jira, http).read_issue("ENG-1")
    read = jira.calls("GET")[-1]
    assert read.path == "/rest/api/3/issue/ENG-1"
    assert (
        read.query
        == "fields=summary%2Cdescription%2Cstatus%2Clabels%2Cissuelinks%2Cassignee%2Cpriority%2Ccreated%2Cupdated"
    )


async def test_update_status_picks_transition_by_name(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """The transition named like the status (case-insensitive) is posted, then the issue re-read."""
    jira.add_issue("ENG-1")
    issue = await client(jira, http).update_issue_status("ENG-1", " in progress ")
    assert (issue.state, issue.state_type) == ("In Progress", "started")
    post = jira.calls("POST", "/transitions")[-1]
    assert post.body == {"transition": {"id": "21"}}


async def test_unknown_transition(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """A status no transition leads to fails by name, without posting."""
    jira.add_issue("ENG-1")
    with pytest.raises(JiraError, match="^jira transition not found for status: Shipped$"):
        await client(jira, http).update_issue_status("ENG-1", "Shipped")
    assert jira.calls("POST", "/transitions") == []


async def test_numeric_transition_ids_are_not_trusted(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """A transition whose id is not a string counts as not found."""
    jira.add_issue("ENG-1")
    jira.script("transitions", json_body={"transitions": [{"id": 21, "name": "In Progress"}]})
    with pytest.raises(JiraError, match="transition not found"):
        await client(jira, http).update_issue_status("ENG-1", "In Progress")


async def test_add_comment_sends_adf(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """The Markdown body is posted as ADF and the created comment is normalised."""
    jira.add_issue("ENG-1")
    comment = await client(jira, http).add_comment("ENG-1", "First line\n\nSecond line")
    post = jira.calls("POST", "/rest/api/3/issue/ENG-1/comment")[-1]
    assert post.body == {
        "body": {
            "type": "doc",
            "version": 1,
            "content": [
                {"type": "paragraph", "content": [{"type": "text", "text": "First line"}]},
                {"type": "paragraph", "content": [{"type": "text", "text": "Second line"}]},
            ],
        }
    }
    assert comment.body == "First line\nSecond line"
    assert comment.author == "account-current"


async def test_list_comments_pages_with_start_at(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """Comments page with ``startAt`` until ``total``; bodies read as text."""
    jira.add_issue("ENG-1")
    for n in range(3):
        jira.add_comment("ENG-1", f"## Note {n}", comment_id=f"comment-{n}")
    jira.comment_page_size = 2
    comments = await client(jira, http).list_comments("ENG-1")
    assert [(c.id, c.body) for c in comments] == [
        ("comment-0", "## Note 0"),
        ("comment-1", "## Note 1"),
        ("comment-2", "## Note 2"),
    ]
    assert comments[0].to_record() == {
        "id": "comment-0",
        "body": "## Note 0",
        "author": "account-1",
        "createdAt": "2026-06-01T00:00:00.000+0000",
        "updatedAt": "2026-06-01T00:00:00.000+0000",
        "url": f"{jira.base_url}/rest/api/3/issue/10001/comment/comment-0",
    }
    assert [r.query for r in jira.calls("GET", "/comment")] == ["startAt=0&maxResults=100", "startAt=2&maxResults=100"]


async def test_update_comment_puts_adf(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """An update PUTs ADF to the comment's URL and returns the new text."""
    jira.add_issue("ENG-1")
    jira.add_comment("ENG-1", "old", comment_id="comment-1")
    comment = await client(jira, http).update_comment("ENG-1", "comment-1", "Updated workpad\n\nProof")
    assert comment.body == "Updated workpad\nProof"
    put = jira.calls("PUT")[-1]
    assert put.path == "/rest/api/3/issue/ENG-1/comment/comment-1"
    assert [b["type"] for b in put.body["body"]["content"]] == ["paragraph", "paragraph"]


async def test_create_issue_assigns_the_current_user(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """Without an assignee the issue goes to ``/myself``'s account, then is re-read."""
    issue = await client(jira, http).create_issue(NewIssue(title="Follow-up", body="details"))
    assert jira.requests[0].path == "/rest/api/3/myself"
    create = jira.calls("POST", "/rest/api/3/issue")[-1]
    assert create.body["fields"]["assignee"] == {"accountId": "account-current"}
    assert create.body["fields"]["issuetype"] == {"name": "Task"}
    assert create.body["fields"]["description"]["type"] == "doc"
    assert (issue.identifier, issue.assignee_id, issue.description) == ("ENG-1", "account-current", "details")


async def test_create_issue_with_configured_assignee_and_status(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """A configured assignee skips ``/myself``; a status transitions the new issue."""
    issue = await client(jira, http, assignee="account-1", issueType="Bug").create_issue(
        NewIssue(title="Follow-up", status="In Progress")
    )
    assert jira.requests[0].path == "/rest/api/3/issue"
    assert jira.requests[0].body["fields"]["assignee"] == {"accountId": "account-1"}
    assert jira.requests[0].body["fields"]["issuetype"] == {"name": "Bug"}
    assert "description" not in jira.requests[0].body["fields"]
    assert issue.state == "In Progress"


async def test_create_issue_needs_a_project(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """No project key, no creation (and no request)."""
    with pytest.raises(JiraError, match="^tracker.project_keys is required to create Jira issues$"):
        await client(jira, http, projectKeys=[]).create_issue(NewIssue(title="x"))
    assert jira.requests == []


async def test_429_with_retry_after_is_retried(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """A 429 with ``Retry-After: 0`` is retried and the next answer used."""
    jira.add_issue("ENG-1")
    jira.script(
        "read", status=429, json_body={"errorMessages": ["rate limited"]}, headers={"Retry-After": "0"}, times=2
    )
    issue = await client(jira, http).read_issue("ENG-1")
    assert issue.identifier == "ENG-1"
    assert len(jira.calls("GET")) == 3


async def test_retries_are_bounded(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """After the last attempt the 503 is reported, not retried forever."""
    jira.script("read", status=503, json_body={"errorMessages": ["down"]}, headers={"Retry-After": "0"}, times=10)
    with pytest.raises(JiraError, match=r'^jira api status 503: \{"errorMessages":\["down"\]\}$'):
        await client(jira, http).read_issue("ENG-1")
    assert len(jira.calls("GET")) == RetryPolicy().max_attempts


async def test_500_with_json_error_body(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """A JSON error body is summarised compactly after the status."""
    jira.script("search", status=500, json_body={"errorMessages": ["boom"]})
    with pytest.raises(JiraError, match=r'^jira api status 500: \{"errorMessages":\["boom"\]\}$'):
        await client(jira, http).fetch_candidate_issues()


async def test_non_json_bodies(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """An HTML error page keeps its status; a 200 that is not JSON is ``jira_invalid_json``."""
    jira.script("read", status=502, text="<html><body>Bad   gateway</body></html>")
    with pytest.raises(JiraError, match="^jira api status 502: <html><body>Bad gateway</body></html>$"):
        await client(jira, http).read_issue("ENG-1")
    jira.script("read", status=200, text="<html>login page</html>")
    with pytest.raises(JiraError, match="^jira_invalid_json: Expecting value"):
        await client(jira, http).read_issue("ENG-1")


async def test_empty_error_body_names_the_reason(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """An error without a body still says what happened."""
    jira.script("read", status=403)
    with pytest.raises(JiraError, match="^jira api status 403: Forbidden$"):
        await client(jira, http).read_issue("ENG-1")


async def test_error_bodies_are_redacted(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """Echoed credentials, Basic tokens and ``op://`` references never reach the message."""
    basic = base64.b64encode(f"{EMAIL}:{API_TOKEN}".encode()).decode()
    jira.script("read", status=500, text=f"api_key={API_TOKEN} Basic {basic} op://vault/item/jira-token")
    with pytest.raises(JiraError) as raised:
        await client(jira, http).read_issue("ENG-1")
    message = str(raised.value)
    assert message.startswith("jira api status 500: ")
    assert "[REDACTED]" in message
    for leak in (API_TOKEN, basic, "op://"):
        assert leak not in message


async def test_missing_config_fails_before_any_request(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """Base URL, then email, then API key are required at request time."""
    settings = rest_settings("")
    with pytest.raises(JiraError, match="^tracker.base_url is required for jira tracker$"):
        await JiraRestClient(jira_options(settings), http).read_issue("ENG-1")
    no_email = rest_settings(jira.base_url, email=None)
    with pytest.raises(JiraError, match="^tracker.email is required for jira tracker$"):
        await JiraRestClient(jira_options(no_email), http).read_issue("ENG-1")
    assert jira.requests == []


async def test_transport_errors_are_reported(http: httpx.AsyncClient) -> None:
    """A refused connection becomes a ``jira request failed`` error."""
    options = jira_options(rest_settings("http://127.0.0.1:9"))
    with pytest.raises(JiraError, match="^jira request failed: ConnectError"):
        await JiraRestClient(options, http).read_issue("ENG-1")


async def test_a_backend_that_never_answers_names_host_and_limit(silent_server: str, http: httpx.AsyncClient) -> None:
    """A Jira that accepts the connection and never answers is a timeout naming the host and the limit."""
    options = jira_options(rest_settings(silent_server))
    with pytest.raises(JiraError) as info:
        await JiraRestClient(options, http, timeout=0.3).read_issue("ENG-1")
    assert str(info.value) == f"jira request to {silent_server} timed out after 0.3 s"


async def test_every_request_has_a_timeout() -> None:
    """Requests carry the client's explicit timeout (30 s by default) whatever the host client's."""
    seen: list[dict[str, float | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.extensions["timeout"])
        return httpx.Response(200, json={"id": "1", "key": "ENG-1", "fields": {"status": {"name": "To Do"}}})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler), timeout=None) as http:
        await JiraRestClient(jira_options(rest_settings("https://x.test")), http).read_issue("ENG-1")
        await JiraRestClient(jira_options(rest_settings("https://x.test")), http, timeout=5).read_issue("ENG-1")
    assert [t["read"] for t in seen] == [30.0, 5]


async def test_description_round_trip(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """A Markdown description written as ADF reads back as its text."""
    issue = await client(jira, http, assignee="account-1").create_issue(
        NewIssue(title="Docs", body="# Plan\n\n- [ ] write\n- [x] review\n\nSee `README`")
    )
    assert issue.description == "Plan\nwrite\nreview\nSee README"
    assert jira.issues["ENG-1"]["fields"]["description"]["content"][1]["type"] == "taskList"
    assert adf("x")["type"] == "doc"


async def test_non_idempotent_posts_are_not_retried_on_503(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """A 503 on a comment, create or transition POST is reported, not replayed; 429 and search still retry."""
    jira.add_issue("ENG-1")
    jira.script("comments", status=503, text="upstream timeout", times=2)
    with pytest.raises(JiraError, match="^jira api status 503: upstream timeout$"):
        await client(jira, http).add_comment("ENG-1", "hi")
    assert len(jira.calls("POST", "/comment")) == 1
    jira.scripts.clear()
    jira.script("create", status=503, text="upstream timeout", times=2)
    with pytest.raises(JiraError, match="^jira api status 503"):
        await client(jira, http, assignee="account-1").create_issue(NewIssue(title="x"))
    assert len(jira.calls("POST", "/rest/api/3/issue")) == 1
    jira.scripts.clear()
    jira.script("transitions", json_body={"transitions": [{"id": "21", "name": "In Progress"}]})
    jira.script("transitions", status=503, text="upstream timeout", times=2)
    with pytest.raises(JiraError, match="^jira api status 503"):
        await client(jira, http).update_issue_status("ENG-1", "In Progress")
    assert len(jira.calls("POST", "/transitions")) == 1
    jira.scripts.clear()
    jira.script("comments", status=429, headers={"Retry-After": "0"})
    await client(jira, http).add_comment("ENG-1", "again")
    assert len(jira.calls("POST", "/comment")) == 3
    jira.script("search", status=503, headers={"Retry-After": "0"})
    await client(jira, http).search_issues('project in ("ENG")')
    assert len(jira.calls("POST", "/search/jql")) == 2


async def test_path_ids_are_validated_before_any_request(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """``.``/``..`` or other path syntax as an issue or comment id fails, naming the argument, and sends nothing."""
    jira_client = client(jira, http)
    for bad in (".", "..", "ENG-1/../x", "ENG 1", ""):
        shown = json.dumps(bad)
        with pytest.raises(JiraError, match=f"^invalid issueId: {re.escape(shown)}$"):
            await jira_client.read_issue(bad)
        with pytest.raises(JiraError, match=f"^invalid issueId: {re.escape(shown)}$"):
            await jira_client.add_comment(bad, "hi")
        with pytest.raises(JiraError, match=f"^invalid issueId: {re.escape(shown)}$"):
            await jira_client.list_comments(bad)
        with pytest.raises(JiraError, match=f"^invalid issueId: {re.escape(shown)}$"):
            await jira_client.update_issue_status(bad, "Done")
        with pytest.raises(JiraError, match=f"^invalid commentId: {re.escape(shown)}$"):
            await jira_client.update_comment("ENG-1", bad, "hi")
    assert jira.requests == []


async def test_bare_basic_token_is_redacted(jira: FakeJira, http: httpx.AsyncClient) -> None:
    """The base64 ``email:api_key`` token echoed without its ``Basic`` scheme is still redacted."""
    basic = base64.b64encode(f"{EMAIL}:{API_TOKEN}".encode()).decode()
    jira.script("read", status=401, json_body={"errorMessages": ["bad credentials"], "credential": basic})
    with pytest.raises(JiraError) as raised:
        await client(jira, http).read_issue("ENG-1")
    assert str(raised.value) == 'jira api status 401: {"errorMessages":["bad credentials"],"credential":"[REDACTED]"}'
