"""Reading a remote Jira MCP server's answers: a tool's error inside a successful reply, and the
issues and comments each server shapes its own way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence

from lorenz import Issue, TrackerComment, normalize_issue, summarize_body

from .jql import assignee_filter
from .normalize import normalize_jira_comment, normalize_jira_issue
from .options import JiraOptions

__all__ = ["at_path", "comments_from", "first_issue", "issue_from", "payload_error", "returned_comment"]

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


def at_path(value: object, path: Sequence[str]) -> object:
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


def issue_from(record: object, options: JiraOptions) -> Issue | None:
    if not isinstance(record, Mapping):
        return None
    try:
        if isinstance(record.get("fields"), Mapping) or "key" in record:
            return normalize_jira_issue(record, assignee_filter(options), options.api_base)
        return normalize_issue(record, assignee_filter(options))
    except ValueError:
        return None


def first_issue(payload: object, options: JiraOptions) -> Issue | None:
    candidates: list[object] = []
    if isinstance(payload, Mapping):
        candidates += [payload.get("issue"), payload]
    elif isinstance(payload, list) and payload:
        candidates.append(payload[0])
    for candidate in candidates:
        if (issue := issue_from(candidate, options)) is not None:
            return issue
    return None


def comment_from(record: object) -> TrackerComment | None:
    if not isinstance(record, Mapping):
        return None
    if isinstance(record.get("id"), int) and not isinstance(record.get("id"), bool):
        record = {**record, "id": str(record["id"])}
    try:
        return normalize_jira_comment(record)
    except ValueError:
        return None


def comments_from(payload: object) -> list[TrackerComment]:
    listing = payload if isinstance(payload, list) else None
    for path in _COMMENT_PATHS:
        if listing is not None:
            break
        found = at_path(payload, path)
        listing = found if isinstance(found, list) else None
    return [c for c in map(comment_from, listing or []) if c is not None]


def returned_comment(payload: object) -> TrackerComment | None:
    if isinstance(payload, Mapping):
        if (comment := comment_from(payload.get("comment"))) is not None:
            return comment
        if "id" in payload and "body" in payload:
            return comment_from(payload)
    if isinstance(payload, list):
        comments = comments_from(payload)
        return comments[0] if comments else None
    return None
