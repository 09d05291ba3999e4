"""The ``jira-mcp`` client: Jira through a remote (Atlassian-style) MCP server.

It speaks MCP with the official SDK client (``initialize`` handshake, session header, JSON or
SSE replies) and carries the SDK's ``httpx2`` requests over the host's ``httpx`` client
(:mod:`.mcp_bridge`); :mod:`.mcp_payloads` reads what each server answers.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
from attrs import define

from lorenz import (
    DEFAULT_TIMEOUT,
    Issue,
    PaginationError,
    RetryPolicy,
    TrackerComment,
    describe_timeout,
    redact_text,
    timeout_message,
)

from . import __version__
from .backend import JiraError, NewIssue, PaginationLimits, explicit_assignee
from .jql import by_ids_jql, candidate_jql, states_jql
from .mcp_bridge import bridge_transport
from .mcp_payloads import at_path, comments_from, first_issue, issue_from, payload_error, returned_comment
from .normalize import JIRA_FIELDS
from .options import DEFAULT_MCP_TOOLS, JiraOptions
from .rest import sort_by_requested

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["JiraMcpClient"]

T = TypeVar("T")

_ISSUE_REFS = ("issue_key", "issueKey", "issueIdOrKey", "issueId", "key")
_COMMENT_ID_KEYS = ("comment_id", "commentId", "id")
_COMMENT_BODY_KEYS = ("comment", "body")
_COMMENT_ID_TEXT = re.compile(r"\b(?:comment\s+)?id\s*[:#]\s*([A-Za-z0-9_-]+)", re.IGNORECASE)


# -- the client ---------------------------------------------------------------------------------


@define
class _Reply:
    payload: Any
    error: str | None


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

        self.http_failures.clear()
        transport = bridge_transport(
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

    # -- issues -----------------------------------------------------------------------------

    async def _search(self, session: _Session, jql: str) -> list[Issue]:
        payload = await session.call_ok("search", {"jql": jql, "fields": list(JIRA_FIELDS)})
        records: object = payload
        if not isinstance(records, list):
            for path in (("issues",), ("rows",), ("data", "issues")):
                found = at_path(payload, path)
                if isinstance(found, list):
                    records = found
                    break
        listing = records if isinstance(records, list) else []
        guard = self._pagination.guard("jira", "mcpSearchIssues")
        guard.record_items(len(listing))
        return [issue for record in listing if (issue := issue_from(record, self.options)) is not None]

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
            from lorenz import report_progress  # anyio: only a call that reports progress

            issues: list[Issue] = []
            for done, key in enumerate(unique, start=1):
                reply = await session.call("readIssue", {"issueIdOrKey": key, "issueId": key, "key": key})
                issue = None if reply.error is not None else first_issue(reply.payload, self.options)
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
            issue = first_issue(payload, self.options)
            if issue is None:
                raise JiraError("jira-mcp read issue returned no issue")
            return issue

        return await self._run(read)

    async def update_issue_status(self, key: str, status: str) -> Issue:
        async def update(session: _Session) -> Issue:
            ref = {"issueIdOrKey": key, "issueId": key, "key": key}
            payload = await session.call_ok("updateStatus", {**ref, "status": status})
            issue = first_issue(payload, self.options)
            if issue is not None:
                return issue
            reread = first_issue(await session.call_ok("readIssue", ref), self.options)
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
            issue = first_issue(await session.call_ok("createIssue", arguments), self.options)
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
            return comments_from(await self._first_accepted("listComments", "list comments", shapes, session))

        return await self._run(listing)

    async def add_comment(self, key: str, body: str) -> TrackerComment | None:
        """The created comment; ``None`` when the server confirms without an id."""
        shapes = [{ref: key, field: body} for field in _COMMENT_BODY_KEYS for ref in _ISSUE_REFS]

        async def add(session: _Session) -> TrackerComment | None:
            payload = await self._first_accepted("comment", "add comment", shapes, session, creates=True)
            if (comment := returned_comment(payload)) is not None:
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
            return returned_comment(payload) or TrackerComment(id=comment_id, body=body)

        return await self._run(update)
