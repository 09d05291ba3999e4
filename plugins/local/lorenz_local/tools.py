"""The ``local`` tool pack: five tools an agent uses to work a board.

The board store (:mod:`.store`, with the YAML parser) loads on the first call, not when the plugin
registers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from lorenz import (
    Settings,
    ToolContext,
    ToolResult,
    ToolSpec,
    apply_query,
    as_arguments,
    error_message,
    optional_str,
    parse_query_spec,
    parse_select,
    pick_fields,
    query_input_properties,
    require_str,
    tool_failure,
    tool_success,
    unsupported_tool_failure,
)
from lorenz.authoring import (
    ArgumentError,
    CallContext,
    ErrorContract,
    Pack,
    Tool,
    ToolFailure,
    hints,
    tool,
    unstructure,
)

from .files import IssueNotFoundError, NotRegularFileError, os_error_text
from .models import (
    BOARD_UNAVAILABLE,
    ISSUE_NOT_FOUND,
    MALFORMED_ISSUE,
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
from .options import pack_board_config, validate_pack_options
from .paths import resolve_board_dir

if TYPE_CHECKING:
    from .store import BoardStore

__all__ = [
    "DEFAULT_SELECT",
    "ISSUE_ID",
    "QUERY_PROPERTIES",
    "TOOL_NAMES",
    "LocalToolPack",
    "board_store",
    "local_tool_specs",
    "local_tools",
    "object_schema",
    "run_local_tool",
    "string_schema",
]

DEFAULT_SELECT = ("id", "title", "state", "stateType", "labels")
_ROW_FIELDS = "id, identifier, title, description, state, stateType, labels, createdAt, updatedAt"


def string_schema(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def object_schema(properties: Mapping[str, Any], *required: str) -> dict[str, Any]:
    """A strict inputSchema: a key the tool does not take is refused, not silently dropped."""
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    return schema


ISSUE_ID = string_schema("Board issue id: the board's id prefix plus a number, e.g. BOARD-12.")
QUERY_PROPERTIES = query_input_properties(
    f"Row fields to return (default {', '.join(DEFAULT_SELECT)}); also description, identifier, "
    'createdAt, updatedAt, and "comments" for each issue\'s comment lines.'
)
TOOL_NAMES: tuple[str, ...] = (
    "local_update_status",
    "local_comment",
    "local_create_issue",
    "local_read_issue",
    "local_query",
)


def local_tool_specs() -> list[ToolSpec]:
    """The pack's tools as advertised, in their fixed order."""
    return [entry.spec() for entry in local_tools()]


def board_store(settings: Settings) -> BoardStore:
    """The store the pack works on: ``tools.local``, else the ``local`` tracker's board, else
    ``.lorenz/local`` under the working directory (live cwd and environment)."""
    from .store import BoardStore

    cwd = os.getcwd()
    # One settings object serves every call of a snapshot: its store is looked up by identity
    # (the entry keeps it alive, so its id is not reused while the entry stands).
    known = _STORES.get((id(settings), cwd))
    if known is not None and known[0] is settings:
        return known[1]
    config = pack_board_config(settings)
    directory = resolve_board_dir(config.path, cwd=cwd, env=os.environ)
    store = BoardStore(directory, id_prefix=config.id_prefix)
    # A path with $VARS or ~ depends on the live environment too: resolved on every call.
    if config.path is None or not ("$" in config.path or "~" in config.path):
        if len(_STORES) >= _MAX_STORES:
            _STORES.clear()
        _STORES[(id(settings), cwd)] = (settings, store)
    return store


#: Stores by (settings, working directory); a store holds no state of its own.
_STORES: dict[tuple[int, str], tuple[Settings, BoardStore]] = {}
_MAX_STORES = 64


def _update_status(store: BoardStore, args: Mapping[str, Any]) -> Any:
    issue_id = require_str(args, "issueId")
    status = require_str(args, "status")
    return {"issue": store.update_status(issue_id, status).to_record()}


def _comment(store: BoardStore, args: Mapping[str, Any]) -> Any:
    issue_id = require_str(args, "issueId")
    body = require_str(args, "body")
    store.append_comment(issue_id, body)
    return {"ok": True}


def _create_issue(store: BoardStore, args: Mapping[str, Any]) -> Any:
    title = require_str(args, "title")
    issue = store.create(title, body=optional_str(args, "body"), status=optional_str(args, "status"))
    return {"issue": issue.to_record()}


def _read_issue(store: BoardStore, args: Mapping[str, Any]) -> Any:
    return _read_reply(store.read_content(require_str(args, "issueId")))


def _read_reply(content: dict[str, Any]) -> dict[str, Any]:
    comments = content.pop("comments")
    return {"issue": content, "comments": comments}


def _query(store: BoardStore, args: Mapping[str, Any]) -> Any:
    spec = parse_query_spec(args)
    select = parse_select(args.get("select"))
    fields: Sequence[str] = DEFAULT_SELECT if select is None else select
    records, skipped = store.records()
    result = apply_query(records, spec)
    rows = [pick_fields(record, fields) for record in result.rows]
    if "labels" in fields:  # records are shared with the cache: hand out copies of the lists
        for row in rows:
            if "labels" in row:
                row["labels"] = list(row["labels"])
    if "comments" in fields:
        for row, record in zip(rows, result.rows, strict=True):
            row["comments"] = store.read_content(record["id"])["comments"]
    return {"rows": rows, "total": result.total, "skipped": [item.to_dict() for item in skipped]}


_HANDLERS: dict[str, Callable[[BoardStore, Mapping[str, Any]], Any]] = {
    "local_update_status": _update_status,
    "local_comment": _comment,
    "local_create_issue": _create_issue,
    "local_read_issue": _read_issue,
    "local_query": _query,
}


def run_local_tool(name: str, args: Any, settings: Settings) -> ToolResult:
    """Run one tool synchronously (blocking file I/O). Never raises."""
    handler = _HANDLERS.get(name)
    if handler is None:
        return unsupported_tool_failure(name, TOOL_NAMES)
    try:
        store = board_store(settings)
        return tool_success(handler(store, as_arguments(args)))
    except IssueNotFoundError as exc:
        return _declared(ISSUE_NOT_FOUND, os_error_text(exc))
    except NotRegularFileError as exc:
        return _declared(MALFORMED_ISSUE, os_error_text(exc))
    except OSError as exc:  # the store words its own; anything else must not leak a path either
        return _declared(BOARD_UNAVAILABLE, os_error_text(exc))
    except Exception as exc:
        if _is_malformed(exc):
            return _declared(MALFORMED_ISSUE, error_message(exc))
        return tool_failure(error_message(exc))


def _declared(contract: ErrorContract, message: str) -> ToolResult:
    """A failure the tools declare: the same ``error`` string, plus reason, retryable and recovery."""
    return ToolFailure.of(contract, message).to_result()


def _is_malformed(exc: Exception) -> bool:
    from .store import MalformedIssueError

    return isinstance(exc, MalformedIssueError)


_STORE_MODULE = f"{__package__}.store"


def _cached_read(args: Any, settings: Settings) -> ToolResult | None:
    """``local_read_issue`` of a file parsed before and unchanged since: one ``lstat``, so it is
    answered on the event loop; a thread hop would cost more than the read. ``None`` otherwise
    (a bad argument included: the full path words the error)."""
    if _STORE_MODULE not in sys.modules:  # the first call imports the store: in the thread
        return None
    try:
        content = board_store(settings).cached_content(as_arguments(args).get("issueId"))
    except Exception:
        return None
    return tool_success(_read_reply(content)) if content is not None else None


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
    args = as_arguments(raw)
    try:
        parse_query_spec(args)
        parse_select(args.get("select"))
    except Exception as exc:
        return tool_failure(error_message(exc))
    return None


async def _board(name: str, ctx: CallContext, args: Any) -> ToolResult:
    from lorenz import run_in_thread

    given = {key: value for key, value in unstructure(args).items() if value is not None}
    # File I/O (and fsync) blocks: keep it off the event loop serving other agents.
    result: ToolResult = await run_in_thread(run_local_tool, name, given, ctx.settings)
    return result


_CLOSED = {"openWorldHint": False}
_ID_ERRORS = (ISSUE_NOT_FOUND, MALFORMED_ISSUE, BOARD_UNAVAILABLE)


@tool(
    name="local_update_status",
    title="Update issue status",
    description="Move a local board issue to a new status. Args: issueId, status.",
    input=StatusArgs,
    output=IssueRecord,
    input_schema=object_schema(
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
    input_schema=object_schema(
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
    input_schema=object_schema(
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
    input_schema=object_schema({"issueId": ISSUE_ID}, "issueId"),
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
        f'max 1000), offset. Row fields: {_ROW_FIELDS}; add "comments" to select for each '
        "issue's comment lines. Returns {rows, total, skipped}."
    ),
    input=QueryArgs,
    output=QueryResult,
    input_schema=object_schema(QUERY_PROPERTIES),
    argument_errors=_query_refusal,
    annotations=hints(read_only=True, idempotent=True, open_world=False),
    errors=(MALFORMED_ISSUE, BOARD_UNAVAILABLE),
)
async def query(ctx: CallContext, args: QueryArgs) -> Any:
    return await _board("local_query", ctx, args)


def local_tools() -> tuple[Tool[Any, Any], ...]:
    """The typed tools, in their fixed order."""
    return (update_status, comment, create_issue, read_issue, query)


class LocalToolPack(Pack):
    """Pack ``local``: ``local_update_status``, ``local_comment``, ``local_create_issue``,
    ``local_read_issue``, ``local_query``."""

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

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        if name == "local_read_issue" and (cached := _cached_read(input, context.settings)) is not None:
            return cached
        return await super().execute_tool(name, input, context)
