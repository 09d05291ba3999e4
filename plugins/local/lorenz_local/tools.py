"""The ``local`` tool pack: five tools an agent uses to work a board.

The board store (:mod:`.store`, with the YAML parser) loads on the first call, not when the plugin
registers.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

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

from .files import os_error_text
from .options import pack_board_config, validate_pack_options
from .paths import resolve_board_dir

if TYPE_CHECKING:
    from .store import BoardStore

__all__ = ["DEFAULT_SELECT", "TOOL_NAMES", "LocalToolPack", "local_tool_specs"]

DEFAULT_SELECT = ("id", "title", "state", "stateType", "labels")
_ROW_FIELDS = "id, identifier, title, description, state, stateType, labels, createdAt, updatedAt"


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _object(properties: Mapping[str, Any], *required: str) -> dict[str, Any]:
    """A strict inputSchema: a key the tool does not take is refused, not silently dropped."""
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    return schema


_ISSUE_ID = _string("Board issue id: the board's id prefix plus a number, e.g. BOARD-12.")
_QUERY_PROPERTIES = query_input_properties(
    f"Row fields to return (default {', '.join(DEFAULT_SELECT)}); also description, identifier, "
    'createdAt, updatedAt, and "comments" for each issue\'s comment lines.'
)
_SPECS = (
    ToolSpec(
        name="local_update_status",
        description="Move a local board issue to a new status. Args: issueId, status.",
        input_schema=_object(
            {
                "issueId": _ISSUE_ID,
                "status": _string("The new status name, e.g. 'In Progress' or 'Done' (non-blank, free text)."),
            },
            "issueId",
            "status",
        ),
    ),
    ToolSpec(
        name="local_comment",
        description="Append a comment to a local board issue. Args: issueId, body.",
        input_schema=_object(
            {
                "issueId": _ISSUE_ID,
                "body": _string("Comment text; stored as a timestamped '- <time> agent: <body>' line."),
            },
            "issueId",
            "body",
        ),
    ),
    ToolSpec(
        name="local_create_issue",
        description="Create a new local board issue. Args: title, body?, status?.",
        input_schema=_object(
            {
                "title": _string("Issue title, one line (line breaks become spaces)."),
                "body": _string("Issue description (Markdown); omit for none."),
                "status": _string("Initial status name, e.g. 'Todo' (the default when omitted or blank)."),
            },
            "title",
        ),
    ),
    ToolSpec(
        name="local_read_issue",
        description="Read a local board issue: its current status, title, description, and comments.",
        input_schema=_object({"issueId": _ISSUE_ID}, "issueId"),
        annotations={"readOnlyHint": True},
    ),
    ToolSpec(
        name="local_query",
        description=(
            "Query the local board (read-only). Args (all optional): where (filter: "
            "{field, op, value} with op eq/ne/lt/lte/gt/gte/in/nin/contains/exists, or "
            "{and: [...]}/{or: [...]}/{not: ...}), select (fields, default "
            f"{list(DEFAULT_SELECT)}), order_by ([{{field, dir: asc|desc}}]), limit (default 100, "
            f'max 1000), offset. Row fields: {_ROW_FIELDS}; add "comments" to select for each '
            "issue's comment lines. Returns {rows, total, skipped}."
        ),
        input_schema=_object(_QUERY_PROPERTIES),
        annotations={"readOnlyHint": True},
    ),
)
TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in _SPECS)


def local_tool_specs() -> list[ToolSpec]:
    """The pack's tools, in their fixed order."""
    return list(_SPECS)


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
    except OSError as exc:  # the store words its own; anything else must not leak a path either
        return tool_failure(os_error_text(exc))
    except Exception as exc:
        return tool_failure(error_message(exc))


class LocalToolPack:
    """Pack ``local``: ``local_update_status``, ``local_comment``, ``local_create_issue``,
    ``local_read_issue``, ``local_query``."""

    name = "local"

    def tool_specs(self, settings: Settings) -> list[ToolSpec]:
        return local_tool_specs()

    def validate_options(self, options: Mapping[str, Any]) -> None:
        """Check ``tools.local`` (keys ``path``, ``idPrefix``/``id_prefix``)."""
        validate_pack_options(options)

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        if name == "local_read_issue" and (cached := _cached_read(input, context.settings)) is not None:
            return cached
        from lorenz import run_in_thread

        # File I/O (and fsync) blocks: keep it off the event loop serving other agents.
        return await run_in_thread(run_local_tool, name, input, context.settings)


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
