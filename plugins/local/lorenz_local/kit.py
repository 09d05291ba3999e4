"""The ``local`` tools on :mod:`lorenz.authoring`: typed input and output, annotations, declared
failures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from lorenz import (
    ToolResult,
    as_arguments,
    error_message,
    plain_text,
    require_str,
    strict_object_schema,
    string_schema,
    tool_failure,
)
from lorenz.authoring import ArgumentError, CallContext, FormattedResult, Pack, Tool, hints, tool, unstructure

from .models import (
    BOARD_UNAVAILABLE,
    DEFAULT_SELECT,
    ISSUE_ID,
    ISSUE_NOT_FOUND,
    MALFORMED_ISSUE,
    QUERY_PROPERTIES,
    ROW_FIELDS,
    CommentArgs,
    Commented,
    CreateArgs,
    IssueArgs,
    IssueRecord,
    QueryArgs,
    QueryResult,
    ReadIssue,
    StatusArgs,
)
from .options import validate_pack_options

__all__ = ["TypedLocalPack", "local_tools"]

# -- the typed tools -------------------------------------------------------------------------------
# Each runs the board code above in a thread and returns its result as is: the payload already has
# the output class's shape (the host checks it against the outputSchema), and the host renders it as
# the same pretty-JSON text the pack has always answered, with no second encoding on the way.


def _required(*keys: str) -> Callable[[Any, ArgumentError], ToolResult | None]:
    """Refused arguments worded as the pack always has: ``'<key>' is required``."""

    def word(raw: Any, error: ArgumentError) -> ToolResult | None:
        args = as_arguments(raw)
        for key in keys:
            try:
                require_str(args, key)
            except ArgumentError as exc:
                return tool_failure(error_message(exc))
        return None

    return word


def _query_refusal(raw: Any, error: ArgumentError) -> ToolResult | None:
    """A query the kit refuses is worded by the query DSL where it words the problem, as before."""
    from lorenz import parse_query_spec, parse_select  # the query DSL: on the first call, not when listing

    args = as_arguments(raw)
    try:
        parse_query_spec(args)
        parse_select(args.get("select"))
    except Exception as exc:
        return tool_failure(error_message(exc))
    return None


async def _board(name: str, ctx: CallContext, args: Any) -> ToolResult:
    from lorenz import run_in_thread  # anyio: on the first call, not when listing

    from . import tools as board  # the board operations: on the first call, not when listing

    given = {key: value for key, value in unstructure(args).items() if value is not None}
    # File I/O (and fsync) blocks: keep it off the event loop serving other agents.
    result: ToolResult = await run_in_thread(board.run_local_tool, name, given, ctx.settings)
    return result


_ID_ERRORS = (ISSUE_NOT_FOUND, MALFORMED_ISSUE, BOARD_UNAVAILABLE)


@tool(
    name="local_update_status",
    title="Update issue status",
    description="Move a local board issue to a new status. Args: issueId, status.",
    input=StatusArgs,
    output=IssueRecord,
    input_schema=strict_object_schema(
        {
            "issueId": ISSUE_ID,
            "status": string_schema("The new status name, e.g. 'In Progress' or 'Done' (non-blank, free text)."),
        },
        "issueId",
        "status",
    ),
    argument_errors=_required("issueId", "status"),
    # Replaces the status (not additive); setting the same status again changes nothing more.
    annotations=hints(read_only=False, destructive=True, idempotent=True, open_world=False),
    errors=_ID_ERRORS,
)
async def update_status(ctx: CallContext, args: StatusArgs) -> Any:
    return await _board("local_update_status", ctx, args)


@tool(
    name="local_comment",
    title="Comment on issue",
    description="Append a comment to a local board issue. Args: issueId, body.",
    input=CommentArgs,
    output=Commented,
    input_schema=strict_object_schema(
        {
            "issueId": ISSUE_ID,
            "body": string_schema("Comment text; stored as a timestamped '- <time> agent: <body>' line."),
        },
        "issueId",
        "body",
    ),
    argument_errors=_required("issueId", "body"),
    annotations=hints(read_only=False, destructive=False, idempotent=False, open_world=False),
    errors=_ID_ERRORS,
)
async def comment(ctx: CallContext, args: CommentArgs) -> Any:
    return await _board("local_comment", ctx, args)


@tool(
    name="local_create_issue",
    title="Create issue",
    description="Create a new local board issue. Args: title, body?, status?.",
    input=CreateArgs,
    output=IssueRecord,
    input_schema=strict_object_schema(
        {
            "title": string_schema("Issue title, one line (line breaks become spaces)."),
            "body": string_schema("Issue description (Markdown); omit for none."),
            "status": string_schema("Initial status name, e.g. 'Todo' (the default when omitted or blank)."),
        },
        "title",
    ),
    argument_errors=_required("title"),
    annotations=hints(read_only=False, destructive=False, idempotent=False, open_world=False),
    errors=(BOARD_UNAVAILABLE,),
)
async def create_issue(ctx: CallContext, args: CreateArgs) -> Any:
    return await _board("local_create_issue", ctx, args)


@tool(
    name="local_read_issue",
    title="Read issue",
    description="Read a local board issue: its current status, title, description, and comments.",
    input=IssueArgs,
    output=ReadIssue,
    input_schema=strict_object_schema({"issueId": ISSUE_ID}, "issueId"),
    argument_errors=_required("issueId"),
    annotations=hints(read_only=True, idempotent=True, open_world=False),
    errors=_ID_ERRORS,
)
async def read_issue(ctx: CallContext, args: IssueArgs) -> Any:
    return await _board("local_read_issue", ctx, args)


@tool(
    name="local_query",
    title="Query board",
    description=(
        "Query the local board (read-only). Args (all optional): where (filter: "
        "{field, op, value} with op eq/ne/lt/lte/gt/gte/in/nin/contains/exists, or "
        "{and: [...]}/{or: [...]}/{not: ...}), select (fields, default "
        f"{list(DEFAULT_SELECT)}), order_by ([{{field, dir: asc|desc}}]), limit (default 100, "
        f'max 1000), offset. Row fields: {ROW_FIELDS}; add "comments" to select for each '
        "issue's comment lines. Returns {rows, total, skipped}."
    ),
    input=QueryArgs,
    output=QueryResult,
    input_schema=strict_object_schema(QUERY_PROPERTIES),
    argument_errors=_query_refusal,
    annotations=hints(read_only=True, idempotent=True, open_world=False),
    errors=(MALFORMED_ISSUE, BOARD_UNAVAILABLE),
    # The output's own 'total' is the count before limit/offset: only echo and notice are added.
    enrichment=("echo", "notice"),
)
async def query(ctx: CallContext, args: QueryArgs) -> Any:
    from lorenz import parse_query_spec, parse_select, query_echo  # the query DSL: on the first call, not when listing

    result = await _board("local_query", ctx, args)
    data = result.result
    if not result.success or not isinstance(data, dict):
        return result
    given = {key: value for key, value in unstructure(args).items() if value is not None}
    spec = parse_query_spec(given)  # the board accepted it: this parse cannot fail
    select = parse_select(given.get("select"))
    ctx.enrich.echo({**query_echo(spec), "select": list(DEFAULT_SELECT) if select is None else select})
    if not data["rows"]:
        ctx.enrich.notice(_empty_notice(data, spec.offset, filtered=spec.where is not None))
    # The text is the pretty JSON the tool always answered; echo and notice are structured only.
    return FormattedResult(success=True, result={**data, **ctx.enrich.values}, text=plain_text(data))


def _empty_notice(data: Mapping[str, Any], offset: int, *, filtered: bool) -> str:
    """Why a query found no row, and what to try."""
    total, skipped = data["total"], len(data["skipped"])
    if total:
        return f"offset {offset} is past the {total} matching issues; call again with a smaller offset."
    unread = f" ({skipped} issue files could not be read: see skipped)" if skipped else ""
    if filtered:
        return f"No issue matched where{unread}; loosen the filter, or drop it to list every issue."
    return f"The board has no issues{unread}; create one with local_create_issue."


def local_tools() -> tuple[Tool[Any, Any], ...]:
    """The typed tools, in their fixed order."""
    return (update_status, comment, create_issue, read_issue, query)


class TypedLocalPack(Pack):
    """The ``local`` pack as the kit runs it (:class:`lorenz_local.tools.LocalToolPack` delegates here)."""

    # The host checks arguments against the published inputSchema, wording refusals as it always has.
    validates_arguments: ClassVar[bool] = False

    def __init__(self) -> None:
        super().__init__(name="local", tools=local_tools(), description="A Markdown-file issue board.")

    def parse_options(self, raw: Mapping[str, Any] | None) -> Any:
        """Check ``tools.local`` (keys ``path``, ``idPrefix``/``id_prefix``); handlers read the
        board from the settings (:func:`board_store`), so the mapping is kept as given."""
        options = dict(raw or {})
        validate_pack_options(options)
        return options
