"""The operations of an OpenAPI document, and the curation that picks which become tools:
``--include``/``--exclude`` (operation ids, tags or path globs), ``--max-tools``, deprecated
operations only when asked, and a refusal, listing the operations by tag, when a large API is
mirrored whole."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from .load import OpenAPIError

__all__ = ["MAX_UNCURATED", "Operation", "TooManyOperations", "by_tag", "json_schema_of", "operations", "select"]

METHODS = ("get", "put", "post", "delete", "patch", "head")
#: Above this many operations, a selection is required: agents do badly with hundreds of tools.
MAX_UNCURATED = 30


class TooManyOperations(OpenAPIError):
    """More operations than a pack should mirror and no selection: the message lists them by tag."""


@frozen(kw_only=True)
class Operation:
    method: str
    path: str
    operation_id: str | None
    tags: tuple[str, ...]
    summary: str
    description: str
    deprecated: bool
    parameters: tuple[Mapping[str, Any], ...]
    body: Mapping[str, Any] | None  # the request body's JSON schema
    body_required: bool
    responses: Mapping[str, Any]
    #: Its security requirements: alternatives, each the names of the schemes it needs together
    #: (an empty one: no credential needed).
    security: tuple[tuple[str, ...], ...]

    @property
    def label(self) -> str:
        return f"{self.method.upper()} {self.path}" + (f" ({self.operation_id})" if self.operation_id else "")


def json_schema_of(content: Any) -> Mapping[str, Any] | None:
    if not isinstance(content, Mapping):
        return None
    for media, entry in content.items():
        if str(media).split(";")[0].strip() == "application/json" or str(media).endswith("+json"):
            schema = (entry or {}).get("schema")
            return schema if isinstance(schema, Mapping) else {}
    return None


def operations(document: Mapping[str, Any]) -> list[Operation]:
    """Every operation, in document order."""
    out = []
    top_security = document.get("security")
    for path, item in (document.get("paths") or {}).items():
        if not isinstance(item, Mapping):
            continue
        shared = list(item.get("parameters") or ())
        for method in METHODS:
            op = item.get(method)
            if not isinstance(op, Mapping):
                continue
            own = list(op.get("parameters") or ())
            keys = {(p.get("name"), p.get("in")) for p in own}
            params = [p for p in shared if (p.get("name"), p.get("in")) not in keys] + own
            body = op.get("requestBody") or {}
            security = op.get("security", top_security) or ()
            out.append(
                Operation(
                    method=method,
                    path=str(path),
                    operation_id=op.get("operationId"),
                    tags=tuple(str(t) for t in op.get("tags") or ()),
                    summary=str(op.get("summary") or "").strip(),
                    description=str(op.get("description") or "").strip(),
                    deprecated=bool(op.get("deprecated")),
                    parameters=tuple(p for p in params if p.get("in") in ("path", "query", "header")),
                    body=json_schema_of(body.get("content")),
                    body_required=bool(body.get("required")),
                    responses=op.get("responses") or {},
                    security=tuple(tuple(map(str, req)) for req in security if isinstance(req, Mapping)),
                )
            )
    return out


def _matches(op: Operation, pattern: str) -> bool:
    if pattern == op.operation_id or pattern in op.tags:
        return True
    return pattern.startswith("/") and fnmatch.fnmatchcase(op.path, pattern)


def by_tag(ops: Sequence[Operation]) -> str:
    """The operations listed under their first tag, for a person choosing ``--include``."""
    groups: dict[str, list[str]] = {}
    for op in ops:
        groups.setdefault(op.tags[0] if op.tags else "(untagged)", []).append(op.label)
    return "\n".join(f"  {tag} ({len(labels)}): " + ", ".join(labels) for tag, labels in groups.items())


def select(
    ops: Sequence[Operation],
    *,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    max_tools: int | None = None,
    deprecated: bool = False,
) -> list[Operation]:
    """The operations that become tools; ``OpenAPIError`` when the choice is empty or too large."""
    chosen = [op for op in ops if deprecated or not op.deprecated]
    if include:
        unknown = [p for p in include if not any(_matches(op, p) for op in ops)]
        if unknown:
            raise OpenAPIError(f"--include {', '.join(unknown)}: no operation id, tag or path matches")
        chosen = [op for op in chosen if any(_matches(op, p) for p in include)]
    chosen = [op for op in chosen if not any(_matches(op, p) for p in exclude)]
    if not chosen:
        raise OpenAPIError("no operation is selected: check --include/--exclude (deprecated ones need --deprecated)")
    if max_tools is not None and len(chosen) > max_tools:
        raise OpenAPIError(
            f"{len(chosen)} operations are selected, more than --max-tools {max_tools}; narrow the selection:\n"
            + by_tag(chosen)
        )
    if not include and not exclude and max_tools is None and len(chosen) > MAX_UNCURATED:
        raise TooManyOperations(
            f"the document has {len(chosen)} operations: choose the ones agents need with --include "
            f"(operation ids, tags or path globs), --exclude or --max-tools:\n" + by_tag(chosen)
        )
    return chosen
