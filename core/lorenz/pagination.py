"""Bounds on a backend's paging loop: :class:`PaginationGuard` stops one that a misbehaving server
would keep going forever (too many pages or items, a bad or repeated cursor), raising
:class:`PaginationError`; :class:`PaginationLimits` configures a client's guards."""

from __future__ import annotations

import json

import attrs

__all__ = ["PaginationError", "PaginationGuard", "PaginationLimits"]


class PaginationError(RuntimeError):
    """A paging loop broke a limit or the server returned a bad/repeated cursor.

    ``code`` is the message prefix, e.g. ``jira_pagination_page_limit_exceeded``.
    """

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code


_DEFAULT_MAX_PAGES = 100
_DEFAULT_MAX_ITEMS = 5000
_CURSOR_JSON_LIMIT = 120
_CURSOR_JSON_KEEP = 117


def _limit(value: object, default: int) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and value > 0:
        return value
    return default


def _is_count(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return value.is_integer() and value >= 0
    return isinstance(value, int) and value >= 0


def _render(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@attrs.frozen(kw_only=True)
class PaginationLimits:
    """How far any one paging loop of a client may go; a backend's clients take one of these."""

    max_pages: int = 100
    max_items: int = 5000

    def guard(self, tracker: str, resource: str) -> PaginationGuard:
        """A fresh guard for one paging loop under these limits."""
        return PaginationGuard(tracker, resource, max_pages=self.max_pages, max_items=self.max_items)


class PaginationGuard:
    """Counts pages, items and cursors of one paging loop and raises :class:`PaginationError` on abuse.

    ``PaginationGuard("jira", "search", max_pages=100, max_items=5000)``; non-positive or non-integer
    limits fall back to those defaults. Call :meth:`record_page` per page fetched, :meth:`record_items`
    with each page's item count, and pass each next-page cursor through :meth:`next_cursor`.
    """

    __slots__ = ("_cursors", "items", "max_items", "max_pages", "pages", "resource", "tracker")

    def __init__(self, tracker: str, resource: str, max_pages: object = 100, max_items: object = 5000) -> None:
        self.tracker = tracker
        self.resource = resource
        self.max_pages = _limit(max_pages, _DEFAULT_MAX_PAGES)
        self.max_items = _limit(max_items, _DEFAULT_MAX_ITEMS)
        self.pages = 0
        self.items = 0
        self._cursors: set[str] = set()

    def _error(self, kind: str, detail: str) -> PaginationError:
        return PaginationError(f"{self.tracker}_pagination_{kind}", f"{self.resource} {detail}")

    def record_page(self) -> None:
        """Count one more page; over ``max_pages`` raises ``<tracker>_pagination_page_limit_exceeded``."""
        self.pages += 1
        if self.pages > self.max_pages:
            raise self._error("page_limit_exceeded", f"pages={self.pages} max_pages={self.max_pages}")

    def record_items(self, n: object) -> None:
        """Add ``n`` items; a bad count or a total above ``max_items`` raises :class:`PaginationError`."""
        if not _is_count(n):
            raise self._error("invalid_item_count", f"count={_render(n)}")
        self.items += int(n)  # type: ignore[call-overload]
        if self.items > self.max_items:
            raise self._error("item_limit_exceeded", f"items={self.items} max_items={self.max_items}")

    def next_cursor(self, value: object, name: str) -> str:
        """Return ``value`` if it is a non-empty string not seen before in this loop, else raise."""
        if not isinstance(value, str) or not value:
            raise self._error("malformed_cursor", f"{name} must be a non-empty string")
        if value in self._cursors:
            rendered = json.dumps(value, ensure_ascii=False)
            if len(rendered) > _CURSOR_JSON_LIMIT:
                rendered = rendered[:_CURSOR_JSON_KEEP] + '..."'
            raise self._error("repeated_cursor", f"{name}={rendered} was returned more than once")
        self._cursors.add(value)
        return value
