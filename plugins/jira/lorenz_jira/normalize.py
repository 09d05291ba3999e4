"""Jira issues and comments (REST v3 shapes) → the core's normalised records."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from lorenz import Issue, IssueStateType, TrackerComment, default_state_type, normalize_issue

from .adf import adf_to_text

__all__ = [
    "JIRA_FIELDS",
    "NESTED_METADATA_MAX_ITEMS",
    "normalize_jira_comment",
    "normalize_jira_issue",
]

#: The issue fields every search and read asks for.
JIRA_FIELDS: tuple[str, ...] = (
    "summary",
    "description",
    "status",
    "labels",
    "issuelinks",
    "assignee",
    "priority",
    "created",
    "updated",
)
#: Longer ``labels``/``issuelinks`` lists are dropped rather than trusted.
NESTED_METADATA_MAX_ITEMS = 500

_CATEGORY_STATE_TYPES: Mapping[str, IssueStateType] = {
    "new": "unstarted",
    "indeterminate": "started",
    "done": "completed",
}
_PRIORITIES = {"highest": 1, "high": 1, "medium": 2, "low": 3, "lowest": 4}

_log = logging.getLogger("lorenz_jira")


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _category_state_type(status: Mapping[str, Any]) -> IssueStateType | None:
    key = _mapping(status.get("statusCategory")).get("key")
    return _CATEGORY_STATE_TYPES.get(key.strip().lower()) if isinstance(key, str) else None


def _heuristic_state_type(state: str) -> IssueStateType:
    name = state.lower()
    if "cancel" in name:
        return "canceled"
    if any(word in name for word in ("done", "closed", "resolved")):
        return "completed"
    if "backlog" in name:
        return "backlog"
    if "triage" in name:
        return "triage"
    if "todo" in name or "open" in name:
        return "unstarted"
    return "started"


def _bounded(value: object, field: str, key: str) -> list[Any]:
    items = value if isinstance(value, list) else []
    if len(items) > NESTED_METADATA_MAX_ITEMS:
        _log.warning(
            "Jira issue metadata oversized field=%s issue=%s items=%d max_items=%d; dropping nested metadata",
            field,
            key,
            len(items),
            NESTED_METADATA_MAX_ITEMS,
        )
        return []
    return items


def _blockers(links: list[Any]) -> list[dict[str, Any]]:
    blockers: list[dict[str, Any]] = []
    for link in links:
        link = _mapping(link)
        link_type = _mapping(link.get("type"))
        names = [str(link_type.get(k) or "").lower() for k in ("name", "inward")]
        inward = link.get("inwardIssue")
        if not any("block" in name for name in names) or not isinstance(inward, Mapping):
            continue
        status = _mapping(_mapping(inward.get("fields")).get("status"))
        blockers.append(
            {
                "id": inward.get("id"),
                "identifier": inward.get("key"),
                "state": status.get("name"),
                "stateType": _category_state_type(status),
            }
        )
    return blockers


def issue_url(base_url: str | None, key: str) -> str | None:
    """The browser URL of an issue, when the site is known."""
    return f"{base_url.rstrip('/')}/browse/{quote(key, safe='')}" if base_url else None


def normalize_jira_issue(
    issue: Mapping[str, Any], assignee_filter: str | None = None, base_url: str | None = None
) -> Issue:
    """An :class:`Issue` from a Jira issue record (``{id, key, fields: {…}}``).

    Raises ``ValueError`` when the key or the status name is missing.
    """
    key = _text(issue.get("key")) or _text(issue.get("identifier")) or _text(issue.get("id"))
    if key is None:
        raise ValueError("jira issue key is required")
    fields = _mapping(issue.get("fields"))
    raw_status = fields.get("status")
    status = _mapping(raw_status)
    name = status.get("name")
    state = name if isinstance(name, str) else raw_status if isinstance(raw_status, str) else ""
    state_type = _category_state_type(status) or default_state_type(state) or _heuristic_state_type(state)
    description = fields.get("description")
    assignee = _mapping(fields.get("assignee"))
    priority = _mapping(fields.get("priority")).get("name")
    record: dict[str, Any] = {
        "id": _text(issue.get("id")) or key,
        "identifier": key,
        "title": _text(fields.get("summary")) or _text(issue.get("title")) or key,
        "description": _text(adf_to_text(description)) if description is not None else None,
        "state": state,
        "state_type": state_type,
        "labels": _bounded(fields.get("labels"), "labels", key),
        "blockers": _blockers(_bounded(fields.get("issuelinks"), "issuelinks", key)),
        "assignee_id": _text(assignee.get("accountId")) or _text(assignee.get("name")),
        "priority": _PRIORITIES.get(priority.strip().lower()) if isinstance(priority, str) else None,
        "created_at": fields.get("created") or issue.get("createdAt"),
        "updated_at": fields.get("updated") or issue.get("updatedAt"),
        "url": issue_url(base_url, key) or issue.get("url"),
    }
    return normalize_issue(record, assignee_filter)


def normalize_jira_comment(comment: Mapping[str, Any]) -> TrackerComment:
    """A :class:`TrackerComment` from a Jira comment (ADF body); raises without an id."""
    comment_id = comment.get("id")
    if not isinstance(comment_id, str) or not comment_id.strip():
        raise ValueError("jira comment id is required")
    author = _mapping(comment.get("author"))
    body = comment.get("body")

    def text(value: object) -> str | None:
        return value if isinstance(value, str) else None

    return TrackerComment(
        id=comment_id,
        body=adf_to_text(body) if body is not None else "",
        author=text(author.get("accountId")) or text(author.get("displayName")),
        created_at=text(comment.get("created")),
        updated_at=text(comment.get("updated")),
        url=text(comment.get("self")),
    )
