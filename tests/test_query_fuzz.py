"""Fuzz targets for the query DSL (``nox -s fuzz``: 5,000 examples each; 200 in the normal suite).

Arbitrary JSON-ish ``where``/``order_by``/``select``/``limit``/``offset`` envelopes, sized around
every bound, go through what a ``*_query`` tool does (``parse_query_spec``, ``parse_select``,
``apply_query``, ``pick_fields``). The invariants: the only error is :class:`QueryError` with a
message; an accepted query answers with exactly the rows a record-by-record walk of the spec's
semantics (the reference evaluator below, the DSL's implementation before it was made
column-wise) gives, sorted and paged by a reference comparator; and no example hangs.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from lorenz._jsvalues import is_array, is_number, js_string
from lorenz.query import (
    MAX_CONTAINS,
    MAX_FILTER_DEPTH,
    MAX_FILTER_NODES,
    MAX_IN_VALUES,
    MAX_LIMIT,
    MAX_ORDER_BY_KEYS,
    MAX_SELECT_FIELDS,
    MAX_STRING_LENGTH,
    OrderBy,
    QueryError,
    QuerySpec,
    apply_query,
    parse_filter,
    parse_query_spec,
    parse_select,
    pick_fields,
)

pytestmark = pytest.mark.fuzz


def label(text: str) -> str:
    """An event label for hypothesis' statistics (which must encode as UTF-8)."""
    return text.encode("ascii", "backslashreplace").decode()[:60]


FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
#: Seconds: "does not hang", not a timing.
HANG_GUARD = 5.0


# -- the reference: the spec's semantics, one record at a time --------------


def utf16_units(text: str) -> bytes:
    return text.encode("utf-16-be", "surrogatepass")


def strict_equal(left: object, right: object) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if is_number(left) and is_number(right):
        return left == right
    if isinstance(left, str) and isinstance(right, str):
        return left == right
    return left is None and right is None


def ordered(actual: object, op: str, expected: object) -> bool:
    left: Any
    right: Any
    if is_number(actual) and is_number(expected):
        left, right = actual, expected
    elif isinstance(actual, str) and isinstance(expected, str):
        left, right = utf16_units(actual), utf16_units(expected)
    else:
        return False
    return bool({"lt": left < right, "lte": left <= right, "gt": left > right, "gte": left >= right}[op])


def contains(actual: object, needle: str, ci: bool) -> bool:
    if isinstance(actual, str):
        haystacks = [actual]
    elif is_array(actual):
        haystacks = [js_string(item) for item in actual]
    else:
        return False
    if ci:
        return any(needle.lower() in hay.lower() for hay in haystacks)
    return any(needle in hay for hay in haystacks)


def reference_match(record: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    if "and" in node:
        return all(reference_match(record, child) for child in node["and"])
    if "or" in node:
        return any(reference_match(record, child) for child in node["or"])
    if "not" in node:
        return not reference_match(record, node["not"])
    name, op, expected = node["field"], node["op"], node["value"]
    if name not in record:
        return op == "exists" and expected is False
    actual = record[name]
    if op in ("eq", "ne"):
        return strict_equal(actual, expected) is (op == "eq")
    if op in ("in", "nin"):
        return any(strict_equal(actual, item) for item in expected) is (op == "in")
    if op == "contains":
        return contains(actual, expected, bool(node.get("ci", False)))
    if op == "exists":
        return expected is True
    return ordered(actual, op, expected)


def sort_class(record: Mapping[str, Any], name: str) -> tuple[int, Any]:
    value = record.get(name)
    if name in record and is_number(value) and value == value:
        return (0, value)
    if name in record and isinstance(value, str):
        return (1, utf16_units(value))
    return (2, 0)


def compare(left: Mapping[str, Any], right: Mapping[str, Any], order: tuple[OrderBy, ...]) -> int:
    for key in order:
        (lrank, lval), (rrank, rval) = sort_class(left, key.field), sort_class(right, key.field)
        if lrank != rrank:
            return -1 if lrank < rrank else 1
        if lval != rval:
            sign = -1 if lval < rval else 1
            return -sign if key.dir == "desc" else sign
    return 0


def reference_query(records: list[dict[str, Any]], spec: QuerySpec) -> tuple[list[int], int]:
    """The ids of the page and the match count, by the reference semantics."""
    where = spec.where
    matching = [record for record in records if where is None or reference_match(record, where)]
    ranked = sorted(matching, key=functools.cmp_to_key(lambda a, b: compare(a, b, spec.order_by)))
    return [id(row) for row in ranked[spec.offset : spec.offset + spec.limit]], len(matching)


# -- strategies: JSON-ish values and envelopes sized around every bound -----------------------------

FIELDS = ["a", "b", "title", "labels"]
OPS = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "contains", "exists"]


def sized(minimum: int, maximum: int, make: Any) -> st.SearchStrategy[Any]:
    """``make(n)`` for n drawn near a bound: cheap to draw however large."""
    return st.integers(minimum, maximum).map(make)


texts = st.text(
    alphabet=st.sampled_from(["a", "B", "é", "ß", "1", ",", " ", "\U0001f600", "\uffff", "\ud800", "İ"]), max_size=5
)
long_texts = sized(MAX_STRING_LENGTH - 1, MAX_STRING_LENGTH + 1, lambda n: "x" * n)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.integers(),
    st.sampled_from([10**400, 0.0, -0.0, 1.0, 2.5, 1e21, 1e-7, float("nan"), float("inf"), -float("inf")]),
    st.floats(),
    texts,
)
json_values = st.recursive(
    st.one_of(scalars, long_texts),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner),
        st.dictionaries(st.one_of(st.sampled_from([*FIELDS, "and", "or", "not", "field", "op"]), texts), inner),
    ),
    max_leaves=6,
)
field_names = st.one_of(st.sampled_from(FIELDS), st.sampled_from(["", "absent"]), long_texts, json_values)
set_values = st.one_of(
    st.lists(scalars, max_size=4),
    st.tuples(scalars, st.integers(MAX_IN_VALUES - 1, MAX_IN_VALUES + 1)).map(lambda pair: [pair[0]] * pair[1]),
    json_values,
)


@st.composite
def predicates(draw: st.DrawFn) -> dict[str, Any]:
    op = draw(st.one_of(st.sampled_from(OPS), json_values))
    if op in ("in", "nin"):
        value = draw(set_values)
    elif op == "contains":
        value = draw(st.one_of(texts, long_texts, json_values))
    elif op == "exists":
        value = draw(st.one_of(st.booleans(), json_values))
    else:
        value = draw(st.one_of(scalars, long_texts, json_values))
    node: dict[str, Any] = {"field": draw(field_names), "op": op}
    if draw(st.integers(0, 9)):  # sometimes no value at all
        node["value"] = value
    if draw(st.booleans()):
        node["ci"] = draw(st.one_of(st.booleans(), json_values))
    if draw(st.integers(0, 9)) == 0:
        node["junk"] = draw(json_values)
    return node


def nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"field": "a", "op": "exists", "value": True}
    for _ in range(depth - 1):
        node = {"not": node}
    return node


filters = st.recursive(
    st.one_of(predicates(), json_values),
    lambda inner: st.one_of(
        st.builds(lambda items: {"and": items}, st.lists(inner, max_size=3)),
        st.builds(lambda items: {"or": items}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda child: {"not": child}, inner),
        st.fixed_dictionaries({}, optional={"and": st.lists(inner, max_size=2), "or": inner, "not": inner}),
    ),
    max_leaves=8,
)
# Filters at the tree bounds: wide (node count), deep (nesting), and many contains.
wide_filters = st.tuples(predicates(), st.integers(MAX_FILTER_NODES - 2, MAX_FILTER_NODES)).map(
    lambda pair: {"or": [pair[0]] * pair[1]}
)
deep_filters = sized(MAX_FILTER_DEPTH - 1, MAX_FILTER_DEPTH + 1, nested)
contains_filters = st.tuples(texts, st.booleans(), st.integers(MAX_CONTAINS - 1, MAX_CONTAINS + 1)).map(
    lambda t: {"or": [{"field": "title", "op": "contains", "value": t[0] + str(i), "ci": t[1]} for i in range(t[2])]}
)
order_items = st.one_of(
    st.fixed_dictionaries(
        {"field": st.one_of(st.sampled_from(FIELDS), field_names)},
        optional={"dir": st.one_of(st.sampled_from(["asc", "desc"]), json_values)},
    ),
    json_values,
)
order_bys = st.one_of(
    st.lists(order_items, max_size=4),
    st.tuples(order_items, st.integers(MAX_ORDER_BY_KEYS - 1, MAX_ORDER_BY_KEYS + 1)).map(lambda t: [t[0]] * t[1]),
    json_values,
)
selects = st.one_of(
    st.none(),
    st.lists(st.one_of(st.sampled_from(FIELDS), texts), max_size=4),
    sized(MAX_SELECT_FIELDS - 1, MAX_SELECT_FIELDS + 1, lambda n: [f"f{i}" for i in range(n)]),
    st.lists(long_texts, max_size=1),
    json_values,
)
numbers = st.one_of(st.integers(-2, 5), st.integers(), st.sampled_from([MAX_LIMIT + 1, 3.0, 2.5, True, 1e300]))
envelopes = st.fixed_dictionaries(
    {},
    optional={
        "where": st.one_of(st.none(), filters, wide_filters, deep_filters, contains_filters),
        "order_by": order_bys,
        "select": selects,
        "limit": st.one_of(numbers, json_values),
        "offset": st.one_of(numbers, json_values),
    },
)
records = st.lists(st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=4), max_size=10)


# -- the targets -----------------------------------------------------------------------------------


@FUZZ
@given(args=envelopes, rows=records)
def test_query_envelope_answers_or_refuses(args: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Any envelope: a QueryError with a message, or the reference's page and total."""
    started = time.perf_counter()
    try:
        spec = parse_query_spec(args)
        select = parse_select(args.get("select"))
    except QueryError as exc:
        refused = str(exc)
        assert refused, "a QueryError carries a message"
        assert time.perf_counter() - started < HANG_GUARD
        event(label(refused.split(" value ")[0] if " value " in refused else refused))  # which check fired
        return
    event("answered")
    result = apply_query(rows, spec)
    projected = [pick_fields(row, select if select is not None else FIELDS) for row in result.rows]
    assert time.perf_counter() - started < HANG_GUARD
    assert 1 <= spec.limit <= MAX_LIMIT and spec.offset >= 0
    assert ([id(row) for row in result.rows], result.total) == reference_query(rows, spec)
    assert all(set(row) <= set(select if select is not None else FIELDS) for row in projected)


valid_predicates = (
    st.builds(
        lambda name, op, value, ci: {
            "field": name,
            "op": op,
            "value": value,
            **({"ci": ci} if op == "contains" else {}),
        },
        st.sampled_from(FIELDS),
        st.sampled_from(["eq", "ne", "lt", "lte", "gt", "gte"]),
        scalars,
        st.booleans(),
    )
    | st.builds(
        lambda name, op, values: {"field": name, "op": op, "value": values},
        st.sampled_from(FIELDS),
        st.sampled_from(["in", "nin"]),
        st.lists(scalars, max_size=12),
    )
    | st.builds(
        lambda name, needle, ci: {"field": name, "op": "contains", "value": needle, "ci": ci},
        st.sampled_from(FIELDS),
        texts,
        st.booleans(),
    )
    | st.builds(
        lambda name, flag: {"field": name, "op": "exists", "value": flag}, st.sampled_from(FIELDS), st.booleans()
    )
)
valid_filters = st.recursive(
    valid_predicates,
    lambda inner: st.one_of(
        st.builds(lambda items: {"and": items}, st.lists(inner, min_size=1, max_size=4)),
        st.builds(lambda items: {"or": items}, st.lists(inner, min_size=1, max_size=4)),
        st.builds(lambda child: {"not": child}, inner),
    ),
    max_leaves=10,
)
# Columns of one kind as well as mixed ones, so every evaluation path is taken.
column_kinds = st.sampled_from(
    [
        scalars,
        texts,
        st.integers(-3, 3),
        st.floats(allow_nan=True),
        st.lists(st.one_of(texts, st.integers(0, 3), st.none()), max_size=3),
        st.booleans(),
    ]
)


@st.composite
def boards(draw: st.DrawFn) -> list[dict[str, Any]]:
    kinds = {name: draw(column_kinds) for name in FIELDS}
    size = draw(st.integers(0, 300 if draw(st.integers(0, 9)) == 0 else 40))
    board: list[dict[str, Any]] = []
    for _ in range(size):
        present = draw(st.sets(st.sampled_from(FIELDS)))
        board.append({name: draw(kinds[name]) for name in FIELDS if name in present})
    return board


@FUZZ
@given(node=valid_filters, rows=boards(), order=st.lists(st.tuples(st.sampled_from(FIELDS), st.booleans()), max_size=3))
def test_evaluation_matches_the_reference(node: dict[str, Any], rows: list[dict[str, Any]], order: Any) -> None:
    """Over boards of up to 300 records with single-kind and mixed columns, the column-wise
    evaluation and sort give the reference's rows, in the reference's order."""
    spec = QuerySpec(
        where=parse_filter(node),
        order_by=tuple(OrderBy(name, "desc" if desc else "asc") for name, desc in order),
        limit=MAX_LIMIT,
    )
    result = apply_query(rows, spec)
    assert ([id(row) for row in result.rows], result.total) == reference_query(rows, spec)
