"""The ``jira_*`` tools' arguments: the typed input classes, the readers that build them from raw
arguments (in the wording the pack used before the authoring kit), and the advertised input schemas.

The schemas stay hand-written: clients and tests pin them as they were (no dialect stamp, optional
strings as plain ``string``), which the kit's generated schemas do not reproduce.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from attrs import field, frozen

from lorenz import (
    ArgumentError,
    ToolResult,
    check_list_argument,
    error_message,
    optional_str,
    parse_query_spec,
    parse_select,
    query_input_properties,
    require_str,
    strict_object_schema,
    string_array_schema,
    string_schema,
    tool_failure,
)
from lorenz.authoring import CallContext, describe

from .names import DEFAULT_SELECT

__all__ = [
    "INPUT_SCHEMAS",
    "CommentArgs",
    "CreateArgs",
    "IssueArgs",
    "QueryArgs",
    "StatusArgs",
    "UpdateCommentArgs",
    "argument_errors",
    "reader",
]

_KEY = "Jira issue key such as ENG-123, or numeric issue id such as 10001."


@frozen(kw_only=True)
class IssueArgs:
    issue_id: str = field(metadata=describe(_KEY))


@frozen(kw_only=True)
class StatusArgs:
    issue_id: str = field(metadata=describe(_KEY))
    status: str = field(metadata=describe("Target status: the name of an available workflow transition."))


@frozen(kw_only=True)
class CommentArgs:
    issue_id: str = field(metadata=describe(_KEY))
    body: str = field(metadata=describe("Comment text in Markdown."))


@frozen(kw_only=True)
class UpdateCommentArgs:
    issue_id: str = field(metadata=describe(_KEY))
    comment_id: str = field(metadata=describe("Jira comment id, e.g. 10042."))
    body: str = field(metadata=describe("The comment's new full text in Markdown."))


@frozen(kw_only=True)
class CreateArgs:
    title: str = field(metadata=describe("Issue summary (one line)."))
    body: str | None = field(default=None, metadata=describe("Issue description in Markdown."))
    status: str | None = field(default=None, metadata=describe("Status to move the new issue to."))
    assignee: str | None = field(default=None, metadata=describe("Jira accountId to assign, or 'me'."))


@frozen(kw_only=True)
class QueryArgs:
    """``jira_query`` as read: one route (ids, JQL, states or the configured candidates) and the DSL."""

    issue_ids: list[str] | None = field(default=None, metadata=describe("Issue keys or ids to fetch."))
    jql: str | None = field(default=None, metadata=describe("The JQL to search with (query, else jql)."))
    states: list[str] | None = field(default=None, metadata=describe("Status names to list issues in."))
    select: list[str] = field(factory=lambda: list(DEFAULT_SELECT), metadata=describe("Row fields to return."))
    #: The parsed ``where``/``order_by``/``limit``/``offset`` (a :class:`lorenz.QuerySpec`).
    spec: Any = field(default=None, metadata=describe("The parsed where, order_by, limit and offset."))
    #: Whether the call gave a filter or an order, worth echoing back as parsed.
    shaped: bool = field(default=False, metadata=describe("Whether where or order_by was given."))


def _string_list(args: Mapping[str, Any], key: str) -> list[str] | None:
    """``args[key]`` as a list of strings (``None`` when absent), within the DSL's list bounds:
    each becomes a JQL ``in (…)`` list or, over MCP, one remote call per id."""
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, list):
        raise ArgumentError("expected an array of strings")
    check_list_argument(key, value)
    if not all(isinstance(item, str) for item in value):
        raise ArgumentError("expected an array of strings")
    return list(value)


def _query(args: Mapping[str, Any]) -> QueryArgs:
    """``issueIds`` → by ids; ``query``/``jql`` → search; ``states`` → by states; else candidates
    (checked in this order, the first problem wins, as before the kit)."""
    selected = parse_select(args.get("select"))
    ids = _string_list(args, "issueIds")
    query, jql = args.get("query"), args.get("jql")
    native = query if isinstance(query, str) else jql if isinstance(jql, str) else ""
    searching = ids is None and bool(native.strip())
    states = _string_list(args, "states") if ids is None and not searching else None
    spec = parse_query_spec(args)
    return QueryArgs(
        issue_ids=ids,
        jql=native if searching else None,
        states=states,
        select=list(DEFAULT_SELECT) if selected is None else selected,
        spec=spec,
        shaped=args.get("where") is not None or "order_by" in args,
    )


def _new_issue(args: Mapping[str, Any]) -> CreateArgs:
    return CreateArgs(
        title=require_str(args, "title"),
        body=optional_str(args, "body"),
        status=optional_str(args, "status"),
        assignee=optional_str(args, "assignee"),
    )


_READERS: dict[str, Callable[[Mapping[str, Any]], Any]] = {
    "jira_read_issue": lambda a: IssueArgs(issue_id=require_str(a, "issueId")),
    "jira_query": _query,
    "jira_update_status": lambda a: StatusArgs(issue_id=require_str(a, "issueId"), status=require_str(a, "status")),
    "jira_list_comments": lambda a: IssueArgs(issue_id=require_str(a, "issueId")),
    "jira_comment": lambda a: CommentArgs(issue_id=require_str(a, "issueId"), body=require_str(a, "body")),
    "jira_update_comment": lambda a: UpdateCommentArgs(
        issue_id=require_str(a, "issueId"), comment_id=require_str(a, "commentId"), body=require_str(a, "body")
    ),
    "jira_create_issue": _new_issue,
}


def reader(name: str) -> Callable[[CallContext, Mapping[str, Any]], Any]:
    """The ``read_arguments`` hook of tool ``name``: its input instance, or an ``ArgumentError``
    whose message names the argument, as the pack has always worded it."""
    read = _READERS[name]

    def read_arguments(ctx: CallContext, raw: Mapping[str, Any]) -> Any:
        try:
            return read(raw)
        except ArgumentError:
            raise
        except Exception as exc:  # a QueryError: its message names the argument too
            raise ArgumentError(error_message(exc)) from exc

    return read_arguments


def argument_errors(raw: Any, exc: ArgumentError) -> ToolResult:
    """A refusal as the pack has always answered it: the bare message in ``{"error": {"message"}}``
    (the pack redacts it on the way out)."""
    return tool_failure(error_message(exc))


_ISSUE_ID = string_schema(_KEY)
_BODY = string_schema("Comment text in Markdown.")

#: The advertised inputSchema of each tool, by name.
INPUT_SCHEMAS: Mapping[str, Mapping[str, Any]] = {
    "jira_read_issue": strict_object_schema({"issueId": _ISSUE_ID}, "issueId"),
    "jira_query": strict_object_schema(
        {
            "states": string_array_schema(
                "Status names, e.g. ['To Do', 'In Progress']: issues in the configured scope (tracker jql or "
                "projects) with one of them. Used when neither issueIds nor query is given."
            ),
            "issueIds": string_array_schema(
                "Issue keys (ENG-123) or numeric ids to fetch; overrides query and states."
            ),
            "query": string_schema(
                "JQL query string, e.g. 'project = ENG AND status = \"In Progress\"' (alias: jql); overrides states."
            ),
            "jql": string_schema("Alias of query, used when query is not given."),
            **query_input_properties(
                f"Row fields to return (default {', '.join(DEFAULT_SELECT)}); also description, createdAt, updatedAt."
            ),
        },
    ),
    "jira_update_status": strict_object_schema(
        {
            "issueId": _ISSUE_ID,
            "status": string_schema(
                "Target status as the name of an available workflow transition (usually the status name, "
                "e.g. 'In Progress'); case-insensitive."
            ),
        },
        "issueId",
        "status",
    ),
    "jira_list_comments": strict_object_schema({"issueId": _ISSUE_ID}, "issueId"),
    "jira_comment": strict_object_schema({"issueId": _ISSUE_ID, "body": _BODY}, "issueId", "body"),
    "jira_update_comment": strict_object_schema(
        {
            "issueId": _ISSUE_ID,
            "commentId": string_schema("Jira comment id, e.g. 10042: a comment's id from jira_list_comments."),
            "body": string_schema("The comment's new full text in Markdown; replaces the old text."),
        },
        "issueId",
        "commentId",
        "body",
    ),
    "jira_create_issue": strict_object_schema(
        {
            "title": string_schema("Issue summary (one line)."),
            "body": string_schema("Issue description in Markdown; omit for none."),
            "status": string_schema(
                "Status to move the new issue to, e.g. 'In Progress'; omit to keep the workflow's initial one."
            ),
            "assignee": string_schema(
                "Jira accountId to assign; 'me' for the authenticated account; omit for the configured assignee."
            ),
        },
        "title",
    ),
}
