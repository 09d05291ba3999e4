"""Completing Linear's nested connections (an issue's labels and relations, a project's teams and states).

A nested connection arrives with its first page; the rest is fetched page by page. A connection that
breaks a pagination limit, returns a bad cursor or fails to load is *degraded*: the nodes gathered so
far are kept (none if the first page already broke a limit), a warning is logged, and the owner (the
issue or project) is kept rather than dropped.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from attrs import frozen

from lorenz import PaginationError, PaginationLimits, error_message, redact_text

from .transport import logger

__all__ = ["DegradedConnection", "PaginationLimits", "complete_connection", "connection_nodes"]

INVALID_CONNECTION_PAYLOAD = "linear_invalid_connection_payload"

_NO_CURSOR = object()


@frozen(kw_only=True)
class DegradedConnection:
    """A nested connection that could not be completed; ``cursor`` is absent when no page was requested."""

    source: str
    connection: str
    reason: str
    cursor: object = _NO_CURSOR

    def to_record(self) -> dict[str, Any]:
        """``{source, connection, reason, cursor?}``; a present cursor may be ``None``."""
        out: dict[str, Any] = {"source": self.source, "connection": self.connection, "reason": self.reason}
        if self.cursor is not _NO_CURSOR:
            out["cursor"] = self.cursor
        return out


def connection_nodes(value: object) -> list[Any] | None:
    """The ``nodes`` list of a connection payload, or ``None`` when it is not ``{nodes: [...]}``."""
    if isinstance(value, Mapping):
        nodes = value.get("nodes")
        if isinstance(nodes, list):
            return list(nodes)
    return None


def _page_info(value: object) -> Mapping[str, Any]:
    info = value.get("pageInfo") if isinstance(value, Mapping) else None
    return info if isinstance(info, Mapping) else {}


def _degrade(entry: DegradedConnection) -> DegradedConnection:
    suffix = "" if entry.cursor is _NO_CURSOR else " cursor=null" if entry.cursor is None else f" cursor={entry.cursor}"
    logger.warning(
        "linear tracker degraded connection source=%s connection=%s reason=%s%s",
        entry.source,
        entry.connection,
        entry.reason,
        suffix,
    )
    return entry


async def complete_connection(
    initial: object,
    *,
    source: str,
    connection: str,
    fetch_page: Callable[[str], Awaitable[object]],
    limits: PaginationLimits,
    secrets: frozenset[str] = frozenset(),
) -> tuple[list[Any], DegradedConnection | None]:
    """All nodes of ``initial`` plus its follow-up pages (``fetch_page(after)`` returns the connection).

    Returns the nodes and, when the connection could not be completed, why (already logged).
    """
    guard = limits.guard("linear", connection)
    nodes = connection_nodes(initial) or []
    try:
        guard.record_page()
        guard.record_items(len(nodes))
    except PaginationError as exc:
        return [], _degrade(DegradedConnection(source=source, connection=connection, reason=str(exc)))
    page: object = initial
    while _page_info(page).get("hasNextPage") is True:
        end_cursor = _page_info(page).get("endCursor")
        try:
            after = guard.next_cursor(end_cursor, "endCursor")
        except PaginationError as exc:
            entry = DegradedConnection(source=source, connection=connection, reason=str(exc), cursor=end_cursor)
            return nodes, _degrade(entry)
        try:
            guard.record_page()
            page = await fetch_page(after)
        except Exception as exc:  # any failure degrades this connection, never the whole fetch
            reason = redact_text(error_message(exc), secrets)
            return nodes, _degrade(
                DegradedConnection(source=source, connection=connection, reason=reason, cursor=after)
            )
        more = connection_nodes(page)
        if more is None:
            entry = DegradedConnection(
                source=source, connection=connection, reason=INVALID_CONNECTION_PAYLOAD, cursor=after
            )
            return nodes, _degrade(entry)
        try:
            guard.record_items(len(more))
        except PaginationError as exc:
            entry = DegradedConnection(source=source, connection=connection, reason=str(exc), cursor=after)
            return nodes, _degrade(entry)
        nodes.extend(more)
    return nodes, None
