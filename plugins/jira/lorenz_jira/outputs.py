"""What the ``jira_*`` tools return: one output class per result shape, the JSON Schemas of the issue,
row and comment records inside them, and the text (the pretty JSON the pack has always answered).

The records stay the core's wire dicts (``Issue.to_record``, ``TrackerComment.to_record``), which
leave some keys out when they have no value; ``schema`` describes them for ``outputSchema``.
"""

from __future__ import annotations

from typing import Any

import attrs
from attrs import field, frozen

from lorenz import plain_text
from lorenz.authoring import describe

__all__ = ["Comment", "CommentAdded", "Comments", "IssueOut", "Rows", "pretty"]

#: A wire record: JSON values by camelCase key (its schema is given with ``schema``).
Record = dict[str, str | int | bool | list[Any] | None]

_STRING = {"type": "string"}
_TEXT = {"type": ["string", "null"]}
_STATE_TYPE = {"type": "string", "enum": ["backlog", "unstarted", "started", "completed", "canceled", "triage"]}
_LABELS = {"type": "array", "items": _STRING}

_REF = {
    "type": "object",
    "description": "A blocking issue; keys without a value are left out.",
    "properties": {"id": _STRING, "identifier": _STRING, "state": _STRING, "stateType": _STATE_TYPE},
}

ISSUE_RECORD: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": _STRING,
        "identifier": _STRING,
        "title": _STRING,
        "description": _TEXT,
        "state": _STRING,
        "stateType": _STATE_TYPE,
        "labels": _LABELS,
        "blockers": {"type": "array", "items": _REF},
        "branchName": _TEXT,
        "url": _TEXT,
        "priority": {"type": ["integer", "null"]},
        "createdAt": _TEXT,
        "updatedAt": _TEXT,
        "issueEventCursor": _TEXT,
        "assigneeId": _TEXT,
        "assignedToWorker": {"type": "boolean"},
    },
    "required": ["id", "identifier", "title", "state", "stateType", "labels", "blockers", "assignedToWorker"],
}

_ROW_FIELDS = ("id", "identifier", "title", "description", "state", "stateType", "labels", "createdAt", "updatedAt")
#: A query row: only the selected fields the row has (``select`` may name fields it lacks).
ROW: dict[str, Any] = {
    "type": "object",
    "properties": {name: ISSUE_RECORD["properties"][name] for name in (*_ROW_FIELDS, "url")},
}

COMMENT_RECORD: dict[str, Any] = {
    "type": "object",
    "description": "A comment; author, createdAt, updatedAt and url are left out when unknown.",
    "properties": {
        "id": _STRING,
        "body": {"type": "string", "description": "The comment text (Markdown)."},
        "author": _STRING,
        "createdAt": _STRING,
        "updatedAt": _STRING,
        "url": _STRING,
    },
    "required": ["id", "body"],
}


@frozen(kw_only=True)
class IssueOut:
    issue: Record = field(
        metadata=describe("The issue (key, title, status, labels, blockers, url, ...).", schema=ISSUE_RECORD)
    )


@frozen(kw_only=True)
class Rows:
    rows: list[Record] = field(
        metadata=describe(
            "One row per matching issue, after where, order_by, offset and limit, with the selected fields.",
            schema={"type": "array", "items": ROW},
        )
    )


@frozen(kw_only=True)
class Comments:
    comments: list[Record] = field(
        metadata=describe("The issue's comments, oldest first.", schema={"type": "array", "items": COMMENT_RECORD})
    )


@frozen(kw_only=True)
class CommentAdded:
    ok: bool = field(metadata=describe("Always true: the comment was added."))
    comment: Record | None = field(
        default=None,
        metadata=describe(
            "The created comment, when the backend returns it (absent otherwise).",
            schema=COMMENT_RECORD,
            omit_none=True,
        ),
    )


@frozen(kw_only=True)
class Comment:
    comment: Record = field(metadata=describe("The comment as it is now.", schema=COMMENT_RECORD))


def pretty(output: Any) -> str:
    """The text of a result: its wire form as indented JSON, byte for byte what the host renders
    for a plain result."""
    # The fields already hold plain JSON values: no converter pass needed.
    data = attrs.asdict(output, recurse=False)
    if isinstance(output, CommentAdded) and output.comment is None:
        del data["comment"]
    return plain_text(data)
