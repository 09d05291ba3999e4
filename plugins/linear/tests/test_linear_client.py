"""The Linear tracker client against the loopback fake: transport, classification, paging, normalisation."""

from __future__ import annotations

import calendar
from pathlib import Path
from typing import Any

import httpx
import pytest
from linear_fake import FakeLinear, FakeProject, linear_settings

from lorenz import PaginationError, RetryPolicy
from lorenz_linear import LinearApiError, LinearClient, PaginationLimits

pytestmark = pytest.mark.anyio

LOGGER = "lorenz_linear"


class Sleeps(list[float]):
    async def __call__(self, delay: float) -> None:
        self.append(delay)


def client(
    fake: FakeLinear,
    http: httpx.AsyncClient,
    *,
    sleeps: Sleeps | None = None,
    policy: RetryPolicy | None = None,
    limits: PaginationLimits | None = None,
    now: Any = None,
    **settings: Any,
) -> LinearClient:
    kwargs: dict[str, Any] = {"http": http, "sleep": sleeps if sleeps is not None else Sleeps(), "now": now}
    if policy is not None:
        kwargs["policy"] = policy
    if limits is not None:
        kwargs["limits"] = limits
    return LinearClient(linear_settings(fake.url, **settings), **kwargs)


def issue_node(fake: FakeLinear, issue_id: str, identifier: str, **kwargs: Any) -> dict[str, Any]:
    """A rendered Linear issue node (not stored in the fake)."""
    issue = fake.add_issue(issue_id, identifier, **kwargs)
    fake.issues.remove(issue)
    return fake.node(issue)


def page(nodes: list[dict[str, Any]], *, has_next: bool = False, cursor: str | None = None) -> dict[str, Any]:
    return {"data": {"issues": {"nodes": nodes, "pageInfo": {"hasNextPage": has_next, "endCursor": cursor}}}}


def records(caplog: pytest.LogCaptureFixture, level: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelname == level]


# -- transport and classification ---------------------------------------------------------------


async def test_missing_api_key_fails_before_any_request(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Without an API key ``viewer()`` raises ``missing Linear API key`` and sends nothing."""
    linear = client(fake, http, api_key=None)
    with pytest.raises(LinearApiError, match="missing Linear API key"):
        await linear.viewer()
    assert fake.requests == []


async def test_viewer_sends_raw_key_json_body_and_timeout(fake: FakeLinear) -> None:
    """``viewer()`` POSTs ``{query, variables}`` with the raw key as ``authorization`` and a 30 s timeout."""
    timeouts: list[Any] = []

    async def record(request: httpx.Request) -> None:
        timeouts.append(request.extensions.get("timeout"))

    async with httpx.AsyncClient(event_hooks={"request": [record]}) as http:
        viewer = await client(fake, http).viewer()
    assert viewer == {"id": "viewer-1", "name": "Test", "email": "test@example.com"}
    [request] = fake.requests
    assert request.headers["authorization"] == "linear-token"
    assert request.headers["content-type"] == "application/json"
    assert request.operation == "LorenzTsViewer" and request.body["variables"] == {}
    assert timeouts == [{"connect": 30.0, "read": 30.0, "write": 30.0, "pool": 30.0}]


@pytest.mark.parametrize(
    ("status", "body", "text", "message"),
    [
        (200, {"errors": [{"message": "bad query"}]}, None, r"^linear_graphql_errors: .*bad query"),
        (400, {"errors": [{"message": "bad query"}]}, None, r"^linear_graphql_errors: .*bad query"),
        (200, {"data": None}, None, r"^linear_unknown_payload$"),
        (200, None, "not json", r"^linear_invalid_json: "),
        (502, None, "<html>bad gateway</html>", r"^linear api status 502$"),
        (503, {"message": "maintenance"}, None, r"^linear api status 503$"),
    ],
)
async def test_response_classification(
    fake: FakeLinear, http: httpx.AsyncClient, status: int, body: Any, text: str | None, message: str
) -> None:
    """Non-JSON, GraphQL ``errors`` (any status), a bad status and a missing ``data`` each raise their message."""
    fake.script(body, status=status, text=text)
    with pytest.raises(LinearApiError, match=message):
        await client(fake, http).viewer()


async def test_exhausted_rate_limit_raises_status_429(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A 429 with no retries left raises ``linear api status 429``."""
    fake.script({"message": "rate limited"}, status=429)
    with pytest.raises(LinearApiError, match=r"^linear api status 429$"):
        await client(fake, http, policy=RetryPolicy(max_attempts=1, retry_statuses={429})).viewer()


async def test_transport_error_is_logged_and_raised(caplog: pytest.LogCaptureFixture) -> None:
    """A connection failure raises with the transport's message and logs it once with the operation."""

    async def down(request: httpx.Request) -> None:
        raise httpx.ConnectError("network down", request=request)

    async with httpx.AsyncClient(event_hooks={"request": [down]}) as http:
        linear = LinearClient(linear_settings("http://127.0.0.1:9/graphql"), http=http)
        with pytest.raises(LinearApiError, match="network down"):
            await linear.viewer()
    [line] = records(caplog, "ERROR")
    assert line == "Linear GraphQL request failed: network down operation=LorenzTsViewer"


async def test_an_endpoint_that_never_answers_names_host_and_limit(
    silent_server: str, short_timeouts: httpx.AsyncBaseTransport, caplog: pytest.LogCaptureFixture
) -> None:
    """Linear accepting the connection and never answering is a timeout naming the host and the limit
    (the path of the endpoint stays out), in the error and in the log line."""
    async with httpx.AsyncClient(transport=short_timeouts) as http:
        linear = LinearClient(linear_settings(f"{silent_server}/graphql"), http=http)
        with pytest.raises(LinearApiError) as info:
            await linear.viewer()
    assert str(info.value) == f"linear request to {silent_server} timed out after 0.5 s"
    [line] = records(caplog, "ERROR")
    assert line == f"Linear GraphQL request failed: {info.value} operation=LorenzTsViewer"


async def test_rate_limit_honours_retry_after_seconds(
    fake: FakeLinear, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A 429 with ``Retry-After: 2`` sleeps 2 s, warns once, and the retry succeeds."""
    fake.script({"message": "rate limited"}, status=429, headers={"Retry-After": "2"})
    sleeps = Sleeps()
    viewer = await client(fake, http, sleeps=sleeps).viewer()
    assert viewer["id"] == "viewer-1"
    assert sleeps == [2.0]
    assert len(fake.requests) == 2
    [warning] = records(caplog, "WARNING")
    assert "status=429 retry=1/4 delay_ms=2000" in warning
    assert "operation=LorenzTsViewer" in warning and "rate limited" in warning


async def test_rate_limit_without_retry_after_backs_off_exponentially(
    fake: FakeLinear, http: httpx.AsyncClient
) -> None:
    """Two 429s without ``Retry-After`` sleep base, then twice base."""
    fake.script({"message": "rate limited"}, status=429)
    fake.script({"message": "rate limited"}, status=429)
    sleeps = Sleeps()
    policy = RetryPolicy(max_attempts=5, base_delay=0.05, max_delay=1.0, retry_statuses={429})
    await client(fake, http, sleeps=sleeps, policy=policy).viewer()
    assert sleeps == [0.05, 0.1]


async def test_blank_retry_after_counts_as_missing(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A blank ``Retry-After`` falls back to the exponential delay."""
    fake.script({"message": "rate limited"}, status=429, headers={"Retry-After": ""})
    sleeps = Sleeps()
    policy = RetryPolicy(max_attempts=5, base_delay=0.05, max_delay=1.0, retry_statuses={429})
    await client(fake, http, sleeps=sleeps, policy=policy).viewer()
    assert sleeps == [0.05]


async def test_retry_after_http_date(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """An HTTP-date ``Retry-After`` waits until that moment, then a persistent 429 raises."""
    for _ in range(2):
        fake.script({"message": "slow down"}, status=429, headers={"Retry-After": "Mon, 06 Apr 2026 03:00:02 GMT"})
    sleeps = Sleeps()
    now = calendar.timegm((2026, 4, 6, 3, 0, 0, 0, 0, 0))
    policy = RetryPolicy(max_attempts=2, retry_statuses={429})
    with pytest.raises(LinearApiError, match="linear api status 429"):
        await client(fake, http, sleeps=sleeps, policy=policy, now=lambda: float(now)).viewer()
    assert sleeps == [2.0]


async def test_http_error_body_is_summarised_in_one_log_line(
    fake: FakeLinear, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A 500 raises ``linear api status 500`` and logs the body once, truncated to 1000 characters."""
    fake.script({"error": {"code": "BAD_USER_INPUT", "message": "x" * 1200}}, status=500)
    with pytest.raises(LinearApiError, match=r"^linear api status 500$"):
        await client(fake, http).viewer()
    [line] = records(caplog, "ERROR")
    assert "Linear GraphQL request failed status=500" in line
    assert "operation=LorenzTsViewer" in line and "BAD_USER_INPUT" in line
    assert line.endswith("...<truncated>")


async def test_secrets_in_error_bodies_are_redacted(
    fake: FakeLinear, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """The key, ``Bearer <key>`` and an ``op://`` reference echoed by Linear never reach the error or the log."""
    from lorenz import discover
    from lorenz.testing import parse_config

    secret = "lin_api_super_secret_value"
    settings = parse_config(
        {"tracker": {"kind": "linear", "api_key": "$LINEAR_API_KEY", "endpoint": fake.url, "project_slug": "mono"}},
        env={"LINEAR_API_KEY": secret},
        trackers=discover().trackers,
        base_dir=tmp_path,
    )
    fake.api_key = secret
    echoed = f"key {secret} header Bearer {secret} ref op://vault/item/linear-client"
    fake.script({"errors": [{"message": echoed}]}, status=500)
    with pytest.raises(LinearApiError) as raised:
        await LinearClient(settings, http=http).viewer()
    [line] = records(caplog, "ERROR")
    for text in (str(raised.value), line):
        assert secret not in text and "op://vault" not in text
        assert "[REDACTED]" in text


async def test_transport_error_message_is_redacted() -> None:
    """A transport error quoting the key raises a redacted message with no chained cause."""
    secret = "lin_api_transport_secret"

    async def leak(request: httpx.Request) -> None:
        raise httpx.ConnectError(f"socket closed while sending authorization={secret}", request=request)

    async with httpx.AsyncClient(event_hooks={"request": [leak]}) as http:
        linear = LinearClient(linear_settings("http://127.0.0.1:9/graphql", api_key=secret), http=http)
        with pytest.raises(LinearApiError) as raised:
            await linear.viewer()
    assert secret not in str(raised.value) and "[REDACTED]" in str(raised.value)
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


async def test_non_ascii_api_key_is_a_redacted_linear_api_error(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A key httpx cannot put in a header raises LinearApiError without echoing it, sending nothing."""
    secret = "lin_api_\u201csmart\u201d"
    with pytest.raises(LinearApiError) as raised:
        await client(fake, http, api_key=secret).viewer()
    assert str(raised.value) == "linear api key contains characters that cannot be sent in an HTTP header"
    assert "smart" not in str(raised.value) and not fake.requests


# -- candidate polling ----------------------------------------------------------------------------


async def test_candidate_poll_follows_pages(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """52 matching issues come back over two pages, the second requested with the first page's cursor."""
    for n in range(1, 53):
        fake.add_issue(f"id-{n}", f"MT-{n}")
    fake.add_issue("id-other", "OT-1", project="other")
    fake.add_issue("id-done", "MT-99", state={"id": "s-done", "name": "Done", "type": "completed"})
    issues = await client(fake, http).fetch_candidate_issues()
    assert [i.identifier for i in issues] == [f"MT-{n}" for n in range(1, 53)]
    polls = [r for r in fake.requests if r.operation == "LorenzTsPoll"]
    assert [p.variables["after"] for p in polls] == [None, "issue-cursor-50"]
    assert polls[0].variables["first"] == 50 and polls[0].variables["stateNames"] == ["Todo"]
    assert "inverseRelations(first: 50)" in polls[0].query


async def test_issue_is_normalised(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A Linear node becomes an Issue: state type from ``state.type``, lower-cased labels, blockers, priority."""
    fake.add_issue("id-1", "MT-1", labels=["Lorenz:Backend", " UI "], priority=2, description="Details")
    fake.add_issue("id-2", "MT-2", priority=0, blockers=[])
    first, second = await client(fake, http).fetch_candidate_issues()
    assert first.to_record() == {
        "id": "id-1",
        "identifier": "MT-1",
        "title": "Issue MT-1",
        "description": "Details",
        "state": "Todo",
        "stateType": "unstarted",
        "labels": ["lorenz:backend", "ui"],
        "blockers": [{"id": "id-0", "identifier": "MT-0", "state": "Done"}],
        "branchName": "mt/mt-1",
        "url": "https://linear.app/acme/issue/MT-1",
        "priority": 2,
        "createdAt": "2026-04-01T10:00:00.000Z",
        "updatedAt": "2026-04-02T10:00:00.000Z",
        "issueEventCursor": None,
        "assigneeId": None,
        "assignedToWorker": True,
    }
    assert second.priority is None and second.blockers == ()
    assert "linear_degraded_connections" not in first.raw


async def test_unknown_state_type_drops_only_that_issue(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """An issue whose state type is not one of the six is dropped; the others are kept."""
    fake.add_issue("id-1", "MT-1")
    fake.add_issue("id-x", "MT-X", state={"id": "s-x", "name": "Todo", "type": "unknown"})
    fake.add_issue("id-2", "MT-2")
    issues = await client(fake, http).fetch_candidate_issues()
    assert [i.identifier for i in issues] == ["MT-1", "MT-2"]


async def test_labels_are_completed_with_follow_up_pages(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Labels beyond the first page are fetched with ``LorenzTsIssueLabels`` after the page's cursor."""
    fake.nested_page_size = 1
    fake.add_issue("id-1", "MT-1", labels=["Lorenz:Backend", "Extra"])
    [issue] = await client(fake, http).fetch_candidate_issues()
    assert issue.labels == ("lorenz:backend", "extra")
    follow_up = fake.requests[1]
    assert follow_up.operation == "LorenzTsIssueLabels"
    assert follow_up.variables == {"id": "id-1", "first": 50, "after": "label-cursor-1"}


async def test_malformed_node_on_a_later_page_is_dropped(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """``fetch_issues_by_states`` keeps the good issues of every page and drops one with an empty title."""
    fake.script(page([issue_node(fake, "id-1", "MT-1")], has_next=True, cursor="cursor-1"), operation="LorenzTsPoll")
    bad = issue_node(fake, "id-bad", "MT-BAD", title="")
    fake.script(page([bad, issue_node(fake, "id-2", "MT-2")]), operation="LorenzTsPoll")
    issues = await client(fake, http).fetch_issues_by_states(["Todo"])
    assert [i.identifier for i in issues] == ["MT-1", "MT-2"]


async def test_assignee_me_resolves_the_viewer_first(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """``assignee: me`` queries the viewer first; only issues assigned to it are for this worker."""
    fake.add_issue("id-1", "MT-1", assignee="viewer-1")
    fake.add_issue("id-2", "MT-2", assignee="someone-else")
    fake.add_issue("id-3", "MT-3")
    linear = client(fake, http, assignee=" Me ")
    issues = await linear.fetch_candidate_issues()
    assert fake.operations()[0] == "LorenzTsViewer"
    assert [(i.identifier, i.assigned_to_worker) for i in issues] == [("MT-1", True), ("MT-2", False), ("MT-3", False)]
    await linear.fetch_candidate_issues()
    assert fake.operations().count("LorenzTsViewer") == 1


async def test_failed_viewer_lookup_is_retried_on_the_next_poll(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A failed ``me`` lookup fails that poll only; the next poll asks for the viewer again."""
    fake.add_issue("id-1", "MT-1", assignee="viewer-1")
    fake.script({"errors": [{"message": "viewer unavailable"}]}, operation="LorenzTsViewer")
    linear = client(fake, http, assignee="me")
    with pytest.raises(LinearApiError, match="viewer unavailable"):
        await linear.fetch_candidate_issues()
    [issue] = await linear.fetch_candidate_issues()
    assert issue.assigned_to_worker
    assert fake.operations().count("LorenzTsViewer") == 2


async def test_literal_assignee_needs_no_viewer(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A literal assignee id is compared as is, without a viewer query."""
    fake.add_issue("id-1", "MT-1", assignee="user-7")
    [issue] = await client(fake, http, assignee="USER-7").fetch_candidate_issues()
    assert issue.assigned_to_worker and "LorenzTsViewer" not in fake.operations()


@pytest.mark.parametrize(
    ("pages", "limits", "message"),
    [
        ([(True, None)], None, "linear_pagination_malformed_cursor: issues endCursor must be a non-empty string"),
        (
            [(True, "cursor-1"), (True, "cursor-1")],
            None,
            'linear_pagination_repeated_cursor: issues endCursor="cursor-1" was returned more than once',
        ),
        (
            [(True, "c-1"), (True, "c-2"), (False, None)],
            PaginationLimits(max_pages=2),
            "linear_pagination_page_limit_exceeded: issues pages=3 max_pages=2",
        ),
    ],
)
async def test_poll_pagination_guard(
    fake: FakeLinear,
    http: httpx.AsyncClient,
    pages: list[tuple[bool, str | None]],
    limits: PaginationLimits | None,
    message: str,
) -> None:
    """A missing or repeated cursor, or too many pages, stops the poll with the guard's message."""
    for n, (has_next, cursor) in enumerate(pages):
        fake.script(page([issue_node(fake, f"id-{n}", f"MT-{n}")], has_next=has_next, cursor=cursor))
    with pytest.raises(PaginationError, match=message):
        await client(fake, http, limits=limits).fetch_candidate_issues()


async def test_poll_item_limit(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """More issues than ``max_items`` stops the poll."""
    fake.add_issue("id-1", "MT-1")
    fake.add_issue("id-2", "MT-2")
    with pytest.raises(PaginationError, match="linear_pagination_item_limit_exceeded: issues items=2 max_items=1"):
        await client(fake, http, limits=PaginationLimits(max_items=1)).fetch_candidate_issues()


async def test_blockers_are_completed_from_relation_pages(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Inverse relations beyond the first page are fetched; every ``blocks`` relation becomes a blocker."""
    fake.nested_page_size = 1
    blockers = [
        {"id": "id-0", "identifier": "MT-0", "state": {"name": "Done", "type": "completed"}},
        {"id": "id-b", "identifier": "MT-BLOCK", "state": {"name": "In Progress", "type": "started"}},
    ]
    fake.add_issue("id-1", "MT-1", labels=[], blockers=blockers)
    [issue] = await client(fake, http).fetch_candidate_issues()
    assert [b.identifier for b in issue.blockers] == ["MT-0", "MT-BLOCK"]
    assert issue.blockers[1].state_type == "started"
    follow_up = fake.requests[1]
    assert follow_up.operation == "LorenzTsIssueInverseRelations"
    assert follow_up.variables["after"] == "relation-cursor-1"


async def test_bad_label_cursor_degrades_the_connection(
    fake: FakeLinear, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A label page claiming more without a cursor keeps the issue, records why, and warns once."""
    node = issue_node(fake, "id-1", "MT-1")
    node["labels"]["pageInfo"] = {"hasNextPage": True, "endCursor": None}
    fake.script(page([node]), operation="LorenzTsPoll")
    [issue] = await client(fake, http).fetch_candidate_issues()
    assert issue.labels == ("lorenz:backend",)
    assert issue.raw["linear_degraded_connections"] == [
        {
            "source": "issue MT-1 (id-1)",
            "connection": "issue.labels",
            "reason": "linear_pagination_malformed_cursor: issue.labels endCursor must be a non-empty string",
            "cursor": None,
        }
    ]
    [warning] = records(caplog, "WARNING")
    assert "source=issue MT-1 (id-1)" in warning and "connection=issue.labels" in warning
    assert "reason=linear_pagination_malformed_cursor" in warning


async def test_label_item_limit_degrades_to_no_labels(
    fake: FakeLinear, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Labels over ``max_items`` are dropped (no cursor recorded) and the issue kept."""
    fake.add_issue("id-1", "MT-1", labels=["A", "B"])
    [issue] = await client(fake, http, limits=PaginationLimits(max_items=1)).fetch_candidate_issues()
    assert issue.labels == ()
    assert issue.raw["linear_degraded_connections"] == [
        {
            "source": "issue MT-1 (id-1)",
            "connection": "issue.labels",
            "reason": "linear_pagination_item_limit_exceeded: issue.labels items=2 max_items=1",
        }
    ]
    assert len(records(caplog, "WARNING")) == 1


async def test_failed_follow_up_page_degrades_the_connection(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A follow-up page that fails keeps the nodes so far and records the cursor it was fetching."""
    fake.nested_page_size = 1
    fake.add_issue("id-1", "MT-1", labels=["A", "B"])
    fake.script({"errors": [{"message": "labels unavailable"}]}, operation="LorenzTsIssueLabels")
    [issue] = await client(fake, http).fetch_candidate_issues()
    assert issue.labels == ("a",)
    [entry] = issue.raw["linear_degraded_connections"]
    assert entry["cursor"] == "label-cursor-1" and "labels unavailable" in entry["reason"]


# -- projects -------------------------------------------------------------------------------------


def two_team_project() -> FakeProject:
    states = [
        {"id": "s-todo", "name": "Todo", "type": "unstarted"},
        {"id": "s-done", "name": "Done", "type": "completed"},
    ]
    return FakeProject(
        id="proj-1",
        name="My Project",
        slug_id="my-proj",
        teams=[
            {"id": "team-1", "key": "MP", "name": "Main", "states": states},
            {"id": "team-2", "key": "MP2", "name": "Second", "states": states},
        ],
    )


async def test_project_by_slug_completes_teams_and_states(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Teams and each team's states are completed over follow-up pages."""
    fake.projects.append(two_team_project())
    fake.nested_page_size = 1
    project = await client(fake, http).project_by_slug("my-proj")
    assert (project.id, project.name, project.slug_id) == ("proj-1", "My Project", "my-proj")
    assert [t.key for t in project.teams] == ["MP", "MP2"]
    assert [(s.name, s.type) for s in project.teams[0].states] == [("Todo", "unstarted"), ("Done", "completed")]
    assert project.degraded_connections == ()
    assert fake.requests[1].operation == "LorenzTsProjectTeams"
    assert fake.requests[1].variables["after"] == "team-cursor-1"
    assert fake.requests[2].operation == "LorenzTsTeamStates"
    assert fake.requests[2].variables["after"] == "state-cursor-1"


async def test_project_by_slug_defaults_to_the_configured_slug(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Without an argument the configured ``project_slug`` is looked up in one request."""
    fake.projects.append(two_team_project())
    project = await client(fake, http, options={"projectSlug": "my-proj"}).project_by_slug()
    assert len(project.teams) == 2 and len(fake.requests) == 1


async def test_project_not_found(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """An unknown slug raises ``linear project not found: <slug>``."""
    with pytest.raises(LinearApiError, match="linear project not found: missing"):
        await client(fake, http).project_by_slug("missing")


# -- by ids ---------------------------------------------------------------------------------------


async def test_issues_by_ids_batches_of_fifty_in_requested_order(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """51 unique ids go in batches of 50 and 1; results follow the requested order whatever the server's."""
    ids = [f"id-{n}" for n in range(51)]
    for n in reversed(range(51)):
        fake.add_issue(f"id-{n}", f"MT-{n}")
    issues = await client(fake, http).fetch_issues_by_ids([ids[0], *ids])
    assert [i.id for i in issues] == ids
    batches = [r.variables for r in fake.requests]
    assert batches == [{"ids": ids[:50], "first": 50}, {"ids": ids[50:], "first": 1}]


async def test_issues_by_ids_falls_back_to_identifier_lookups(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Identifiers the id batch misses are looked up one by one; unknown ones are skipped."""
    fake.add_issue("id-9", "MT-9")
    issues = await client(fake, http).fetch_issues_by_ids(["MT-9", "MT-GONE"])
    assert [i.identifier for i in issues] == ["MT-9"]
    lookups = [r.variables["id"] for r in fake.requests if r.operation == "LorenzTsIssueByIdentifier"]
    assert lookups == ["MT-9", "MT-GONE"]


async def test_failed_batch_of_identifiers_is_swallowed(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A failing id batch containing identifiers is skipped and the identifiers looked up singly."""
    fake.add_issue("id-9", "MT-9")
    fake.script({"errors": [{"message": "Argument Validation Error"}]}, status=400, operation="LorenzTsIssuesById")
    issues = await client(fake, http).fetch_issues_by_ids(["MT-9"])
    assert [i.identifier for i in issues] == ["MT-9"]


async def test_failed_batch_of_uuids_raises(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A failing batch made only of UUIDs raises (UUIDs have no identifier fallback)."""
    fake.script({"errors": [{"message": "boom"}]}, operation="LorenzTsIssuesById")
    with pytest.raises(LinearApiError, match="boom"):
        await client(fake, http).fetch_issues_by_ids(["0b8a7e4c-1d2e-4f3a-9b8c-7d6e5f4a3b2c"])


async def test_empty_requests_send_nothing(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """No ids and no states mean no request at all."""
    linear = client(fake, http)
    assert await linear.fetch_issues_by_ids([]) == []
    assert await linear.fetch_issues_by_states([]) == []
    assert fake.requests == []


async def test_too_many_ids_fail_before_any_request(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """More unique ids than ``max_items`` raises the item limit without a request."""
    with pytest.raises(PaginationError, match="linear_pagination_item_limit_exceeded: issuesByIds items=2 max_items=1"):
        await client(fake, http, limits=PaginationLimits(max_items=1)).fetch_issues_by_ids(["a", "b"])
    assert fake.requests == []


async def test_state_names_are_stringified_and_deduplicated(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """``["Todo", "Todo", 42]`` is sent as ``["Todo", "42"]``."""
    await client(fake, http).fetch_issues_by_states(["Todo", "Todo", 42])
    assert fake.requests[0].variables["stateNames"] == ["Todo", "42"]


# -- mutations ------------------------------------------------------------------------------------


async def test_create_update_archive(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Create, move and archive an issue through the mutations."""
    fake.projects.append(two_team_project())
    linear = client(fake, http)
    created = await linear.create_issue(
        team_id="team-1", project_id="proj-1", state_id="s-todo", title="New work", description="Body"
    )
    assert (created.state, created.state_type, created.title) == ("Todo", "unstarted", "New work")
    assert fake.requests[0].variables["input"] == {
        "teamId": "team-1",
        "projectId": "proj-1",
        "stateId": "s-todo",
        "title": "New work",
        "description": "Body",
    }
    moved = await linear.update_issue_state(created.id, "s-done")
    assert (moved.state, moved.state_type) == ("Done", "completed")
    assert "issueUpdate" in fake.requests[1].query
    await linear.archive_issue(created.id)
    assert "issueArchive" in fake.requests[2].query and fake.requests[2].variables == {"id": created.id}
    assert fake.issues == []


async def test_failed_mutations_raise(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """``success: false`` raises ``linear <operation> failed``."""
    linear = client(fake, http)
    with pytest.raises(LinearApiError, match="linear issueArchive failed"):
        await linear.archive_issue("issue-1")
    with pytest.raises(LinearApiError, match="linear issueUpdate failed"):
        await linear.update_issue_state("issue-1", "s-done")
    fake.script({"data": {"issueCreate": {"success": True, "issue": {"id": "x"}}}})
    with pytest.raises(LinearApiError, match="linear issueCreate returned malformed issue"):
        await linear.create_issue(team_id="t", project_id="p", state_id="s", title="T", description="D")


async def test_without_a_host_client_a_short_lived_one_is_used(fake: FakeLinear) -> None:
    """A client built without ``http`` still reaches Linear."""
    fake.add_issue("id-1", "MT-1")
    issues = await LinearClient(linear_settings(fake.url)).fetch_candidate_issues()
    assert [i.identifier for i in issues] == ["MT-1"]
