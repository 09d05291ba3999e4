"""What the ``local`` tools take and answer, as typed classes, and how they fail.

The input classes are the arguments as structured (the advertised ``inputSchema`` stays the one the
pack has always published); the output classes give each tool its ``outputSchema``.
"""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

from lorenz import query_input_properties, string_schema
from lorenz.authoring import ErrorContract, describe

__all__ = [
    "BOARD_UNAVAILABLE",
    "DEFAULT_SELECT",
    "ISSUE_ID",
    "QUERY_PROPERTIES",
    "ROW_FIELDS",
    "ISSUE_NOT_FOUND",
    "MALFORMED_ISSUE",
    "CommentArgs",
    "Commented",
    "CreateArgs",
    "IssueArgs",
    "IssueContent",
    "IssueRecord",
    "QueryArgs",
    "QueryResult",
    "ReadIssue",
    "StatusArgs",
]

_ID = "Board issue id: the board's id prefix plus a number, e.g. BOARD-12."

# The advertised inputSchema pieces (the board operations in :mod:`.tools` use the same defaults).
DEFAULT_SELECT = ("id", "title", "state", "stateType", "labels")
ROW_FIELDS = "id, identifier, title, description, state, stateType, labels, createdAt, updatedAt"
ISSUE_ID = string_schema(_ID)
QUERY_PROPERTIES = query_input_properties(
    f"Row fields to return (default {', '.join(DEFAULT_SELECT)}); also description, identifier, "
    'createdAt, updatedAt, and "comments" for each issue\'s comment lines.'
)

ISSUE_NOT_FOUND = ErrorContract(
    reason="not_found",
    when="No issue file with this id is on the board.",
    recovery="Call local_query to list the board's issue ids, then retry with one of them.",
    code=-32001,
)
MALFORMED_ISSUE = ErrorContract(
    reason="malformed_issue",
    when="The issue's file is on the board but cannot be parsed (front matter, encoding, file kind).",
    recovery="Fix the issue file by hand (local_query lists it under skipped with the parse error).",
)
BOARD_UNAVAILABLE = ErrorContract(
    reason="board_unavailable",
    when="The board directory cannot be read or written (permissions, a full disk, a held lock).",
    recovery="Retry shortly; if it persists, check the directory set by tools.local.path is writable.",
    retryable=True,
)


# Attributes are snake_case; ``wire=`` keeps the published camelCase argument names.
@frozen(kw_only=True)
class StatusArgs:
    issue_id: str = field(metadata=describe(_ID, wire="issueId"))
    status: str = field(metadata=describe("The new status name, e.g. 'In Progress' or 'Done'."))


@frozen(kw_only=True)
class CommentArgs:
    issue_id: str = field(metadata=describe(_ID, wire="issueId"))
    body: str = field(metadata=describe("Comment text."))


@frozen(kw_only=True)
class CreateArgs:
    title: str = field(metadata=describe("Issue title, one line."))
    body: str | None = field(default=None, metadata=describe("Issue description (Markdown)."))
    status: str | None = field(default=None, metadata=describe("Initial status name (default Todo)."))


@frozen(kw_only=True)
class IssueArgs:
    issue_id: str = field(metadata=describe(_ID, wire="issueId"))


@frozen(kw_only=True)
class QueryArgs:
    """The query envelope; the query DSL checks its parts (and words what it refuses)."""

    where: Any = field(default=None, metadata=describe("Filter."))
    select: Any = field(default=None, metadata=describe("Row fields to return."))
    order_by: Any = field(default=None, metadata=describe("Sort keys."))
    limit: Any = field(default=None, metadata=describe("Rows to return."))
    offset: Any = field(default=None, metadata=describe("Rows to skip."))


@frozen(kw_only=True)
class IssueRecord:
    issue: dict[str, Any] = field(
        metadata=describe(
            "The issue as a tracker record: id, identifier, title, description, state, stateType, "
            "labels, createdAt, updatedAt, ..."
        )
    )


@frozen(kw_only=True)
class Commented:
    ok: bool = field(metadata=describe("true: the comment line was appended."))


@frozen(kw_only=True)
class IssueContent:
    id: str = field(metadata=describe("The board issue id."))
    status: str = field(metadata=describe("The raw status name, as written in the file."))
    title: str = field(metadata=describe("The issue title."))
    description: str = field(metadata=describe("The issue body (Markdown), empty when none."))


@frozen(kw_only=True)
class ReadIssue:
    issue: IssueContent = field(metadata=describe("The issue's status, title and description."))
    comments: list[str] = field(metadata=describe("Comment lines, oldest first ('- <time> agent: <body>')."))


@frozen(kw_only=True)
class QueryResult:
    rows: list[dict[str, Any]] = field(metadata=describe("The matching rows, with the selected fields."))
    total: int = field(metadata=describe("Matching issues before limit and offset."))
    skipped: list[dict[str, Any]] = field(
        metadata=describe("Issue files that could not be parsed: {id, error} each; the query still answers.")
    )
