"""The seven ``jira_*`` tools as typed tools of the authoring kit, over whichever Jira transport
(REST or a remote MCP server) the settings name. Every backend failure becomes a declared one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from lorenz import Issue, apply_query, pick_fields, query_echo
from lorenz.authoring import CallContext, Pack, Tool, hints, tool

from .backend import JiraBackend, NewIssue
from .failures import classify, contracts
from .inputs import (
    INPUT_SCHEMAS,
    CommentArgs,
    CreateArgs,
    IssueArgs,
    QueryArgs,
    StatusArgs,
    UpdateCommentArgs,
    argument_errors,
    reader,
)
from .outputs import Comment, CommentAdded, Comments, IssueOut, Rows, pretty
from .tracker import open_backend

__all__ = ["KIT_PACK", "TOOLS"]

T = TypeVar("T")

# Every tool reaches a Jira site outside this host: open-world. Reads change nothing.
_READ = hints(read_only=True, idempotent=True, open_world=True)


async def _jira(ctx: CallContext, operation: Callable[[JiraBackend], Awaitable[T]]) -> T:
    """``operation`` on the configured backend; what it raises becomes a declared failure."""
    try:
        return await operation(open_backend(ctx.settings, ctx.http))
    except Exception as exc:
        raise classify(exc) from exc


def _tool(
    name: str, title: str, description: str, **kwargs: Any
) -> Callable[[Callable[[CallContext, Any], Awaitable[Any]]], Tool[Any, Any]]:
    return tool(
        name=name,
        title=title,
        description=description,
        errors=contracts(name),
        format=pretty,
        input_schema=INPUT_SCHEMAS[name],
        read_arguments=reader(name),
        argument_errors=argument_errors,
        **kwargs,
    )


@_tool(
    "jira_read_issue",
    "Read Jira issue",
    "Read one issue from the configured tracker. Args: issueId (tracker id or key when supported).",
    input=IssueArgs,
    output=IssueOut,
    annotations=_READ,
)
async def read_issue(ctx: CallContext, args: IssueArgs) -> IssueOut:
    issue = await _jira(ctx, lambda jira: jira.read_issue(args.issue_id))
    return IssueOut(issue=issue.to_record())


@_tool(
    "jira_query",
    "Query Jira issues",
    "Query issues from the configured tracker. Args: states?, issueIds?, query? (native query string, "
    "for trackers with a query language), where?, select?, order_by?, limit?, offset?.",
    input=QueryArgs,
    output=Rows,
    annotations=_READ,
    enrichment=True,
)
async def query(ctx: CallContext, args: QueryArgs) -> Rows:
    issues: list[Issue] = []
    if args.issue_ids is not None:
        ids = args.issue_ids
        issues = await _jira(ctx, lambda jira: jira.fetch_issues_by_ids(ids))
    elif args.jql is not None:
        jql = args.jql
        issues = await _jira(ctx, lambda jira: jira.search_issues(jql))
    elif args.states is not None:
        states = args.states
        issues = await _jira(ctx, lambda jira: jira.fetch_issues_by_states(states))
    elif ctx.settings.tracker.active_states:
        issues = await _jira(ctx, lambda jira: jira.fetch_candidate_issues())
    spec = args.spec
    result = apply_query([issue.to_query_row() for issue in issues], spec)
    if args.shaped or args.jql is not None:
        echo: dict[str, Any] = {"query": args.jql} if args.jql is not None else {}
        ctx.enrich.echo({**echo, **query_echo(spec)})
    if not result.rows:
        candidates = bool(ctx.settings.tracker.active_states)
        notice = _empty_notice(args, fetched=len(issues), total=result.total, offset=spec.offset, candidates=candidates)
        if notice:
            ctx.enrich.notice(notice)
    ctx.enrich.total(result.total)
    return Rows(rows=[pick_fields(row, args.select) for row in result.rows])


def _empty_notice(args: QueryArgs, *, fetched: int, total: int, offset: int, candidates: bool) -> str | None:
    """Why a query found no row, and what to try."""
    if total:
        return f"offset {offset} is past the {total} matching rows; call again with a smaller offset."
    if fetched:
        return f"{fetched} issues were found but none matched where; loosen or drop the filter."
    if args.issue_ids is not None:
        return "No issue matched these issueIds; check the keys (e.g. ENG-123), or search with query."
    if args.jql is not None:
        return "The JQL matched no issue these credentials can see; loosen it, or list issues by status with states."
    if args.states is not None:
        return (
            "No issue in the configured scope (tracker jql or projects) has one of these statuses; "
            "check their names as Jira shows them, e.g. 'In Progress'."
        )
    if candidates:
        return (
            "No issue in the configured scope is in one of the active states (tracker.active_states); "
            "pass states or query to look further."
        )
    # No arguments and no tracker.active_states: the bare empty answer is what callers have always
    # had (and what they test for), so it gets no notice.
    return None


@_tool(
    "jira_update_status",
    "Move Jira issue to a status",
    "Move an issue in the configured tracker to a new status. Args: issueId, status.",
    input=StatusArgs,
    output=IssueOut,
    # A status change is recorded in the issue's history, not lost; moving twice changes nothing more.
    annotations=hints(read_only=False, destructive=False, idempotent=True, open_world=True),
)
async def update_status(ctx: CallContext, args: StatusArgs) -> IssueOut:
    issue = await _jira(ctx, lambda jira: jira.update_issue_status(args.issue_id, args.status))
    return IssueOut(issue=issue.to_record())


@_tool(
    "jira_list_comments",
    "List Jira comments",
    "List comments on an issue in the configured tracker. Args: issueId.",
    input=IssueArgs,
    output=Comments,
    annotations=_READ,
)
async def list_comments(ctx: CallContext, args: IssueArgs) -> Comments:
    comments = await _jira(ctx, lambda jira: jira.list_comments(args.issue_id))
    return Comments(comments=[comment.to_record() for comment in comments])


@_tool(
    "jira_comment",
    "Comment on Jira issue",
    "Add a comment to an issue in the configured tracker. Args: issueId, body. "
    "Returns the created comment when the provider exposes it.",
    input=CommentArgs,
    output=CommentAdded,
    annotations=hints(read_only=False, destructive=False, idempotent=False, open_world=True),
)
async def comment(ctx: CallContext, args: CommentArgs) -> CommentAdded:
    added = await _jira(ctx, lambda jira: jira.add_comment(args.issue_id, args.body))
    return CommentAdded(ok=True, comment=None if added is None else added.to_record())


@_tool(
    "jira_update_comment",
    "Edit Jira comment",
    "Update a comment on an issue in the configured tracker. Args: issueId, commentId, body.",
    input=UpdateCommentArgs,
    output=Comment,
    # The new body replaces the old text, which is gone.
    annotations=hints(read_only=False, destructive=True, idempotent=True, open_world=True),
)
async def update_comment(ctx: CallContext, args: UpdateCommentArgs) -> Comment:
    updated = await _jira(ctx, lambda jira: jira.update_comment(args.issue_id, args.comment_id, args.body))
    return Comment(comment=updated.to_record())


@_tool(
    "jira_create_issue",
    "Create Jira issue",
    "Create an issue in the configured tracker. Args: title, body?, status?, assignee?.",
    input=CreateArgs,
    output=IssueOut,
    annotations=hints(read_only=False, destructive=False, idempotent=False, open_world=True),
)
async def create_issue(ctx: CallContext, args: CreateArgs) -> IssueOut:
    new = NewIssue(title=args.title, body=args.body, status=args.status, assignee=args.assignee)
    issue = await _jira(ctx, lambda jira: jira.create_issue(new))
    return IssueOut(issue=issue.to_record())


#: The tools in the order ``tools/list`` shows them.
TOOLS = (read_issue, query, update_status, list_comments, comment, update_comment, create_issue)


class _KitPack(Pack):
    """The typed tools as a kit pack that, like the pack before the kit, ignores ``tools.jira``."""

    def parse_options(self, raw: Mapping[str, Any] | None) -> Any:
        return {}


#: The pack of the typed tools; :class:`~lorenz_jira.tools.JiraToolPack` serves it.
KIT_PACK = _KitPack(name="jira", tools=TOOLS, description="Read, query, move, comment on and create Jira issues.")
