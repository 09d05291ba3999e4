"""Example-based tests for the read-only query DSL."""

from __future__ import annotations

from typing import Any

import pytest

from lorenz.query import (
    DEFAULT_LIMIT,
    MAX_FILTER_DEPTH,
    MAX_FILTER_NODES,
    MAX_LIMIT,
    OrderBy,
    QueryError,
    QueryResult,
    QuerySpec,
    apply_query,
    matches_filter,
    parse_filter,
    parse_query_spec,
    parse_select,
    pick_fields,
)


def pred(name: str, op: str, value: Any, **extra: Any) -> dict[str, Any]:
    return {"field": name, "op": op, "value": value, **extra}


def match(record: dict[str, Any], node: Any) -> bool:
    return matches_filter(record, parse_filter(node))


def nested_nots(count: int) -> dict[str, Any]:
    node: dict[str, Any] = pred("a", "eq", 1)
    for _ in range(count):
        node = {"not": node}
    return node


def ids(result: QueryResult) -> list[Any]:
    return [row["id"] for row in result.rows]


def sort_ids(records: list[dict[str, Any]], *order: tuple[str, str]) -> list[Any]:
    spec = QuerySpec(order_by=tuple(OrderBy(field=name, dir=d) for name, d in order))  # type: ignore[arg-type]
    return ids(apply_query(records, spec))


# -- matches_filter -------------------------------------------------------------

TODO = {"state": "Todo", "n": 3, "labels": ["backend", "urgent"]}


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (pred("state", "eq", "Todo"), True),
        (pred("state", "ne", "Todo"), False),
        (pred("state", "in", ["Done", "Todo"]), True),
        (pred("state", "nin", ["Done"]), True),
        (pred("n", "gte", 3), True),
        (pred("n", "lt", 3), False),
        (pred("state", "exists", True), True),
    ],
)
def test_basic_predicates(node: dict[str, Any], expected: bool) -> None:
    """Item 23: eq/ne/in/nin/gte/lt/exists on a present field."""
    assert match(TODO, node) is expected


def test_contains_string_ci_and_array() -> None:
    """Item 24: contains is case-sensitive unless ci, and substring-matches array elements."""
    record = {"title": "Deploy v2", "labels": ["backend"]}
    assert match(record, pred("title", "contains", "deploy", ci=True)) is True
    assert match(record, pred("title", "contains", "deploy")) is False
    assert match(record, pred("labels", "contains", "back")) is True


def test_absent_field_fails_everything_but_exists_false() -> None:
    """Item 25: an absent field makes eq, ne and exists:true false and exists:false true."""
    record = {"a": 1}
    assert match(record, pred("z", "eq", 1)) is False
    assert match(record, pred("z", "ne", 1)) is False
    assert match(record, pred("z", "exists", False)) is True
    assert match(record, pred("z", "exists", True)) is False


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "contains", "exists-true"])
def test_absent_field_predicates_false(op: str) -> None:
    """Every predicate except exists:false is false on an absent field, while not() of it is true."""
    values = {"in": [1, None], "nin": [1], "contains": "", "exists-true": True}
    node = pred("z", op.removesuffix("-true"), values.get(op, 1))
    assert match({"a": 1}, node) is False
    assert match({"a": 1}, {"not": node}) is True


def test_nested_combinators() -> None:
    """Item 26: and/or/not combine (a tautology inside an and)."""
    node = {
        "and": [
            pred("state", "eq", "Todo"),
            {"or": [pred("labels", "contains", "frontend"), {"not": pred("labels", "contains", "frontend")}]},
        ]
    }
    assert match(TODO, node) is True


def test_or_and_semantics() -> None:
    """'and' needs every child, 'or' any child."""
    assert match(TODO, {"and": [pred("n", "eq", 3), pred("n", "eq", 4)]}) is False
    assert match(TODO, {"or": [pred("n", "eq", 4), pred("n", "eq", 3)]}) is True
    assert match(TODO, {"or": [pred("n", "eq", 4), pred("n", "eq", 5)]}) is False


# -- strict equality, ordering, contains pitfalls -------------------------------------------------


@pytest.mark.parametrize(
    ("actual", "expected", "equal"),
    [
        (True, 1, False),
        (1, True, False),
        (False, 0, False),
        (0, False, False),
        (True, True, True),
        (1, 1.0, True),
        (None, None, True),
        (None, 0, False),
        ("1", 1, False),
        (["x"], "x", False),
        ({"x": 1}, "x", False),
    ],
)
def test_strict_equality(actual: Any, expected: Any, equal: bool) -> None:
    """eq/in are JS ===: bool never equals a number, int equals float, containers never equal."""
    assert match({"f": actual}, pred("f", "eq", expected)) is equal
    assert match({"f": actual}, pred("f", "ne", expected)) is not equal
    assert match({"f": actual}, pred("f", "in", [expected])) is equal
    assert match({"f": actual}, pred("f", "nin", [expected])) is not equal


def test_in_empty_list() -> None:
    """An empty 'in' list matches nothing and an empty 'nin' list matches every present value."""
    assert match({"f": 1}, pred("f", "in", [])) is False
    assert match({"f": 1}, pred("f", "nin", [])) is True


def test_none_is_present() -> None:
    """A None value is present: exists:true holds, eq None holds, ne 1 holds."""
    record = {"f": None}
    assert match(record, pred("f", "exists", True)) is True
    assert match(record, pred("f", "exists", False)) is False
    assert match(record, pred("f", "eq", None)) is True
    assert match(record, pred("f", "ne", 1)) is True


@pytest.mark.parametrize(
    ("actual", "op", "expected", "result"),
    [
        (2, "lt", 3, True),
        (3, "lte", 3, True),
        (3.5, "gt", 3, True),
        (3, "gte", 3.0, True),
        ("b", "gt", "a", True),
        ("a", "lt", "b", True),
        ("1", "lt", 2, False),
        (1, "lt", "2", False),
        (True, "gt", 0, False),
        (1, "lt", True, False),
        (None, "lt", 1, False),
        (None, "gte", None, False),
        ([1], "lt", 2, False),
        # UTF-16 code-unit order: an astral char (surrogate 0xD83D...) sorts before U+FFFF.
        ("\U0001f600", "lt", "\uffff", True),
        ("\uffff", "lt", "\U0001f600", False),
    ],
)
def test_ordering(actual: Any, op: str, expected: Any, result: bool) -> None:
    """lt/lte/gt/gte compare number-number or string-string (UTF-16 order); the rest is false."""
    assert match({"f": actual}, pred("f", op, expected)) is result


@pytest.mark.parametrize(
    ("actual", "needle", "result"),
    [
        ([12, 3], "1", True),
        ([None], "null", True),
        ([True, False], "true", True),
        ([1.0], "1.0", False),
        ([1.0], "1", True),
        ([1e21], "1e+21", True),
        ([1e-7], "1e-7", True),
        ([[1, [2, None]]], "1,2,", True),
        ([{"a": 1}], "[object Object]", True),
        (12, "1", False),
        (None, "null", False),
        ({"a": "x"}, "x", False),
    ],
)
def test_contains_js_string(actual: Any, needle: str, result: bool) -> None:
    """contains on arrays converts elements like JS String(); non-string, non-array fields are false."""
    assert match({"f": actual}, pred("f", "contains", needle)) is result


def test_contains_ci_uses_lower_not_casefold() -> None:
    """ci lowercases both sides with str.lower, so STRASSE does not contain straße."""
    assert match({"f": "STRASSE"}, pred("f", "contains", "straße", ci=True)) is False
    assert match({"f": "STRASSE"}, pred("f", "contains", "strasse", ci=True)) is True
    assert match({"f": ["A-TRUE"]}, pred("f", "contains", "a-t", ci=True)) is True
    assert match({"f": "ABC"}, pred("f", "contains", "abc", ci=False)) is False


def test_exists_on_present_field_returns_value() -> None:
    """exists on a present field is the requested boolean."""
    assert match({"f": 0}, pred("f", "exists", True)) is True
    assert match({"f": 0}, pred("f", "exists", False)) is False


# -- parse_filter ---------------------------------------------------------


@pytest.mark.parametrize(
    ("node", "message"),
    [
        (pred("x", "bogus", 1), "filter: unknown op 'bogus'"),
        ({"field": "x"}, "filter: predicate 'op' must be a string"),
        ({"and": []}, "filter: 'and' must be a non-empty array of filters"),
        ({"or": []}, "filter: 'or' must be a non-empty array of filters"),
        ({"or": "x"}, "filter: 'or' must be a non-empty array of filters"),
        ({"and": None}, "filter: 'and' must be a non-empty array of filters"),
        (pred("x", "in", "notarray"), "filter: 'in' value must be an array of scalars"),
        (pred("x", "nin", [[1]]), "filter: 'nin' value must be an array of scalars"),
        ({"and": [{}], "or": [{}]}, "filter: a combinator node must have exactly one of 'and', 'or', or 'not'"),
        ({"not": {}, "field": "x"}, "filter: a combinator node must have exactly one of 'and', 'or', or 'not'"),
        (nested_nots(20), "filter nesting exceeds 12 levels"),
        (None, "filter: each node must be an object"),
        ([], "filter: each node must be an object"),
        ("x", "filter: each node must be an object"),
        ({"not": None}, "filter: each node must be an object"),
        ({"and": [1]}, "filter: each node must be an object"),
        ({}, "filter: predicate 'field' must be a non-empty string"),
        (pred("", "eq", 1), "filter: predicate 'field' must be a non-empty string"),
        (pred(1, "eq", 1), "filter: predicate 'field' must be a non-empty string"),  # type: ignore[arg-type]
        (pred("x", 1, 1), "filter: predicate 'op' must be a string"),  # type: ignore[arg-type]
        ({"field": "x", "op": "eq"}, "filter: 'eq' value must be a string, number, boolean, or null"),
        (pred("x", "gte", [1]), "filter: 'gte' value must be a string, number, boolean, or null"),
        (pred("x", "ne", {"a": 1}), "filter: 'ne' value must be a string, number, boolean, or null"),
        (pred("x", "contains", 1), "filter: 'contains' value must be a string"),
        (pred("x", "contains", "a", ci="yes"), "filter: 'contains' ci must be a boolean"),
        (pred("x", "contains", "a", ci=None), "filter: 'contains' ci must be a boolean"),
        (pred("x", "exists", 1), "filter: 'exists' value must be a boolean"),
        (pred("x", "exists", None), "filter: 'exists' value must be a boolean"),
        (pred("x", "EQ", 1), "filter: unknown op 'EQ'"),
    ],
)
def test_parse_filter_errors(node: Any, message: str) -> None:
    """parse_filter raises QueryError with the exact reference message."""
    with pytest.raises(QueryError) as excinfo:
        parse_filter(node)
    assert str(excinfo.value) == message


def test_query_error_is_value_error() -> None:
    """QueryError subclasses ValueError so generic handlers catch it."""
    assert issubclass(QueryError, ValueError)


def test_limits_constants() -> None:
    """The limits match the reference: depth 12, 200 nodes, limit 100 by default and 1000 at most."""
    assert (MAX_FILTER_DEPTH, MAX_FILTER_NODES, DEFAULT_LIMIT, MAX_LIMIT) == (12, 200, 100, 1000)


def test_depth_boundary() -> None:
    """Eleven nested nots are accepted (predicate at depth 12); twelve are rejected."""
    assert match({"a": 1}, nested_nots(11)) is False
    with pytest.raises(QueryError, match=r"^filter nesting exceeds 12 levels$"):
        parse_filter(nested_nots(12))


def test_node_count_boundary() -> None:
    """An 'and' of 199 predicates is 200 nodes and accepted; 200 predicates is 201 and rejected."""
    parsed = parse_filter({"and": [pred("a", "eq", i) for i in range(199)]})
    assert len(parsed["and"]) == 199
    with pytest.raises(QueryError, match=r"^filter has more than 200 nodes$"):
        parse_filter({"and": [pred("a", "eq", i) for i in range(200)]})


def test_node_count_includes_invalid_node() -> None:
    """The node counter runs before the object check, so the 201st node fails on the count."""
    with pytest.raises(QueryError, match=r"^filter has more than 200 nodes$"):
        parse_filter({"and": [*[pred("a", "eq", i) for i in range(199)], "not an object"]})


def test_depth_checked_before_object() -> None:
    """Depth is checked before the node shape, so a bad node too deep reports nesting."""
    node: Any = "junk"
    for _ in range(12):
        node = {"not": node}
    with pytest.raises(QueryError, match=r"^filter nesting exceeds 12 levels$"):
        parse_filter(node)


def test_first_failing_child_wins() -> None:
    """Children are parsed left to right and the first error is reported."""
    with pytest.raises(QueryError, match="unknown op 'a'"):
        parse_filter({"or": [pred("x", "a", 1), pred("x", "b", 1)]})


def test_parse_filter_rebuilds_predicates() -> None:
    """Stray keys are dropped; ci is kept (even false) only on contains; in values become lists."""
    assert parse_filter({**pred("x", "eq", 1), "extra": True, "ci": True}) == pred("x", "eq", 1)
    assert parse_filter(pred("x", "contains", "a", ci=False)) == pred("x", "contains", "a", ci=False)
    assert parse_filter(pred("x", "contains", "a")) == pred("x", "contains", "a")
    assert parse_filter(pred("x", "in", (1, "a"))) == pred("x", "in", [1, "a"])
    nested = parse_filter({"not": {"and": [{**pred("x", "eq", None), "junk": 1}]}})
    assert nested == {"not": {"and": [pred("x", "eq", None)]}}


def test_parse_filter_does_not_alias_input() -> None:
    """The parsed filter is a fresh dict; mutating the input does not change it."""
    source = {"or": [pred("x", "in", [1])]}
    parsed = parse_filter(source)
    source["or"][0]["value"].append(2)
    assert parsed == {"or": [pred("x", "in", [1])]}


# -- parse_query_spec ------------------------------------------------------


def test_query_spec_clamps_and_reads_order_by() -> None:
    """Item 28: limit clamps to 1000, offset and order_by are kept."""
    spec = parse_query_spec({"limit": 99999, "offset": 2, "order_by": [{"field": "title", "dir": "desc"}]})
    assert spec == QuerySpec(where=None, order_by=(OrderBy("title", "desc"),), limit=1000, offset=2)


def test_query_spec_defaults() -> None:
    """An empty envelope means no filter, no ordering, limit 100, offset 0; where None is ignored."""
    assert parse_query_spec({}) == QuerySpec(where=None, order_by=(), limit=100, offset=0)
    assert parse_query_spec({"where": None}).where is None


def test_query_spec_parses_where_and_default_dir() -> None:
    """where is parsed by parse_filter and dir defaults to asc."""
    spec = parse_query_spec({"where": {**pred("a", "eq", 1), "x": 1}, "order_by": [{"field": "a"}]})
    assert spec.where == pred("a", "eq", 1)
    assert spec.order_by == (OrderBy("a", "asc"),)


@pytest.mark.parametrize(("raw", "parsed"), [(5.0, 5), (1, 1), (1000, 1000), (1001, 1000), (1e300, 1000)])
def test_limit_accepts_integral_numbers(raw: Any, parsed: int) -> None:
    """limit takes integral numbers, 5.0 included, clamped to 1000."""
    spec = parse_query_spec({"limit": raw})
    assert spec.limit == parsed
    assert type(spec.limit) is int


@pytest.mark.parametrize(("raw", "parsed"), [(0, 0), (0.0, 0), (7.0, 7), (10**6, 10**6)])
def test_offset_accepts_integral_numbers(raw: Any, parsed: int) -> None:
    """offset takes integral numbers >= 0 and is not clamped."""
    spec = parse_query_spec({"offset": raw})
    assert spec.offset == parsed
    assert type(spec.offset) is int


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"limit": 0}, "limit must be a positive integer"),
        ({"limit": -1}, "limit must be a positive integer"),
        ({"limit": 1.5}, "limit must be a positive integer"),
        ({"limit": "5"}, "limit must be a positive integer"),
        ({"limit": None}, "limit must be a positive integer"),
        ({"limit": True}, "limit must be a positive integer"),
        ({"limit": False}, "limit must be a positive integer"),
        ({"limit": float("nan")}, "limit must be a positive integer"),
        ({"limit": float("inf")}, "limit must be a positive integer"),
        ({"offset": -1}, "offset must be a non-negative integer"),
        ({"offset": 0.5}, "offset must be a non-negative integer"),
        ({"offset": None}, "offset must be a non-negative integer"),
        ({"offset": True}, "offset must be a non-negative integer"),
        ({"offset": False}, "offset must be a non-negative integer"),
        ({"offset": "0"}, "offset must be a non-negative integer"),
        ({"offset": float("inf")}, "offset must be a non-negative integer"),
        ({"offset": float("nan")}, "offset must be a non-negative integer"),
        ({"order_by": [{"field": "t", "dir": "up"}]}, "order_by dir must be 'asc' or 'desc'"),
        ({"order_by": [{"field": "t", "dir": None}]}, "order_by dir must be 'asc' or 'desc'"),
        ({"order_by": [{"field": "t", "dir": "DESC"}]}, "order_by dir must be 'asc' or 'desc'"),
        ({"order_by": None}, "order_by must be an array"),
        ({"order_by": {"field": "t"}}, "order_by must be an array"),
        ({"order_by": "t"}, "order_by must be an array"),
        ({"order_by": ["t"]}, "order_by items must be { field: string, dir?: 'asc' | 'desc' }"),
        ({"order_by": [{"field": ""}]}, "order_by items must be { field: string, dir?: 'asc' | 'desc' }"),
        ({"order_by": [{"dir": "asc"}]}, "order_by items must be { field: string, dir?: 'asc' | 'desc' }"),
        ({"order_by": [{"field": 1}]}, "order_by items must be { field: string, dir?: 'asc' | 'desc' }"),
        ({"where": []}, "filter: each node must be an object"),
        ({"select": 1, "where": {"and": []}}, "filter: 'and' must be a non-empty array of filters"),
    ],
)
def test_query_spec_errors(args: dict[str, Any], message: str) -> None:
    """parse_query_spec raises QueryError with the exact reference message (bools are not numbers)."""
    with pytest.raises(QueryError) as excinfo:
        parse_query_spec(args)
    assert str(excinfo.value) == message


def test_query_spec_first_failure_wins() -> None:
    """Keys are checked where, order_by, limit, offset, so the earliest bad key is reported."""
    bad: dict[str, Any] = {"where": [], "order_by": None, "limit": 0, "offset": -1}
    expected = [
        "filter: each node must be an object",
        "order_by must be an array",
        "limit must be a positive integer",
        "offset must be a non-negative integer",
    ]
    items = list(bad.items())
    for start, message in enumerate(expected):
        with pytest.raises(QueryError) as excinfo:
            parse_query_spec(dict(items[start:]))
        assert str(excinfo.value) == message


def test_query_spec_is_frozen() -> None:
    """QuerySpec, OrderBy and QueryResult are immutable and compare by value."""
    spec = parse_query_spec({"order_by": [{"field": "a"}]})
    with pytest.raises(AttributeError):
        spec.limit = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        spec.order_by[0].dir = "desc"  # type: ignore[misc]
    assert QueryResult(rows=[], total=0) == QueryResult(rows=[], total=0)


# -- apply_query -----------------------------------------------------------


def test_apply_query_filters_sorts_pages() -> None:
    """Item 29: filter n >= 2, sort by n, page limit 2 offset 1; total counts all matches."""
    records = [{"id": "a", "n": 3}, {"id": "b", "n": 1}, {"id": "c", "n": 2}, {"id": "d", "n": 5}]
    spec = parse_query_spec({"where": pred("n", "gte", 2), "order_by": [{"field": "n"}], "limit": 2, "offset": 1})
    result = apply_query(records, spec)
    assert result.total == 3
    assert ids(result) == ["a", "d"]


def test_apply_query_returns_original_objects() -> None:
    """Rows are the caller's record objects, not copies; the input list is not reordered."""
    records = [{"id": 2}, {"id": 1}]
    result = apply_query(records, parse_query_spec({"order_by": [{"field": "id"}]}))
    assert result.rows[0] is records[1]
    assert [record["id"] for record in records] == [2, 1]


def test_apply_query_offset_past_end() -> None:
    """An offset beyond the end yields no rows while total still counts every match."""
    records = [{"id": i} for i in range(3)]
    result = apply_query(records, parse_query_spec({"offset": 10}))
    assert result == QueryResult(rows=[], total=3)


def test_apply_query_default_limit() -> None:
    """Without a limit at most 100 rows come back, in input order."""
    records = [{"id": i} for i in range(150)]
    result = apply_query(records, parse_query_spec({}))
    assert result.total == 150
    assert ids(result) == list(range(100))


def test_sort_desc() -> None:
    """desc reverses numeric order; ties keep input order."""
    records = [{"id": "a", "n": 1}, {"id": "b", "n": 2}, {"id": "c", "n": 1}, {"id": "d", "n": 2.0}]
    assert sort_ids(records, ("n", "desc")) == ["b", "d", "a", "c"]
    assert sort_ids(records, ("n", "asc")) == ["a", "c", "b", "d"]


def test_sort_multi_key() -> None:
    """Ties on the first key fall through to the second key."""
    records = [
        {"id": 1, "s": "b", "n": 1},
        {"id": 2, "s": "a", "n": 2},
        {"id": 3, "s": "b", "n": 0},
        {"id": 4, "s": "a", "n": 1},
    ]
    assert sort_ids(records, ("s", "asc"), ("n", "desc")) == [2, 4, 1, 3]
    assert sort_ids(records, ("s", "desc"), ("n", "asc")) == [3, 1, 4, 2]


def test_sort_mixed_types_total_order() -> None:
    """Numbers sort before strings before absent/None/bool/containers (tied, input order), asc or desc."""
    records: list[dict[str, Any]] = [
        {"id": "two", "n": 2},
        {"id": "x", "n": "x"},
        {"id": "absent"},
        {"id": "one", "n": 1},
        {"id": "null", "n": None},
        {"id": "true", "n": True},
        {"id": "list", "n": [0]},
        {"id": "a", "n": "a"},
        {"id": "nan", "n": float("nan")},
        {"id": "two-again", "n": 2.0},
    ]
    assert sort_ids(records, ("n", "asc")) == [
        "one", "two", "two-again", "a", "x", "absent", "null", "true", "list", "nan",
    ]  # fmt: skip
    assert sort_ids(records, ("n", "desc")) == [
        "two", "two-again", "one", "x", "a", "absent", "null", "true", "list", "nan",
    ]  # fmt: skip


def test_sort_bools_are_not_numbers() -> None:
    """True/False do not sort among numbers (True is not 1)."""
    records = [{"id": "t", "n": True}, {"id": "two", "n": 2}, {"id": "f", "n": False}, {"id": "zero", "n": 0}]
    assert sort_ids(records, ("n", "asc")) == ["zero", "two", "t", "f"]


def test_sort_strings_by_utf16_code_units() -> None:
    """Strings sort by UTF-16 code units: an astral character sorts before U+FFFF."""
    records = [{"id": "bmp", "s": "\uffff"}, {"id": "astral", "s": "\U0001f600"}, {"id": "a", "s": "a"}]
    assert sort_ids(records, ("s", "asc")) == ["a", "astral", "bmp"]
    assert sort_ids(records, ("s", "desc")) == ["bmp", "astral", "a"]


def test_sort_handles_lone_surrogates_and_huge_ints() -> None:
    """Lone surrogates and ints beyond float range sort without raising."""
    records: list[dict[str, Any]] = [
        {"id": 1, "v": "\ud800"},
        {"id": 2, "v": 10**400},
        {"id": 3, "v": 1.5},
        {"id": 4, "v": "a"},
    ]
    assert sort_ids(records, ("v", "asc")) == [3, 2, 4, 1]


# -- select -------------------------------------------------------------------


def test_pick_fields() -> None:
    """Item 30: only requested fields the record has, in the requested order."""
    assert pick_fields({"a": 1, "b": 2, "c": 3}, ["a", "c", "z"]) == {"a": 1, "c": 3}
    assert list(pick_fields({"a": 1, "b": 2}, ["b", "a"])) == ["b", "a"]


def test_pick_fields_keeps_none_and_makes_new_dict() -> None:
    """None-valued fields are kept; the result is a new dict."""
    record = {"a": None, "b": 1}
    picked = pick_fields(record, ["a"])
    assert picked == {"a": None}
    picked["b"] = 2
    assert record == {"a": None, "b": 1}


def test_parse_select() -> None:
    """None means the tool default; a list of strings (even empty) is returned as a list."""
    assert parse_select(None) is None
    assert parse_select([]) == []
    assert parse_select(["a", "b"]) == ["a", "b"]
    assert parse_select(("a",)) == ["a"]


@pytest.mark.parametrize("value", ["a", 1, True, {"a": 1}, [1], ["a", None], [["a"]]])
def test_parse_select_errors(value: Any) -> None:
    """Anything but a list of strings raises the exact reference message."""
    with pytest.raises(QueryError) as excinfo:
        parse_select(value)
    assert str(excinfo.value) == "select must be an array of field-name strings"


def test_query_input_properties_describe_the_envelope() -> None:
    """Read tools share one described schema for where/select/order_by/limit/offset."""
    from lorenz.query import query_input_properties

    props = query_input_properties("Fields: id, title.")
    assert list(props) == ["where", "select", "order_by", "limit", "offset"]
    assert props["select"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Fields: id, title. At most 64 fields.",
    }
    assert all(prop.get("description") for prop in props.values())
    assert "1000" in props["limit"]["description"]


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        (
            {"where": {"field": "state", "op": "eq", "vaule": "Todo"}},
            'where: Unrecognized key: "vaule" (did you mean "value"?)',
        ),
        (
            {"where": {"and": [{"field": "state", "op": "bogus", "value": 1}]}},
            'where.and.0.op: must be one of "eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "contains", "exists"',
        ),
        (
            {"where": {"not": {"or": [{"fild": "id"}]}}},
            'where.not.or.0: Unrecognized key: "fild" (did you mean "field"?)',
        ),
        ({"where": {"field": "title", "op": "contains", "value": "x", "ci": "yes"}}, "where.ci: must be a boolean"),
        ({"order_by": [{"field": "id", "direction": "desc"}]}, 'order_by.0: Unrecognized key: "direction"'),
        ({"order_by": [{"dir": "desc"}]}, "order_by.0.field: required"),
        ({"order_by": [{"field": "id", "dir": "down"}]}, 'order_by.0.dir: must be one of "asc", "desc"'),
        ({"selcet": ["id"]}, 'Unrecognized key: "selcet" (did you mean "select"?)'),
    ],
)
def test_the_query_envelope_is_strict_at_every_level(arguments: dict[str, Any], problem: str) -> None:
    """Issue 12: a misspelled key inside a where node or an order_by item is refused by the schema,
    at its key path, instead of being dropped (which would filter or sort differently than asked)."""
    from lorenz.query import query_input_properties
    from lorenz.toolcall.schemas import compile_schema, validate_arguments

    schema = {"type": "object", "additionalProperties": False, "properties": query_input_properties("Fields.")}
    validator = compile_schema(schema)
    assert validator is not None
    failure = validate_arguments("demo_query", arguments, validator)
    assert failure is not None and failure.error == f"invalid arguments for tool demo_query: {problem}"
    exists = {"and": [{"field": "x", "op": "exists", "value": True}]}
    good = {
        "where": {"or": [{"not": {"field": "id", "op": "in", "value": ["A"]}}, exists]},
        "order_by": [{"field": "id", "dir": "desc"}, {"field": "title"}],
        "select": ["id"],
    }
    assert validate_arguments("demo_query", good, validator) is None
    parse_query_spec(good)  # the schema accepts what the DSL accepts
