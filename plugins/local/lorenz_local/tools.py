"""The ``local`` board operations: what each of the five tools does to a board store.

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
    ToolResult,
    apply_query,
    as_arguments,
    error_message,
    optional_str,
    parse_query_spec,
    parse_select,
    pick_fields,
    require_str,
    tool_failure,
    tool_success,
    unsupported_tool_failure,
)

from .files import IssueNotFoundError, NotRegularFileError, os_error_text
from .models import DEFAULT_SELECT, ISSUE_ID, QUERY_PROPERTIES, ROW_FIELDS
from .options import pack_board_config
from .paths import resolve_board_dir

if TYPE_CHECKING:
    from .store import BoardStore

__all__ = [
    "DEFAULT_SELECT",
    "ISSUE_ID",
    "ROW_FIELDS",
    "QUERY_PROPERTIES",
    "TOOL_NAMES",
    "board_store",
    "cached_read",
    "run_local_tool",
]

TOOL_NAMES: tuple[str, ...] = (
    "local_update_status",
    "local_comment",
    "local_create_issue",
    "local_read_issue",
    "local_query",
)


def board_store(settings: Settings) -> BoardStore:
    """The store the pack works on: ``tools.local``, else the ``local`` tracker's board, else
    ``.lorenz/local`` under the working directory (live cwd and environment)."""
    from .store import BoardStore  # the board store: on first use

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
        return _declared("ISSUE_NOT_FOUND", os_error_text(exc))
    except NotRegularFileError as exc:
        return _declared("MALFORMED_ISSUE", os_error_text(exc))
    except OSError as exc:  # the store words its own; anything else must not leak a path either
        return _declared("BOARD_UNAVAILABLE", os_error_text(exc))
    except Exception as exc:
        if _is_malformed(exc):
            return _declared("MALFORMED_ISSUE", error_message(exc))
        return tool_failure(error_message(exc))


def _declared(contract: str, message: str) -> ToolResult:
    """A failure the tools declare (a contract of :mod:`.models`): the same ``error`` string, plus
    reason, retryable and recovery."""
    from lorenz.authoring import ToolFailure  # lorenz.authoring: only a failed read

    from . import models  # only a failed read

    return ToolFailure.of(getattr(models, contract), message).to_result()


def _is_malformed(exc: Exception) -> bool:
    from .store import MalformedIssueError  # the board store: on first use

    return isinstance(exc, MalformedIssueError)


_STORE_MODULE = f"{__package__}.store"


def cached_read(args: Any, settings: Settings) -> ToolResult | None:
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
