"""lorenz.pagination.PaginationGuard: page/item limits and cursor checks and the messages they refuse with."""

from __future__ import annotations

import json

import pytest

from lorenz.pagination import PaginationError, PaginationGuard


def test_page_limit() -> None:
    """Pages up to max_pages pass; the next one raises the page-limit error."""
    guard = PaginationGuard("jira", "search", max_pages=2)
    guard.record_page()
    guard.record_page()
    with pytest.raises(PaginationError) as info:
        guard.record_page()
    assert str(info.value) == "jira_pagination_page_limit_exceeded: search pages=3 max_pages=2"
    assert info.value.code == "jira_pagination_page_limit_exceeded"
    assert isinstance(info.value, RuntimeError)


def test_item_limit_is_cumulative() -> None:
    """Item counts add up across pages and the total may not exceed max_items."""
    guard = PaginationGuard("linear", "issues", max_items=10)
    guard.record_items(6)
    guard.record_items(4)
    with pytest.raises(PaginationError, match=r"^linear_pagination_item_limit_exceeded: issues items=11 max_items=10$"):
        guard.record_items(1)


@pytest.mark.parametrize(("count", "rendered"), [(-1, "-1"), (1.5, "1.5"), ("3", "3"), (None, "None")])
def test_invalid_item_count(count: object, rendered: str) -> None:
    """A negative, fractional or non-numeric count is rejected with the invalid-count message."""
    guard = PaginationGuard("jira", "search")
    with pytest.raises(PaginationError) as info:
        guard.record_items(count)
    assert str(info.value) == f"jira_pagination_invalid_item_count: search count={rendered}"


def test_zero_items_are_fine() -> None:
    """A page with no items is a valid count."""
    guard = PaginationGuard("jira", "search")
    guard.record_items(0)
    assert guard.items == 0


@pytest.mark.parametrize("bad", [0, -5, 2.5, "10", None, True])
def test_bad_limits_fall_back_to_defaults(bad: object) -> None:
    """Non-positive or non-integer limits fall back to 100 pages and 5000 items."""
    guard = PaginationGuard("jira", "search", max_pages=bad, max_items=bad)
    assert (guard.max_pages, guard.max_items) == (100, 5000)
    for _ in range(100):
        guard.record_page()
    with pytest.raises(PaginationError, match="pages=101 max_pages=100"):
        guard.record_page()


def test_defaults() -> None:
    """Without limits the guard allows 100 pages and 5000 items."""
    guard = PaginationGuard("jira", "search")
    guard.record_items(5000)
    with pytest.raises(PaginationError, match="items=5001 max_items=5000"):
        guard.record_items(1)


@pytest.mark.parametrize("cursor", ["", None, 7, ["c"]])
def test_malformed_cursor(cursor: object) -> None:
    """A cursor that is not a non-empty string is rejected."""
    guard = PaginationGuard("linear", "issues")
    with pytest.raises(PaginationError) as info:
        guard.next_cursor(cursor, "endCursor")
    assert str(info.value) == "linear_pagination_malformed_cursor: issues endCursor must be a non-empty string"


def test_repeated_cursor() -> None:
    """A cursor returned twice raises with its JSON rendering; fresh cursors pass through."""
    guard = PaginationGuard("jira", "search")
    assert guard.next_cursor("abc", "nextPageToken") == "abc"
    assert guard.next_cursor("def", "nextPageToken") == "def"
    with pytest.raises(PaginationError) as info:
        guard.next_cursor("abc", "nextPageToken")
    assert str(info.value) == (
        'jira_pagination_repeated_cursor: search nextPageToken="abc" was returned more than once'
    )


def test_repeated_long_cursor_is_truncated() -> None:
    """A cursor whose JSON exceeds 120 chars is shown as its first 117 chars plus `..."`."""
    cursor = "x" * 200
    guard = PaginationGuard("linear", "issues")
    guard.next_cursor(cursor, "endCursor")
    with pytest.raises(PaginationError) as info:
        guard.next_cursor(cursor, "endCursor")
    rendered = json.dumps(cursor)[:117] + '..."'
    assert len(rendered) == 121
    assert (
        str(info.value) == f"linear_pagination_repeated_cursor: issues endCursor={rendered} was returned more than once"
    )


def test_cursor_of_exactly_120_json_chars_is_not_truncated() -> None:
    """The truncation only starts above 120 characters of JSON."""
    cursor = "y" * 118  # JSON adds the two quotes
    guard = PaginationGuard("jira", "search")
    guard.next_cursor(cursor, "c")
    with pytest.raises(PaginationError) as info:
        guard.next_cursor(cursor, "c")
    assert f'c="{cursor}" was' in str(info.value)


def test_pagination_limits_build_guards() -> None:
    """PaginationLimits hands each paging loop a fresh guard with its bounds."""
    from lorenz.pagination import PaginationLimits

    limits = PaginationLimits(max_pages=2, max_items=10)
    guard = limits.guard("jira", "search")
    assert (guard.tracker, guard.resource, guard.max_pages, guard.max_items) == ("jira", "search", 2, 10)
    assert limits.guard("jira", "search") is not guard
