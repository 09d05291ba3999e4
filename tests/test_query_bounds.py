"""The query DSL's size bounds (issue 12, "Input boundary"): each bound at its limit is accepted,
one past it is refused with a message naming the argument and the bound, and the issue's
reproductions (which took 4.6-42 s of CPU) now fail at once."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from lorenz.query import (
    MAX_CONTAINS,
    MAX_FILTER_NODES,
    MAX_IN_VALUES,
    MAX_ORDER_BY_KEYS,
    MAX_SELECT_FIELDS,
    MAX_STRING_LENGTH,
    QueryError,
    apply_query,
    check_list_argument,
    parse_query_spec,
    parse_select,
    pick_fields,
    query_input_properties,
)

#: Seconds: "does not hang", not a timing (the reproductions took 4.6-42 s before the bounds).
HANG_GUARD = 5.0
MIB = 1 << 20


def board(size: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"BOARD-{n}",
            "title": f"Issue number {n}: fix the thing",
            "description": f"Steps to reproduce issue {n}.\n1. open the app\n2. it crashes\n",
            "state": ("Todo", "In Progress", "Done")[n % 3],
            "labels": ["backend", "bug"] if n % 2 else ["docs"],
            "n": n,
        }
        for n in range(size)
    ]


BOARD = board(1000)


def run(args: Mapping[str, Any], records: Sequence[dict[str, Any]] = BOARD) -> tuple[list[dict[str, Any]], int]:
    """What a ``*_query`` tool does with its arguments: parse, filter/sort/page, project."""
    spec = parse_query_spec(args)
    select = parse_select(args.get("select"))
    result = apply_query(records, spec)
    return [pick_fields(row, select if select is not None else ["id"]) for row in result.rows], result.total


def refusal(args: Mapping[str, Any]) -> str:
    """The message a query is refused with, checked to come back well within the hang guard."""
    started = time.perf_counter()
    with pytest.raises(QueryError) as excinfo:
        run(args)
    assert time.perf_counter() - started < HANG_GUARD
    return str(excinfo.value)


def pred(name: str, op: str, value: Any, **extra: Any) -> dict[str, Any]:
    return {"field": name, "op": op, "value": value, **extra}


# -- the reproductions ----------------------------------------------------------------------

HUGE = "x" * MIB

REPRODUCTIONS = [
    ({"where": pred("title", "nin", [0] * 150_000)}, "filter: 'nin' value has more than 1000 items"),
    ({"where": pred("title", "in", ["t"] * 150_000)}, "filter: 'in' value has more than 1000 items"),
    ({"order_by": [{"field": "title"}] * 10_000}, "order_by has more than 8 keys"),
    ({"select": ["title"] * 100_000}, "select has more than 64 fields"),
    ({"where": pred("title", "contains", HUGE)}, "filter: 'contains' value is longer than 4096 characters"),
    ({"where": pred("title", "eq", HUGE)}, "filter: 'eq' value is longer than 4096 characters"),
    ({"where": pred("title", "gte", HUGE)}, "filter: 'gte' value is longer than 4096 characters"),
    ({"where": pred(HUGE, "exists", True)}, "filter: predicate 'field' is longer than 4096 characters"),
    ({"where": pred("title", HUGE, True)}, "filter: predicate 'op' is longer than 4096 characters"),
    ({"where": pred("title", "nin", [HUGE])}, "filter: 'nin' value has a string longer than 4096 characters"),
    ({"order_by": [{"field": HUGE}]}, "order_by field is longer than 4096 characters"),
    ({"select": [HUGE]}, "select has a field name longer than 4096 characters"),
    (
        {"where": {"or": [pred("description", "contains", f"z{i}") for i in range(MAX_FILTER_NODES - 1)]}},
        "filter has more than 16 'contains' predicates",
    ),
]


@pytest.mark.parametrize(("args", "message"), REPRODUCTIONS)
def test_reproductions_fail_fast_naming_the_bound(args: dict[str, Any], message: str) -> None:
    """Each oversized query of the issue is refused with the bound's message, without evaluating."""
    assert refusal(args) == message


# -- each bound at its limit and one past it -----------------------------------------------------------


@pytest.mark.parametrize("op", ["in", "nin"])
def test_in_lists_up_to_the_bound(op: str) -> None:
    """1000 values are evaluated (and match exactly); 1001 are refused."""
    values = list(range(0, 2 * MAX_IN_VALUES, 2))
    rows, total = run({"where": pred("n", op, values), "limit": 1000})
    expected = {n for n in range(len(BOARD)) if (n in values) == (op == "in")}
    assert total == len(expected)
    assert {int(row["id"].split("-")[1]) for row in rows} == expected
    assert refusal({"where": pred("n", op, [*values, 1])}) == f"filter: '{op}' value has more than 1000 items"


def test_contains_up_to_the_bound_across_the_whole_filter() -> None:
    """16 contains predicates anywhere in the tree are fine; a 17th, however nested, is refused."""
    sixteen = [pred("title", "contains", f"number {n}:") for n in range(MAX_CONTAINS)]
    nested = {"or": [{"not": {"not": sixteen[0]}}, {"and": sixteen[1:]}, pred("state", "eq", "Todo")]}
    _, total = run({"where": {"or": sixteen}})
    assert total == MAX_CONTAINS
    run({"where": nested})
    seventeenth = {"and": [nested, {"not": pred("labels", "contains", "bug")}]}
    assert refusal({"where": seventeenth}) == "filter has more than 16 'contains' predicates"


STRING_PLACES = [
    (lambda s: {"where": pred(s, "exists", False)}, "filter: predicate 'field' is longer than 4096 characters"),
    (lambda s: {"where": pred("title", "eq", s)}, "filter: 'eq' value is longer than 4096 characters"),
    (lambda s: {"where": pred("title", "ne", s)}, "filter: 'ne' value is longer than 4096 characters"),
    (lambda s: {"where": pred("title", "lt", s)}, "filter: 'lt' value is longer than 4096 characters"),
    (
        lambda s: {"where": pred("title", "contains", s, ci=True)},
        "filter: 'contains' value is longer than 4096 characters",
    ),
    (lambda s: {"where": pred("title", "in", [1, s])}, "filter: 'in' value has a string longer than 4096 characters"),
    (lambda s: {"order_by": [{"field": s}]}, "order_by field is longer than 4096 characters"),
    (lambda s: {"select": ["id", s]}, "select has a field name longer than 4096 characters"),
]


@pytest.mark.parametrize(("place", "message"), STRING_PLACES)
def test_strings_up_to_the_bound(place: Any, message: str) -> None:
    """A 4096-character string is accepted in every place a query holds one; 4097 are refused."""
    run(place("é" * MAX_STRING_LENGTH))  # characters, not bytes: this is 8 KiB of UTF-8
    assert refusal(place("x" * (MAX_STRING_LENGTH + 1))) == message


def test_unknown_ops_are_quoted_back_only_up_to_the_bound() -> None:
    """An unknown op is named in its message; one too long to quote is refused by the bound."""
    op = "x" * MAX_STRING_LENGTH
    assert refusal({"where": pred("n", op, 1)}) == f"filter: unknown op '{op}'"
    assert refusal({"where": pred("n", op + "x", 1)}) == "filter: predicate 'op' is longer than 4096 characters"


def test_order_by_up_to_the_bound() -> None:
    """8 sort keys sort (the later ones break ties); 9 are refused."""
    keys = [{"field": "state"}, {"field": "n", "dir": "desc"}, *({"field": f"absent{i}"} for i in range(6))]
    assert len(keys) == MAX_ORDER_BY_KEYS
    rows, _ = run({"order_by": keys, "limit": 3})
    assert [row["id"] for row in rows] == ["BOARD-998", "BOARD-995", "BOARD-992"]  # "Done" first, n desc
    assert refusal({"order_by": [*keys, {"field": "id"}]}) == "order_by has more than 8 keys"


def test_select_up_to_the_bound() -> None:
    """64 fields are projected (missing ones dropped); 65 are refused."""
    fields = ["id", "title", *(f"absent{i}" for i in range(MAX_SELECT_FIELDS - 2))]
    rows, _ = run({"select": fields, "limit": 1})
    assert rows == [{"id": "BOARD-0", "title": "Issue number 0: fix the thing"}]
    assert refusal({"select": [*fields, "state"]}) == "select has more than 64 fields"


def test_sizes_are_checked_before_contents() -> None:
    """An oversized list gets the size message even when its items are malformed too."""
    assert refusal({"where": pred("a", "in", [{"x": 1}] * 1001)}) == "filter: 'in' value has more than 1000 items"
    assert refusal({"order_by": ["bad"] * 9}) == "order_by has more than 8 keys"
    assert refusal({"select": [1] * 65}) == "select has more than 64 fields"
    assert refusal({"where": pred("a", "in", [{"x": 1}])}) == "filter: 'in' value must be an array of scalars"
    assert refusal({"select": [1]}) == "select must be an array of field-name strings"


def test_check_list_argument() -> None:
    """The list bound the *_query tools apply to their own list arguments (ids, states, channels)."""
    check_list_argument("issueIds", ["x" * MAX_STRING_LENGTH] * MAX_IN_VALUES)
    check_list_argument("issueIds", [None, 1, {"a": "b" * 5000}])  # only strings are measured
    with pytest.raises(QueryError, match=r"^issueIds has more than 1000 items$"):
        check_list_argument("issueIds", ["A-1"] * (MAX_IN_VALUES + 1))
    with pytest.raises(QueryError, match=r"^states has a string longer than 4096 characters$"):
        check_list_argument("states", ["Todo", "x" * (MAX_STRING_LENGTH + 1)])


def test_schema_states_the_bounds_without_enforcing_them() -> None:
    """The inputSchema tells the agent every bound in words, but carries no maxItems/maxLength: the
    host would check those first and answer with a message quoting the whole oversized value."""
    props = query_input_properties("Fields.")
    where = props["where"]["description"]
    for bound in ("200 nodes", "12 levels", "16 contains", "1000 values", "4096 characters"):
        assert bound in where
    assert "64 fields" in props["select"]["description"]
    assert "8 keys" in props["order_by"]["description"]
    assert not {"maxItems", "maxLength", "maxProperties"} & set(json.dumps(props).replace('"', " ").split())


# -- maximal queries evaluate, and correctly, on a big board -------------------------------------------


def test_maximal_queries_answer_on_ten_thousand_records() -> None:
    """A query at every bound at once answers on 10,000 records (well within the hang guard) with
    the rows plain Python conditions give."""
    records = board(10_000)
    where = {
        "or": [
            *(pred("title", "contains", f"NUMBER {n}1:", ci=True) for n in range(MAX_CONTAINS)),
            *(pred("n", "in", list(range(k, k + 10 * MAX_IN_VALUES, 10))) for k in range(3)),
            *(pred("title", "gte", f"Issue number {n}9:") for n in range(100, 199)),
            *(pred("state", "eq", s * MAX_STRING_LENGTH) for s in "ab"),
            {"not": pred("n", "lt", 10_000 - 40)},
        ]
    }
    args = {"where": where, "order_by": [{"field": "state"}, {"field": "title", "dir": "desc"}], "limit": 1000}
    started = time.perf_counter()
    rows, total = run(args, records)
    assert time.perf_counter() - started < HANG_GUARD

    def expected(record: dict[str, Any]) -> bool:
        title, n = record["title"], record["n"]
        return (
            any(f"number {k}1:" in title.lower() for k in range(MAX_CONTAINS))
            or (n < 10 * MAX_IN_VALUES + 2 and n % 10 < 3)
            or any(title >= f"Issue number {k}9:" for k in range(100, 199))
            or n >= 10_000 - 40
        )

    matching = [record for record in records if expected(record)]
    matching.sort(key=lambda record: record["title"], reverse=True)
    matching.sort(key=lambda record: record["state"])
    assert 1000 < total == len(matching) < len(records)
    assert [row["id"] for row in rows] == [record["id"] for record in matching[:1000]]
