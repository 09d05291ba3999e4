"""The ``jira-mcp`` client: Jira through a remote (Atlassian-style) MCP server.

It speaks MCP with the official SDK client (``initialize`` handshake, session header, JSON or
SSE replies) and carries the SDK's ``httpx2`` requests over the host's ``httpx`` client, so
every byte still goes through ``context.http`` with a timeout and the shared retry policy.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import httpx
from attrs import define

from lorenz import (
    DEFAULT_TIMEOUT,
    Issue,
    PaginationError,
    RetryPolicy,
    TrackerComment,
    describe_timeout,
    normalize_issue,
    redact_text,
    send_with_retry,
    summarize_body,
    timeout_message,
)

from .backend import JiraError, NewIssue, PaginationLimits, explicit_assignee
from .jql import assignee_filter, by_ids_jql, candidate_jql, states_jql
from .normalize import JIRA_FIELDS, normalize_jira_comment, normalize_jira_issue
from .options import DEFAULT_MCP_TOOLS, JiraOptions
from .rest import sort_by_requested

if TYPE_CHECKING:
    import httpx2
    from mcp import Client

__all__ = ["JiraMcpClient", "payload_error"]

T = TypeVar("T")

_ISSUE_REFS = ("issue_key", "issueKey", "issueIdOrKey", "issueId", "key")
_COMMENT_ID_KEYS = ("comment_id", "commentId", "id")
_COMMENT_BODY_KEYS = ("comment", "body")
_COMMENT_PATHS: tuple[tuple[str, ...], ...] = (
    ("comments",),
    ("values",),
    ("rows",),
    ("comments", "comments"),
    ("comments", "nodes"),
    ("data", "comments"),
    ("data", "comments", "nodes"),
    ("data", "issue", "comments"),
    ("data", "issue", "comments", "nodes"),
    ("issue", "comments"),
    ("issue", "comments", "nodes"),
)
_ERROR_TEXT = re.compile(r"^\s*(?:error|failed|failure)\b", re.IGNORECASE)
_COMMENT_ID_TEXT = re.compile(r"\b(?:comment\s+)?id\s*[:#]\s*([A-Za-z0-9_-]+)", re.IGNORECASE)
# Hop-by-hop and body-framing headers describe the upstream bytes, not the re-wrapped body.
_DROPPED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection"})


# -- payload helpers ----------------------------------------------------------------------------


def _at(value: object, path: Sequence[str]) -> object:
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _summary(value: object, secrets: Iterable[str]) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return summarize_body(text, secrets)


def payload_error(payload: object, secrets: Iterable[str] = ()) -> str | None:
    """The failure a tool reported inside a successful reply, if any.

    Text starting with ``error``/``failed``/``failure``; ``{success: false}`` (its ``error`` or
    ``message``); an ``error`` string; an ``error`` mapping (its ``message``).
    """
    if isinstance(payload, str):
        return payload if _ERROR_TEXT.match(payload) else None
    if not isinstance(payload, Mapping):
        return None
    error = payload.get("error")
    if payload.get("success") is False:
        for candidate in (error, payload.get("message")):
            if isinstance(candidate, str) and candidate:
                return candidate
        return _summary(payload, secrets)
    if isinstance(error, str):
        return error
    if isinstance(error, Mapping):
        message = error.get("message")
        return message if isinstance(message, str) and message else _summary(error, secrets)
    return None


@define
class _Reply:
    payload: Any
    error: str | None


# -- httpx2 → httpx bridge ----------------------------------------------------------------------


def _is_tool_call(body: bytes) -> bool:
    """Whether a POSTed JSON-RPC message may act on Jira (a ``tools/call``, or anything unreadable)."""
    try:
        message = json.loads(body)
    except ValueError:
        return True
    return not isinstance(message, Mapping) or message.get("method") == "tools/call"


def _bridge_transport(
    http: httpx.AsyncClient,
    *,
    policy: RetryPolicy,
    timeout: float,
    sleep: Callable[[float], Awaitable[None]] | None,
    secrets: frozenset[str],
    failures: list[str],
) -> httpx2.AsyncBaseTransport:
    """An ``httpx2`` transport that sends through ``http``.

    POSTs (one JSON-RPC message each) go through the shared retry policy (a ``tools/call`` is retried
    on 429 only: a 503 does not prove the call was not applied) and are buffered, which is
    safe because this client advertises no sampling, elicitation or roots, so no server request
    can arrive on a POST's stream before its reply; other requests (the server-event GET stream,
    the session DELETE) stream. Non-2xx replies are
    summarised into ``failures`` so an error names the HTTP status.
    """
    import httpx2

    call_policy = attrs.evolve(policy, retry_statuses=policy.retry_statuses & {429})

    class RawStream(httpx2.AsyncByteStream):
        """An upstream ``httpx`` response body, handed to ``httpx2`` undecoded."""

        def __init__(self, response: httpx.Response) -> None:
            self._response = response

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._response.aiter_raw():
                yield chunk

        async def aclose(self) -> None:
            await self._response.aclose()

    class Bridge(httpx2.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            body = await request.aread()
            headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() not in ("host", "content-length")]
            url = str(request.url)
            if request.method == "POST":
                chosen = call_policy if _is_tool_call(body) else policy
                response = await send_with_retry(
                    http, "POST", url, policy=chosen, timeout=timeout, sleep=sleep, headers=headers, content=body
                )
                if not response.is_success:
                    failures.append(f"jira-mcp status {response.status_code}: {summarize_body(response.text, secrets)}")
                kept = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DROPPED_HEADERS]
                return httpx2.Response(response.status_code, headers=kept, content=response.content)
            upstream = await http.send(
                http.build_request(request.method, url, headers=headers, content=body or None, timeout=timeout),
                stream=True,
            )
            return httpx2.Response(
                upstream.status_code, headers=upstream.headers.multi_items(), stream=RawStream(upstream)
            )

    return Bridge()


# -- the client ---------------------------------------------------------------------------------


class _Session:
    """One connected MCP session; every call goes to the configured tool names."""

    def __init__(self, client: Client, owner: JiraMcpClient) -> None:
        self._client = client
        self._owner = owner

    async def call(self, operation: str, arguments: Mapping[str, Any]) -> _Reply:
        """Call the tool for ``operation``; a JSON-RPC error raises, a tool error is returned."""
        from mcp.shared.exceptions import MCPError
        from mcp_types import TextContent

        name = self._owner.options.mcp.tool_name(operation)
        args = {key: value for key, value in arguments.items() if value is not None}
        self._owner.http_failures.clear()
        try:
            result = await self._client.call_tool(name, args)
        except MCPError as exc:
            raise self._owner.protocol_error(exc) from exc
        text = "\n".join(part.text for part in result.content if isinstance(part, TextContent)).strip()
        payload: Any
        if text:
            try:
                payload = json.loads(text)
            except ValueError:
                payload = text
        elif result.structured_content is not None:
            payload = result.structured_content
        else:
            payload = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        error = payload_error(payload, self._owner.secrets)
        if error is None and result.is_error:
            error = text or "tool call failed"
        return _Reply(payload=payload, error=error)

    async def call_ok(self, operation: str, arguments: Mapping[str, Any]) -> Any:
        """``call`` for operations without fallbacks: a tool-reported error raises."""
        reply = await self.call(operation, arguments)
        if reply.error is not None:
            raise JiraError(f"jira-mcp error: {redact_text(reply.error, self._owner.secrets)}")
        return reply.payload


class JiraMcpClient:
    """One Jira site through a remote MCP server (``tracker.mcp``), over ``http``.

    Each public method opens one MCP session (``initialize`` → calls → close).
    """

    def __init__(
        self,
        options: JiraOptions,
        http: httpx.AsyncClient,
        *,
        secrets: Iterable[str] = (),
        pagination: PaginationLimits | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        self.options = options
        self.secrets = frozenset((*secrets, *options.credentials()))
        self._http = http
        self._pagination = pagination or PaginationLimits()
        self._retry = retry or RetryPolicy()
        self._timeout = timeout
        self._sleep = sleep
        self.http_failures: list[str] = []

    # -- session ----------------------------------------------------------------------------

    def _headers(self) -> dict[str, str]:
        headers: dict[str, str] = {}
        if self.options.mcp.token:
            headers["authorization"] = f"Bearer {self.options.mcp.token}"
        for key, value in self.options.mcp.headers.items():
            # Configured headers win, whatever their spelling.
            for existing in [k for k in headers if k.lower() == key.lower()]:
                del headers[existing]
            headers[key] = value
        return headers

    def protocol_error(self, exc: BaseException) -> JiraError:
        """The redacted error for a failed exchange, naming the HTTP status when there was one."""
        if self.http_failures:
            return JiraError(self.http_failures[-1])
        from mcp_types import REQUEST_TIMEOUT

        if getattr(getattr(exc, "error", None), "code", None) == REQUEST_TIMEOUT and self.options.mcp.url:
            # The SDK's own read timeout (the same limit) may fire before the HTTP one: name the host all the same.
            return JiraError(describe_timeout("jira-mcp", self.options.mcp.url, self._timeout))
        message = getattr(getattr(exc, "error", None), "message", None) or str(exc) or type(exc).__name__
        return JiraError(f"jira-mcp error: {redact_text(str(message), self.secrets)}")

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[_Session]:
        url = self.options.mcp.url
        if not url:
            raise JiraError("tracker.mcp.url is required for jira-mcp tracker")
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp_types import Implementation

        from . import __version__

        self.http_failures.clear()
        transport = _bridge_transport(
            self._http,
            policy=self._retry,
            timeout=self._timeout,
            sleep=self._sleep,
            secrets=self.secrets,
            failures=self.http_failures,
        )
        async with (
            httpx2.AsyncClient(transport=transport, headers=self._headers(), timeout=self._timeout) as h2,
            Client(
                streamable_http_client(url, http_client=h2),
                mode="legacy",  # the initialize handshake every deployed MCP server expects
                read_timeout_seconds=self._timeout,
                client_info=Implementation(name="lorenz-jira", version=__version__),
                cache=None,
            ) as client,
        ):
            yield _Session(client, self)

    async def _run(self, operation: Callable[[_Session], Awaitable[T]]) -> T:
        """Run ``operation`` in a fresh session; any failure becomes a redacted :class:`JiraError`."""
        try:
            async with self._session() as session:
                return await operation(session)
        except (JiraError, PaginationError):
            raise
        except Exception as exc:
            leaf: BaseException = exc
            while isinstance(leaf, BaseExceptionGroup) and leaf.exceptions:
                leaf = leaf.exceptions[0]
            if isinstance(leaf, JiraError | PaginationError):
                raise leaf from exc
            if isinstance(leaf, httpx.HTTPError):
                detail = redact_text(str(leaf) or type(leaf).__name__, self.secrets)
                failed = f"jira-mcp request failed: {type(leaf).__name__}: {detail}"
                raise JiraError(timeout_message(leaf, "jira-mcp") or failed) from exc
            raise self.protocol_error(leaf) from exc

    # -- normalisation ----------------------------------------------------------------------

    def _issue(self, record: object) -> Issue | None:
        if not isinstance(record, Mapping):
            return None
        try:
            if isinstance(record.get("fields"), Mapping) or "key" in record:
                return normalize_jira_issue(record, assignee_filter(self.options), self.options.api_base)
            return normalize_issue(record, assignee_filter(self.options))
        except ValueError:
            return None

    def _first_issue(self, payload: object) -> Issue | None:
        candidates: list[object] = []
        if isinstance(payload, Mapping):
            candidates += [payload.get("issue"), payload]
        elif isinstance(payload, list) and payload:
            candidates.append(payload[0])
        for candidate in candidates:
            if (issue := self._issue(candidate)) is not None:
                return issue
        return None

    @staticmethod
    def _comment(record: object) -> TrackerComment | None:
        if not isinstance(record, Mapping):
            return None
        if isinstance(record.get("id"), int) and not isinstance(record.get("id"), bool):
            record = {**record, "id": str(record["id"])}
        try:
            return normalize_jira_comment(record)
        except ValueError:
            return None

    @classmethod
    def _comments(cls, payload: object) -> list[TrackerComment]:
        listing = payload if isinstance(payload, list) else None
        for path in _COMMENT_PATHS:
            if listing is not None:
                break
            found = _at(payload, path)
            listing = found if isinstance(found, list) else None
        return [c for c in map(cls._comment, listing or []) if c is not None]

    @classmethod
    def _returned_comment(cls, payload: object) -> TrackerComment | None:
        if isinstance(payload, Mapping):
            if (comment := cls._comment(payload.get("comment"))) is not None:
                return comment
            if "id" in payload and "body" in payload:
                return cls._comment(payload)
        if isinstance(payload, list):
            comments = cls._comments(payload)
            return comments[0] if comments else None
        return None

    # -- issues -----------------------------------------------------------------------------

    async def _search(self, session: _Session, jql: str) -> list[Issue]:
        payload = await session.call_ok("search", {"jql": jql, "fields": list(JIRA_FIELDS)})
        records: object = payload
        if not isinstance(records, list):
            for path in (("issues",), ("rows",), ("data", "issues")):
                found = _at(payload, path)
                if isinstance(found, list):
                    records = found
                    break
        listing = records if isinstance(records, list) else []
        guard = self._pagination.guard("jira", "mcpSearchIssues")
        guard.record_items(len(listing))
        return [issue for issue in map(self._issue, listing) if issue is not None]

    async def search_issues(self, jql: str) -> list[Issue]:
        """Issues ``jql`` matches (one call, no paging; unreadable entries skipped)."""
        return await self._run(lambda session: self._search(session, jql))

    async def fetch_candidate_issues(self) -> list[Issue]:
        return await self.search_issues(candidate_jql(self.options))

    async def fetch_issues_by_states(self, states: Sequence[str]) -> list[Issue]:
        jql = states_jql(self.options, states)
        return [] if jql is None else await self.search_issues(jql)

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        """One read per id (or a key search when no read tool is configured), in request order."""
        unique = list(dict.fromkeys(str(i) for i in ids))
        if not unique:
            return []
        read_tool = self.options.mcp.tools.get("readIssue", DEFAULT_MCP_TOOLS["readIssue"])

        async def by_reads(session: _Session) -> list[Issue]:
            from lorenz import report_progress

            issues: list[Issue] = []
            for done, key in enumerate(unique, start=1):
                reply = await session.call("readIssue", {"issueIdOrKey": key, "issueId": key, "key": key})
                issue = None if reply.error is not None else self._first_issue(reply.payload)
                if issue is not None:
                    issues.append(issue)
                if len(unique) > 1:  # one remote call per id: say how far the reads got
                    await report_progress(done, len(unique), f"read {done} of {len(unique)} issues")
            return issues

        if read_tool.strip():
            return await self._run(by_reads)
        jql = by_ids_jql(unique)
        return [] if jql is None else sort_by_requested(await self.search_issues(jql), unique)

    async def read_issue(self, key: str) -> Issue:
        async def read(session: _Session) -> Issue:
            payload = await session.call_ok("readIssue", {"issueIdOrKey": key, "issueId": key, "key": key})
            issue = self._first_issue(payload)
            if issue is None:
                raise JiraError("jira-mcp read issue returned no issue")
            return issue

        return await self._run(read)

    async def update_issue_status(self, key: str, status: str) -> Issue:
        async def update(session: _Session) -> Issue:
            ref = {"issueIdOrKey": key, "issueId": key, "key": key}
            payload = await session.call_ok("updateStatus", {**ref, "status": status})
            issue = self._first_issue(payload)
            if issue is not None:
                return issue
            reread = self._first_issue(await session.call_ok("readIssue", ref))
            if reread is None:
                raise JiraError("jira-mcp read issue returned no issue")
            return reread

        return await self._run(update)

    async def create_issue(self, new: NewIssue) -> Issue:
        assignee = explicit_assignee(new.assignee, self.options.assignee)
        arguments: dict[str, Any] = {
            "projectKey": self.options.project_keys[0] if self.options.project_keys else None,
            "issueType": self.options.issue_type,
            "title": new.title,
            "summary": new.title,
            "body": new.body,
            "description": new.body,
            "status": new.status,
        }
        if assignee is not None:
            arguments.update(assignee=assignee, assigneeId=assignee, assigneeAccountId=assignee)

        async def create(session: _Session) -> Issue:
            issue = self._first_issue(await session.call_ok("createIssue", arguments))
            if issue is None:
                raise JiraError("jira-mcp create issue returned no issue")
            return issue

        return await self._run(create)

    # -- comments: servers disagree on argument names, so try each spelling in turn ----------

    async def _first_accepted(
        self,
        operation: str,
        label: str,
        shapes: Iterable[Mapping[str, Any]],
        session: _Session,
        *,
        creates: bool = False,
    ) -> Any:
        failures: list[str] = []
        for arguments in shapes:
            try:
                reply = await session.call(operation, arguments)
            except JiraError as exc:
                if creates and self.http_failures:
                    # An HTTP failure is no refusal: the call may have been applied, another spelling would repeat it.
                    raise
                failures.append(str(exc))
                continue
            if reply.error is None:
                return reply.payload
            failures.append(redact_text(reply.error, self.secrets))
        raise JiraError(f"jira-mcp {label} failed: {'; '.join(failures)}")

    async def list_comments(self, key: str) -> list[TrackerComment]:
        shapes = [{ref: key} for ref in _ISSUE_REFS]

        async def listing(session: _Session) -> list[TrackerComment]:
            return self._comments(await self._first_accepted("listComments", "list comments", shapes, session))

        return await self._run(listing)

    async def add_comment(self, key: str, body: str) -> TrackerComment | None:
        """The created comment; ``None`` when the server confirms without an id."""
        shapes = [{ref: key, field: body} for field in _COMMENT_BODY_KEYS for ref in _ISSUE_REFS]

        async def add(session: _Session) -> TrackerComment | None:
            payload = await self._first_accepted("comment", "add comment", shapes, session, creates=True)
            if (comment := self._returned_comment(payload)) is not None:
                return comment
            comment_id: object = None
            if isinstance(payload, Mapping):
                comment_id = next(
                    (payload[k] for k in ("id", "commentId", "comment_id") if payload.get(k) not in (None, "")), None
                )
            elif isinstance(payload, str) and (match := _COMMENT_ID_TEXT.search(payload)) is not None:
                comment_id = match.group(1)
            return TrackerComment(id=str(comment_id), body=body) if comment_id is not None else None

        return await self._run(add)

    async def update_comment(self, key: str, comment_id: str, body: str) -> TrackerComment:
        shapes = [
            {ref: key, id_key: comment_id, field: body}
            for field in _COMMENT_BODY_KEYS
            for id_key in _COMMENT_ID_KEYS
            for ref in _ISSUE_REFS
        ]

        async def update(session: _Session) -> TrackerComment:
            payload = await self._first_accepted("updateComment", "update comment", shapes, session)
            return self._returned_comment(payload) or TrackerComment(id=comment_id, body=body)

        return await self._run(update)
