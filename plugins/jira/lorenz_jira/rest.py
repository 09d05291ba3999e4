"""The Jira Cloud REST v3 client (Basic auth, enhanced JQL search with ``nextPageToken``)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import attrs
import httpx

from lorenz import (
    DEFAULT_TIMEOUT,
    Issue,
    PaginationGuard,
    RetryPolicy,
    TrackerComment,
    redact_text,
    send_with_retry,
    summarize_body,
    timeout_message,
)

from .adf import markdown_to_adf
from .backend import JiraError, NewIssue, PaginationLimits, explicit_assignee
from .jql import assignee_filter, by_ids_jql, candidate_jql, states_jql
from .normalize import JIRA_FIELDS, normalize_jira_comment, normalize_jira_issue
from .options import JiraOptions

__all__ = ["JiraRestClient", "sort_by_requested"]

_API = "/rest/api/3"
_SEARCH_PAGE_SIZE = 50
_COMMENT_PAGE_SIZE = 100
_READ_FIELDS = quote(",".join(JIRA_FIELDS), safe="")
# An issue key/id or comment id: `.`/`..` (or any other path syntax) must never reach a URL path.
_PATH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def _key(value: str, argument: str = "issueId") -> str:
    """``value`` as one URL path segment; anything but a plain id raises (before any request)."""
    if _PATH_ID.fullmatch(value) is None:
        raise JiraError(f"invalid {argument}: {json.dumps(value, ensure_ascii=False)}")
    return quote(value, safe="")


def _basic_token(options: JiraOptions) -> str | None:
    """The Basic credential (base64 of ``email:api_key``), when both are set."""
    if not options.email or not options.api_key:
        return None
    return base64.b64encode(f"{options.email}:{options.api_key}".encode()).decode("ascii")


def _records(value: object) -> list[Mapping[str, Any]]:
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def sort_by_requested(issues: Iterable[Issue], ids: Sequence[str]) -> list[Issue]:
    """``issues`` in the order their id or identifier was requested (unknown ones last)."""
    position = {value: index for index, value in reversed(list(enumerate(ids)))}

    def rank(issue: Issue) -> int:
        return min(position.get(issue.id, len(ids)), position.get(issue.identifier, len(ids)))

    return sorted(issues, key=rank)


class JiraRestClient:
    """One Jira site over REST v3, through the given ``httpx.AsyncClient``.

    Every request has an explicit timeout; 429/503 are retried per ``retry``, except that a
    non-idempotent POST is retried on 429 only (a 503 does not prove it was not applied); every
    error message is redacted with ``secrets`` (plus the configured credentials and Basic token).
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
        self._http = http
        token = _basic_token(options)
        self._secrets = frozenset((*secrets, *options.credentials(), *((token,) if token else ())))
        self._pagination = pagination or PaginationLimits()
        self._retry = retry or RetryPolicy()
        self._write_retry = attrs.evolve(self._retry, retry_statuses=self._retry.retry_statuses & {429})
        self._timeout = timeout
        self._sleep = sleep

    # -- transport --------------------------------------------------------------------------

    def _guard(self, resource: str) -> PaginationGuard:
        return self._pagination.guard("jira", resource)

    def _endpoint(self) -> tuple[str, str]:
        """``(api base, authorization header)``; a missing setting raises in config order."""
        base = self.options.api_base
        if not base:
            raise JiraError("tracker.base_url is required for jira tracker")
        if not self.options.email:
            raise JiraError("tracker.email is required for jira tracker")
        if not self.options.api_key:
            raise JiraError("tracker.api_key is required for jira tracker")
        return base, f"Basic {_basic_token(self.options)}"

    async def _request(self, method: str, path: str, body: object = None) -> Any:
        base, authorization = self._endpoint()
        headers = {"accept": "application/json", "content-type": "application/json", "authorization": authorization}
        kwargs: dict[str, Any] = {"headers": headers}
        if body is not None:
            kwargs["content"] = json.dumps(body, ensure_ascii=False).encode("utf-8")
        # Only the search POST is a read; other POSTs (create, comment, transition) are retried on 429 only.
        replayable = method != "POST" or path == "/search/jql"
        try:
            response = await send_with_retry(
                self._http,
                method,
                f"{base}{_API}{path}",
                policy=self._retry if replayable else self._write_retry,
                timeout=self._timeout,
                sleep=self._sleep,
                **kwargs,
            )
        except httpx.HTTPError as exc:
            detail = redact_text(str(exc) or type(exc).__name__, self._secrets)
            raise JiraError(
                timeout_message(exc, "jira") or f"jira request failed: {type(exc).__name__}: {detail}"
            ) from exc
        return self._decode(response)

    def _decode(self, response: httpx.Response) -> Any:
        text = response.text
        data: Any = None
        invalid: ValueError | None = None
        if text.strip():
            try:
                data = json.loads(text)
            except ValueError as exc:
                invalid = exc
        if not response.is_success:
            # A proxy's HTML error page still reports the status, not a JSON parse failure.
            if data is None:
                shown = text if text.strip() else response.reason_phrase
            else:
                shown = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
            message = f"jira api status {response.status_code}: {summarize_body(shown, self._secrets)}"
            # The response rides along so the tools can classify it (and read its Retry-After).
            cause = httpx.HTTPStatusError(message, request=response.request, response=response)
            raise JiraError(message, status=response.status_code) from cause
        if invalid is not None:
            raise JiraError(f"jira_invalid_json: {invalid}")
        return data

    def _normalize(self, record: Mapping[str, Any]) -> Issue:
        return normalize_jira_issue(record, assignee_filter(self.options), self.options.api_base)

    # -- issues -----------------------------------------------------------------------------

    async def search_issues(self, jql: str, max_results: int = _SEARCH_PAGE_SIZE) -> list[Issue]:
        """Every issue ``jql`` matches, following ``nextPageToken`` under a pagination guard."""
        guard = self._guard("searchIssues")
        issues: list[Issue] = []
        token: str | None = None
        while True:
            guard.record_page()
            body: dict[str, Any] = {"jql": jql, "maxResults": max_results, "fields": list(JIRA_FIELDS)}
            if token is not None:
                body["nextPageToken"] = token
            page = await self._request("POST", "/search/jql", body)
            records = _records(page.get("issues") if isinstance(page, Mapping) else None)
            guard.record_items(len(records))
            issues.extend(self._normalize(record) for record in records)
            next_token = page.get("nextPageToken") if isinstance(page, Mapping) else None
            if next_token is None:
                return issues
            from lorenz import report_progress  # anyio: only a call that reports progress

            await report_progress(len(issues), None, f"{len(issues)} issues so far")
            token = guard.next_cursor(next_token, "nextPageToken")

    async def fetch_candidate_issues(self) -> list[Issue]:
        return await self.search_issues(candidate_jql(self.options))

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        jql = by_ids_jql(ids)
        if jql is None:
            return []
        return sort_by_requested(await self.search_issues(jql), [str(i) for i in ids])

    async def fetch_issues_by_states(self, states: Sequence[str]) -> list[Issue]:
        jql = states_jql(self.options, states)
        return [] if jql is None else await self.search_issues(jql)

    async def read_issue(self, key: str) -> Issue:
        record = await self._request("GET", f"/issue/{_key(key)}?fields={_READ_FIELDS}")
        if not isinstance(record, Mapping):
            raise JiraError(f"jira issue not found: {key}")
        return self._normalize(record)

    async def update_issue_status(self, key: str, status: str) -> Issue:
        """Apply the first transition whose name matches ``status`` (case-insensitive)."""
        path = f"/issue/{_key(key)}/transitions"
        listing = await self._request("GET", path)
        wanted = status.strip().lower()
        transition_id: str | None = None
        for transition in _records(listing.get("transitions") if isinstance(listing, Mapping) else None):
            name = transition.get("name")
            if isinstance(name, str) and name.strip().lower() == wanted:
                candidate = transition.get("id")
                transition_id = candidate if isinstance(candidate, str) and candidate else None
                break
        if transition_id is None:
            raise JiraError(f"jira transition not found for status: {status}")
        await self._request("POST", path, {"transition": {"id": transition_id}})
        return await self.read_issue(key)

    async def create_issue(self, new: NewIssue) -> Issue:
        project = self.options.project_keys[0].strip() if self.options.project_keys else ""
        if not project:
            raise JiraError("tracker.project_keys is required to create Jira issues")
        assignee = explicit_assignee(new.assignee, self.options.assignee)
        if assignee is None:
            me = await self._request("GET", "/myself")
            me = me if isinstance(me, Mapping) else {}
            if isinstance(me.get("accountId"), str) and me["accountId"]:
                account: dict[str, str] = {"accountId": me["accountId"]}
            elif isinstance(me.get("name"), str) and me["name"]:
                account = {"name": me["name"]}
            else:
                raise JiraError("jira current user returned no accountId")
        else:
            account = {"accountId": assignee}
        fields: dict[str, Any] = {
            "project": {"key": project},
            "issuetype": {"name": self.options.issue_type},
            "summary": new.title,
        }
        if new.body is not None:
            fields["description"] = markdown_to_adf(new.body)
        fields["assignee"] = account
        created = await self._request("POST", "/issue", {"fields": fields})
        created = created if isinstance(created, Mapping) else {}
        new_id = next((created[k] for k in ("id", "key") if isinstance(created.get(k), str) and created[k]), None)
        if new_id is None:
            raise JiraError("jira issue create returned no id or key")
        if new.status:
            return await self.update_issue_status(new_id, new.status)
        return await self.read_issue(new_id)

    # -- comments ---------------------------------------------------------------------------

    async def list_comments(self, key: str) -> list[TrackerComment]:
        """Every comment, paging with ``startAt`` until a short page or ``total``."""
        guard = self._guard("comments")
        comments: list[TrackerComment] = []
        start = 0
        while True:
            guard.record_page()
            page = await self._request(
                "GET", f"/issue/{_key(key)}/comment?startAt={start}&maxResults={_COMMENT_PAGE_SIZE}"
            )
            page = page if isinstance(page, Mapping) else {}
            records = _records(page.get("comments"))
            guard.record_items(len(records))
            comments.extend(normalize_jira_comment(record) for record in records)
            total = page.get("total")
            known = total if isinstance(total, int) and not isinstance(total, bool) else None
            if not records or (known is not None and len(comments) >= known):
                return comments
            from lorenz import report_progress  # anyio: only a call that reports progress

            read = (
                f"{len(comments)} of {known} comments read" if known is not None else f"{len(comments)} comments read"
            )
            await report_progress(len(comments), known, read)
            start += len(records)

    async def add_comment(self, key: str, body: str) -> TrackerComment:
        created = await self._request("POST", f"/issue/{_key(key)}/comment", {"body": markdown_to_adf(body)})
        return normalize_jira_comment(created if isinstance(created, Mapping) else {})

    async def update_comment(self, key: str, comment_id: str, body: str) -> TrackerComment:
        updated = await self._request(
            "PUT", f"/issue/{_key(key)}/comment/{_key(comment_id, 'commentId')}", {"body": markdown_to_adf(body)}
        )
        return normalize_jira_comment(updated if isinstance(updated, Mapping) else {})
