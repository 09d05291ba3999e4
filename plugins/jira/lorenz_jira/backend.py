"""What both Jira transports (REST v3 and a remote MCP server) offer the tracker and the pack."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from attrs import frozen

from lorenz import Issue, PaginationLimits, TrackerComment

__all__ = ["JiraBackend", "JiraError", "NewIssue", "PaginationLimits", "explicit_assignee"]


class JiraError(RuntimeError):
    """A Jira call failed; the message is already redacted. ``status`` is the HTTP status Jira
    answered, when it did (its response is then the ``__cause__``, an ``httpx.HTTPStatusError``)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@frozen(kw_only=True)
class NewIssue:
    """The input of ``create_issue``; blank optionals are ``None``."""

    title: str
    body: str | None = None
    status: str | None = None
    assignee: str | None = None


class JiraBackend(Protocol):
    """One Jira site, reached over REST or MCP."""

    async def search_issues(self, jql: str) -> list[Issue]: ...

    async def fetch_candidate_issues(self) -> list[Issue]: ...

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]: ...

    async def fetch_issues_by_states(self, states: Sequence[str]) -> list[Issue]: ...

    async def read_issue(self, key: str) -> Issue: ...

    async def update_issue_status(self, key: str, status: str) -> Issue: ...

    async def list_comments(self, key: str) -> list[TrackerComment]: ...

    async def add_comment(self, key: str, body: str) -> TrackerComment | None: ...

    async def update_comment(self, key: str, comment_id: str, body: str) -> TrackerComment: ...

    async def create_issue(self, new: NewIssue) -> Issue: ...


def explicit_assignee(requested: str | None, configured: str | None) -> str | None:
    """The account a new issue goes to: the requested one, else the configured one;
    ``None`` for blank, ``me`` or ``currentUser()`` (the caller resolves the current user)."""
    value = (requested or "").strip() or (configured or "").strip()
    return None if value.lower() in ("", "me", "currentuser()") else value
