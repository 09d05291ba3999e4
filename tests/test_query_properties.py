"""Property-based tests for the query DSL: robustness, a total stable sort, the negation laws."""

from __future__ import annotations

import itertools
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorenz.query import (
    OrderBy,
    QueryError,
    QuerySpec,
    apply_query,
    matches_filter,
    parse_filter,
    parse_query_spec,
    parse_select,
    pick_fields,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

FIELD_NAMES = ["a", "b", "c"]
OPS = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "contains", "exists"]

texts = st.text(alphabet=st.sampled_from(["a", "B", "ß", "1", ",", "\U0001f600", "\uffff", "\ud800"]), max_size=4)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1.0, 2.5, 1e21, 1e-7]),
    texts,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.tuples(inner),
        st.dictionaries(st.one_of(st.sampled_from([*FIELD_NAMES, "and", "or", "not", "field", "op"]), texts), inner),
    ),
    max_leaves=6,
)
records = st.dictionaries(st.sampled_from(FIELD_NAMES), json_values, max_size=3)


def op_value(op: str) -> st.SearchStrategy[Any]:
    """A value that is valid for ``op``."""
    if op in ("in", "nin"):
        return st.lists(scalars, max_size=3)
    if op == "contains":
        return texts
    if op == "exists":
        return st.booleans()
    return scalars


@st.composite
def valid_predicates(draw: st.DrawFn) -> dict[str, Any]:
    op = draw(st.sampled_from(OPS))
    node = {"field": draw(st.sampled_from(FIELD_NAMES)), "op": op, "value": draw(op_value(op))}
    if op == "contains" and draw(st.booleans()):
        node["ci"] = draw(st.booleans())
    return node


valid_filters = st.recursive(
    valid_predicates(),
    lambda inner: st.one_of(
        st.builds(lambda items: {"and": items}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda items: {"or": items}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda child: {"not": child}, inner),
    ),
    max_leaves=6,
)

# Near-valid input: well-formed pieces with wrong types, stray keys and junk mixed in.
loose_predicates = st.fixed_dictionaries(
    {},
    optional={
        "field": st.one_of(st.sampled_from(["a", ""]), json_values),
        "op": st.one_of(st.sampled_from([*OPS, "bogus"]), json_values),
        "value": json_values,
        "ci": json_values,
        "extra": json_values,
    },
)
loose_filters = st.recursive(
    st.one_of(valid_predicates(), loose_predicates, json_values),
    lambda inner: st.one_of(
        st.fixed_dictionaries({}, optional={"and": st.lists(inner, max_size=3), "or": inner, "not": inner}),
        st.builds(lambda child: {"not": child}, inner),
        st.builds(lambda key, operand: {key: operand}, st.sampled_from(["and", "or"]), st.one_of(inner, scalars)),
        st.lists(inner, max_size=3),
    ),
    max_leaves=8,
)
order_items = st.one_of(
    st.fixed_dictionaries(
        {"field": st.one_of(st.sampled_from(FIELD_NAMES), json_values)},
        optional={"dir": st.one_of(st.sampled_from(["asc", "desc"]), json_values)},
    ),
    json_values,
)
query_args = st.fixed_dictionaries(
    {},
    optional={
        "where": st.one_of(st.none(), valid_filters, loose_filters),
        "order_by": st.one_of(st.lists(order_items, max_size=3), json_values),
        "limit": st.one_of(st.integers(-2, 5), st.sampled_from([2000, 3.0, 2.5, True]), json_values),
        "offset": st.one_of(st.integers(-2, 5), st.sampled_from([2.0, 0.5, False]), json_values),
        "select": json_values,
    },
)


# -- (1) robustness -------------------------------------------------------------------------------


@SETTINGS
@given(node=st.one_of(loose_filters, valid_filters), rows=st.lists(records, max_size=4))
def test_parse_filter_raises_only_query_error(node: Any, rows: list[dict[str, Any]]) -> None:
    """parse_filter raises nothing but QueryError, and a parsed filter evaluates to a bool on any record."""
    try:
        parsed = parse_filter(node)
    except QueryError:
        return
    for record in rows:
        assert isinstance(matches_filter(record, parsed), bool)


@SETTINGS
@given(args=query_args, rows=st.lists(records, max_size=6))
def test_query_spec_and_apply_never_crash(args: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """parse_query_spec raises only QueryError; apply_query on a parsed spec never raises."""
    try:
        spec = parse_query_spec(args)
    except QueryError:
        return
    assert 1 <= spec.limit <= 1000
    assert spec.offset >= 0
    result = apply_query(rows, spec)
    assert len(result.rows) <= spec.limit
    assert result.total <= len(rows)


@SETTINGS
@given(value=json_values, record=records)
def test_parse_select_raises_only_query_error(value: Any, record: dict[str, Any]) -> None:
    """parse_select raises only QueryError; a parsed selection picks a subset of the record."""
    try:
        selected = parse_select(value)
    except QueryError:
        return
    if selected is not None:
        picked = pick_fields(record, selected)
        assert picked.items() <= record.items()
        assert set(picked) == set(selected) & set(record)


# -- (2) sorting: total, stable, paging -------------------------------------------------------------

# Numbers, strings and the tied rest each get a third of the draws, so every rank and the
# UTF-16 versus code-point difference (U+FFFF against an astral character) show up often.
SORT_VALUE_KINDS: dict[str, st.SearchStrategy[Any]] = {
    "number": st.one_of(
        st.integers(-3, 3),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from([1.0, 2.0, -0.0, float("nan"), float("inf"), 10**400]),
    ),
    "string": st.one_of(
        st.sampled_from(["", "a", "\uffff", "\U0001f600", "a\uffff", "a\U0001f600", "\ud800"]),
        st.text(alphabet=st.sampled_from(["a", "\uffff", "\U0001f600", "\ud800"]), max_size=3),
    ),
    "other": st.one_of(
        st.none(),
        st.booleans(),
        st.lists(st.integers(0, 2), max_size=2),
        st.dictionaries(st.sampled_from(["x"]), st.integers(0, 1)),
    ),
}
sort_values = st.sampled_from(sorted(SORT_VALUE_KINDS)).flatmap(SORT_VALUE_KINDS.__getitem__)
sort_records = st.lists(
    st.fixed_dictionaries({}, optional={"a": sort_values, "b": sort_values}),
    max_size=12,
)
order_bys = st.lists(
    st.builds(OrderBy, field=st.sampled_from(["a", "b"]), dir=st.sampled_from(["asc", "desc"])),
    min_size=1,
    max_size=2,
)


def utf16_units(text: str) -> tuple[int, ...]:
    units: list[int] = []
    for char in text:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            units += [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]
        else:
            units.append(code)
    return tuple(units)


def sort_class(record: dict[str, Any], name: str) -> tuple[int, Any]:
    """Oracle: (rank, comparable value); numbers < strings < everything else (all equal)."""
    if name in record:
        value = record[name]
        if type(value) in (int, float) and value == value:
            return (0, value)
        if type(value) is str:
            return (1, utf16_units(value))
    return (2, ())


def compare(left: dict[str, Any], right: dict[str, Any], order: list[OrderBy]) -> int:
    """Oracle comparator: rank first, then value (reversed within a rank for desc), key by key."""
    for key in order:
        (lrank, lval), (rrank, rval) = sort_class(left, key.field), sort_class(right, key.field)
        if lrank != rrank:
            return -1 if lrank < rrank else 1
        if lval != rval:
            sign = -1 if lval < rval else 1
            return -sign if key.dir == "desc" else sign
    return 0


def classes(rows: list[Any], order: list[OrderBy]) -> list[tuple[tuple[int, Any], ...]]:
    return [tuple(sort_class(row, key.field) for key in order) for row in rows]


def sorted_rows(rows: list[dict[str, Any]], order: list[OrderBy]) -> list[Any]:
    return apply_query(rows, QuerySpec(order_by=tuple(order), limit=1000)).rows


@SETTINGS
@given(rows=sort_records, order=order_bys, seed=st.integers(0, 2**32))
def test_sort_is_total_and_stable(rows: list[dict[str, Any]], order: list[OrderBy], seed: int) -> None:
    """The sort agrees with a total-order oracle, keeps input order on ties, is idempotent and input-order free."""
    result = sorted_rows(rows, order)
    positions = {id(row): index for index, row in enumerate(rows)}
    assert sorted(map(id, result)) == sorted(map(id, rows))
    for left, right in itertools.pairwise(result):
        verdict = compare(left, right, order)
        assert verdict <= 0
        if verdict == 0:
            assert positions[id(left)] < positions[id(right)]
    assert [id(row) for row in sorted_rows(result, order)] == [id(row) for row in result]
    shuffled = list(rows)
    random.Random(seed).shuffle(shuffled)
    assert classes(sorted_rows(shuffled, order), order) == classes(result, order)


@SETTINGS
@given(
    rows=sort_records,
    order=st.lists(st.builds(OrderBy, field=st.sampled_from(["a", "b"])), max_size=2),
    where=st.one_of(st.none(), valid_filters.map(lambda node: parse_filter(node))),
    limit=st.integers(1, 5),
    offset=st.integers(0, 14),
)
def test_total_and_paging(
    rows: list[dict[str, Any]], order: list[OrderBy], where: Any, limit: int, offset: int
) -> None:
    """total counts every match; rows are that page of the full sorted result and never exceed limit."""
    spec = QuerySpec(where=where, order_by=tuple(order), limit=limit, offset=offset)
    page = apply_query(rows, spec)
    everything = apply_query(rows, QuerySpec(where=where, order_by=tuple(order), limit=1000))
    matching = [row for row in rows if where is None or matches_filter(row, where)]
    assert page.total == everything.total == len(matching)
    assert len(page.rows) <= limit
    assert [id(row) for row in page.rows] == [id(row) for row in everything.rows[offset : offset + limit]]


# -- (3) negation laws ------------------------------------------------------------------------------


@SETTINGS
@given(node=valid_filters, record=records)
def test_not_negates(node: dict[str, Any], record: dict[str, Any]) -> None:
    """not(f) holds exactly when f does not, for any filter and record."""
    parsed = parse_filter(node)
    assert matches_filter(record, {"not": parsed}) is not matches_filter(record, parsed)


@SETTINGS
@given(
    value=json_values,
    expected=scalars,
    options=st.lists(scalars, max_size=3),
    flag=st.booleans(),
)
def test_negated_ops_on_present_field(value: Any, expected: Any, options: list[Any], flag: bool) -> None:
    """On a present field ne is not-eq, nin is not-in and exists:false is not-exists:true."""
    record = {"a": value}

    def holds(op: str, operand: Any) -> bool:
        return matches_filter(record, parse_filter({"field": "a", "op": op, "value": operand}))

    assert holds("ne", expected) is not holds("eq", expected)
    assert holds("nin", options) is not holds("in", options)
    assert holds("exists", flag) is flag


@SETTINGS
@given(predicate=valid_predicates(), record=records)
def test_absent_field_only_exists_false(predicate: dict[str, Any], record: dict[str, Any]) -> None:
    """On an absent field a predicate holds only when it is exists:false; its negation holds otherwise."""
    record.pop(predicate["field"], None)
    parsed = parse_filter(predicate)
    expected = predicate["op"] == "exists" and predicate["value"] is False
    assert matches_filter(record, parsed) is expected
    assert matches_filter(record, {"not": parsed}) is not expected
