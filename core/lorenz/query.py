"""The read-only query DSL of the ``*_query`` tools: where, order_by, limit, offset and select.

Grammar (core.md §5)::

    Filter    := Predicate | {"and": [Filter, ...]} | {"or": [Filter, ...]} | {"not": Filter}
    Predicate := {"field": <non-empty str>, "op": Op, "value": ..., ["ci": bool]}

Ops: ``eq ne lt lte gt gte`` take a scalar (str, number, bool, None); ``in nin`` a list of
scalars; ``contains`` a string (plus optional ``ci``); ``exists`` a bool. Filters are at most
``MAX_FILTER_DEPTH`` levels deep and ``MAX_FILTER_NODES`` nodes big. Every bad input raises
:class:`QueryError` with the exact message of the reference implementation.

Evaluation follows JavaScript semantics, not Python's:

* equality is strict: a bool equals only a bool (``True`` never equals ``1``), ints and floats
  equal each other, lists and dicts never equal a scalar;
* ordering compares number with number or string with string (strings by UTF-16 code unit);
  anything else is incomparable and the predicate is false;
* a field is present iff it is a key of the record (``None`` counts as present); an absent field
  fails every predicate except ``exists: false``;
* ``contains`` on a list converts each element like JS ``String()``; ``ci`` uses ``str.lower``.

Sorting (deliberate deviation from the reference comparator, which is not a total order when
types are mixed): for each ``order_by`` key, values rank numbers (not bools, not NaN) <
strings < everything else (absent, ``None``, bools, NaN, lists, dicts: all tied). Numbers
compare by value, strings by UTF-16 code units; ``desc`` reverses the order within numbers and
within strings but keeps the ranks, so absent/``None``/other values sort last in either
direction. Ties fall through to the next key and finally to input order (the sort is stable).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, TypeGuard

from attrs import field, frozen

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_FILTER_DEPTH",
    "MAX_FILTER_NODES",
    "MAX_LIMIT",
    "Filter",
    "OrderBy",
    "QueryError",
    "QueryResult",
    "QuerySpec",
    "apply_query",
    "matches_filter",
    "parse_filter",
    "parse_query_spec",
    "parse_select",
    "pick_fields",
    "query_input_properties",
]

MAX_FILTER_DEPTH = 12
MAX_FILTER_NODES = 200
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000

Filter: TypeAlias = dict[str, Any]
"""A parsed filter: a rebuilt plain dict (combinator, or predicate with field/op/value[/ci])."""

SortDirection: TypeAlias = Literal["asc", "desc"]

_COMPARE_OPS = frozenset({"eq", "ne", "lt", "lte", "gt", "gte"})
_SET_OPS = frozenset({"in", "nin"})
_COMBINATORS = ("and", "or", "not")


class QueryError(ValueError):
    """A malformed ``where``/``order_by``/``limit``/``offset``/``select`` argument."""


@frozen
class OrderBy:
    """One sort key: the record field and its direction."""

    field: str
    dir: SortDirection = "asc"


def _order_by_tuple(keys: Iterable[OrderBy]) -> tuple[OrderBy, ...]:
    return tuple(keys)


@frozen
class QuerySpec:
    """A parsed query envelope; ``where`` is ``None`` when every record matches."""

    where: Filter | None = None
    order_by: tuple[OrderBy, ...] = field(default=(), converter=_order_by_tuple)
    limit: int = DEFAULT_LIMIT
    offset: int = 0


@frozen
class QueryResult:
    """One page of matching records (the original objects) and the match count before paging."""

    rows: list[Mapping[str, Any]]
    total: int


# -- value classification ---------------------------------------------------------------------


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_scalar(value: object) -> bool:
    return value is None or isinstance(value, str | int | float)


def _is_array(value: object) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, list | tuple)


def _utf16(text: str) -> bytes:
    # Big-endian UTF-16 bytes order like JS code units; surrogatepass keeps lone surrogates.
    return text.encode("utf-16-be", "surrogatepass")


# -- parse_filter -------------------------------------------------------------------------------


def parse_filter(node: object) -> Filter:
    """Validate a ``where`` filter and return it rebuilt (stray predicate keys dropped).

    Raises :class:`QueryError` with the reference message on the first problem found.
    """
    return _parse_node(node, 1, [0])


def _parse_node(node: object, depth: int, counter: list[int]) -> Filter:
    if depth > MAX_FILTER_DEPTH:
        raise QueryError(f"filter nesting exceeds {MAX_FILTER_DEPTH} levels")
    counter[0] += 1
    if counter[0] > MAX_FILTER_NODES:
        raise QueryError(f"filter has more than {MAX_FILTER_NODES} nodes")
    if not isinstance(node, Mapping):
        raise QueryError("filter: each node must be an object")
    present = [key for key in _COMBINATORS if key in node]
    if present:
        if len(node) != 1:
            raise QueryError("filter: a combinator node must have exactly one of 'and', 'or', or 'not'")
        key = present[0]
        operand = node[key]
        if key == "not":
            return {"not": _parse_node(operand, depth + 1, counter)}
        if not _is_array(operand) or not operand:
            raise QueryError(f"filter: '{key}' must be a non-empty array of filters")
        return {key: [_parse_node(child, depth + 1, counter) for child in operand]}
    return _parse_predicate(node)


def _parse_predicate(node: Mapping[Any, Any]) -> Filter:
    name = node.get("field")
    if not isinstance(name, str) or not name:
        raise QueryError("filter: predicate 'field' must be a non-empty string")
    op = node.get("op")
    if not isinstance(op, str):
        raise QueryError("filter: predicate 'op' must be a string")
    value = node.get("value")
    if op in _COMPARE_OPS:
        if "value" not in node or not _is_scalar(value):
            raise QueryError(f"filter: '{op}' value must be a string, number, boolean, or null")
        return {"field": name, "op": op, "value": value}
    if op in _SET_OPS:
        if not _is_array(value) or not all(_is_scalar(item) for item in value):
            raise QueryError(f"filter: '{op}' value must be an array of scalars")
        return {"field": name, "op": op, "value": list(value)}
    if op == "contains":
        if not isinstance(value, str):
            raise QueryError("filter: 'contains' value must be a string")
        rebuilt: Filter = {"field": name, "op": op, "value": value}
        if "ci" in node:
            if not isinstance(node["ci"], bool):
                raise QueryError("filter: 'contains' ci must be a boolean")
            rebuilt["ci"] = node["ci"]
        return rebuilt
    if op == "exists":
        if not isinstance(value, bool):
            raise QueryError("filter: 'exists' value must be a boolean")
        return {"field": name, "op": op, "value": value}
    raise QueryError(f"filter: unknown op '{op}'")


# -- matches_filter -----------------------------------------------------------------------------


def matches_filter(record: Mapping[str, Any], filter: Filter) -> bool:
    """Whether ``record`` satisfies a filter returned by :func:`parse_filter`. Never raises."""
    if "and" in filter:
        return all(matches_filter(record, child) for child in filter["and"])
    if "or" in filter:
        return any(matches_filter(record, child) for child in filter["or"])
    if "not" in filter:
        return not matches_filter(record, filter["not"])
    name, op, expected = filter["field"], filter["op"], filter["value"]
    if name not in record:
        return op == "exists" and expected is False
    actual = record[name]
    if op == "eq":
        return _strict_equal(actual, expected)
    if op == "ne":
        return not _strict_equal(actual, expected)
    if op == "in":
        return any(_strict_equal(actual, item) for item in expected)
    if op == "nin":
        return not any(_strict_equal(actual, item) for item in expected)
    if op in ("lt", "lte", "gt", "gte"):
        return _ordered(actual, op, expected)
    if op == "contains":
        return _contains(actual, expected, bool(filter.get("ci", False)))
    if op == "exists":
        return expected is True
    return False


def _strict_equal(left: object, right: object) -> bool:
    """JS ``===`` on JSON values: bool only equals bool, numbers equal across int/float."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if _is_number(left) and _is_number(right):
        return left == right
    if isinstance(left, str) and isinstance(right, str):
        return left == right
    return left is None and right is None


def _ordered(actual: object, op: str, expected: object) -> bool:
    left: Any
    right: Any
    if _is_number(actual) and _is_number(expected):
        left, right = actual, expected
    elif isinstance(actual, str) and isinstance(expected, str):
        left, right = _utf16(actual), _utf16(expected)
    else:
        return False
    if op == "lt":
        return bool(left < right)
    if op == "lte":
        return bool(left <= right)
    if op == "gt":
        return bool(left > right)
    return bool(left >= right)


def _contains(actual: object, needle: str, ci: bool) -> bool:
    if isinstance(actual, str):
        haystacks = [actual]
    elif _is_array(actual):
        haystacks = [_js_string(item) for item in actual]
    else:
        return False
    if ci:
        needle = needle.lower()
        return any(needle in hay.lower() for hay in haystacks)
    return any(needle in hay for hay in haystacks)


def _js_string(value: object, _active: frozenset[int] = frozenset()) -> str:
    """JS ``String(value)`` for JSON-like values."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _js_number(value)
    if isinstance(value, list | tuple):
        if id(value) in _active:  # Array.prototype.join renders a cycle as ""
            return ""
        inner = _active | {id(value)}
        return ",".join("" if item is None else _js_string(item, inner) for item in value)
    if isinstance(value, Mapping):
        return "[object Object]"
    return str(value)


def _js_number(value: float) -> str:
    """JS ``Number.prototype.toString()`` for a float (ECMA-262 Number::toString)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr gives the shortest round-tripping digits, as JS does; only the layout differs.
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    point = len(whole) + (int(exp_text) if exp_text else 0)
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        exponent = n - 1
        head = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        text = f"{head}e{'+' if exponent >= 0 else '-'}{abs(exponent)}"
    return sign + text


# -- parse_query_spec ---------------------------------------------------------------------------


def parse_query_spec(args: Mapping[str, Any]) -> QuerySpec:
    """Parse ``where``, ``order_by``, ``limit`` and ``offset`` from tool arguments.

    Keys are checked in that order and the first failure wins. ``where: None`` is ignored; an
    explicit ``None`` for the other three is an error. ``limit`` is clamped to ``MAX_LIMIT``.
    """
    where_arg = args.get("where")
    where = parse_filter(where_arg) if where_arg is not None else None
    order_by: tuple[OrderBy, ...] = ()
    if "order_by" in args:
        order_by = _parse_order_by(args["order_by"])
    limit = DEFAULT_LIMIT
    if "limit" in args:
        parsed = _as_integer(args["limit"])
        if parsed is None or parsed < 1:
            raise QueryError("limit must be a positive integer")
        limit = min(parsed, MAX_LIMIT)
    offset = 0
    if "offset" in args:
        parsed = _as_integer(args["offset"])
        if parsed is None or parsed < 0:
            raise QueryError("offset must be a non-negative integer")
        offset = parsed
    return QuerySpec(where=where, order_by=order_by, limit=limit, offset=offset)


def _parse_order_by(value: object) -> tuple[OrderBy, ...]:
    if not _is_array(value):
        raise QueryError("order_by must be an array")
    keys: list[OrderBy] = []
    for item in value:
        if not isinstance(item, Mapping) or not isinstance(item.get("field"), str) or not item["field"]:
            raise QueryError("order_by items must be { field: string, dir?: 'asc' | 'desc' }")
        direction = item.get("dir", "asc")
        if direction not in ("asc", "desc"):
            raise QueryError("order_by dir must be 'asc' or 'desc'")
        keys.append(OrderBy(field=item["field"], dir=direction))
    return tuple(keys)


def _as_integer(value: object) -> int | None:
    """An integral JS number as an int (``5.0`` counts); ``None`` for bools, NaN, inf, the rest."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


# -- apply_query --------------------------------------------------------------------------------


def apply_query(records: Sequence[Mapping[str, Any]], spec: QuerySpec) -> QueryResult:
    """Filter, sort (stable and total, see the module docstring) and page ``records``."""
    where = spec.where
    rows = [record for record in records if matches_filter(record, where)] if where is not None else list(records)
    # A stable sort per key, least significant first, gives the multi-key order.
    for key in reversed(spec.order_by):
        descending = key.dir == "desc"
        rows.sort(key=_sort_key(key.field, descending), reverse=descending)
    return QueryResult(rows=rows[spec.offset : spec.offset + spec.limit], total=len(rows))


def _sort_key(name: str, descending: bool) -> Callable[[Mapping[str, Any]], tuple[int, Any]]:
    # Ranks are mirrored for `desc` (the sort runs reversed) so numbers < strings < rest holds
    # in both directions; the second slot is only ever compared within one rank.
    number_rank, string_rank, other_rank = (2, 1, 0) if descending else (0, 1, 2)

    def key(record: Mapping[str, Any]) -> tuple[int, Any]:
        if name in record:
            value = record[name]
            if _is_number(value) and value == value:  # NaN is unordered, so it ranks with the rest
                return (number_rank, value)
            if isinstance(value, str):
                return (string_rank, _utf16(value))
        return (other_rank, 0)

    return key


# -- select -------------------------------------------------------------------------------------


def parse_select(value: object) -> list[str] | None:
    """``None`` (use the tool's default fields) or a list of field names; ``[]`` is valid."""
    if value is None:
        return None
    if not _is_array(value) or not all(isinstance(item, str) for item in value):
        raise QueryError("select must be an array of field-name strings")
    return list(value)


def pick_fields(record: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """A new dict of the requested fields the record has (``None`` values kept), in ``fields`` order."""
    return {name: record[name] for name in fields if name in record}


#: Where nested ``where`` filters refer back to: the envelope's properties sit at the schema root.
_FILTER = "#/properties/where"


def _where_keys() -> dict[str, Any]:
    """A ``where`` node's keys (the node is strict: a misspelled key is refused)."""
    return {
        "field": {"type": "string", "description": "Predicate: the row field to test."},
        "op": {
            "enum": ["eq", "ne", "lt", "lte", "gt", "gte", "in", "nin", "contains", "exists"],
            "description": "Predicate: the comparison.",
        },
        "value": {"description": "Predicate: the operand (an array for in/nin, a boolean for exists)."},
        "ci": {"type": "boolean", "description": "For contains: ignore case."},
        "and": {"type": "array", "items": {"$ref": _FILTER}, "description": "Filters that must all match."},
        "or": {"type": "array", "items": {"$ref": _FILTER}, "description": "Filters of which one must match."},
        "not": {"$ref": _FILTER, "description": "A filter that must not match."},
    }


def query_input_properties(select_description: str) -> dict[str, dict[str, Any]]:
    """The inputSchema properties of the query envelope a read tool accepts (put them at the root
    of its inputSchema: nested ``where`` filters refer to ``#/properties/where``).

    ``where``, ``select``, ``order_by``, ``limit`` and ``offset``, described for the agent;
    ``select_description`` says which row fields the tool offers and its default projection.
    """
    return {
        "where": {
            "type": "object",
            "description": (
                "Row filter: {field, op, value} (op eq/ne/lt/lte/gt/gte/in/nin/contains/exists; "
                "contains takes an optional boolean ci) or {and: [...]}, {or: [...]}, {not: {...}}."
            ),
            "properties": _where_keys(),
            "additionalProperties": False,
        },
        "select": {"type": "array", "items": {"type": "string"}, "description": select_description},
        "order_by": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "field": {"type": "string", "description": "The row field to sort by."},
                    "dir": {"enum": ["asc", "desc"], "description": "'asc' (default) or 'desc'."},
                },
                "required": ["field"],
                "additionalProperties": False,
            },
            "description": "Sort keys in priority order: [{field, dir}] with dir 'asc' (default) or 'desc'.",
        },
        "limit": {
            "type": "number",
            "description": f"Maximum rows to return: an integer >= 1, default {DEFAULT_LIMIT}, capped at {MAX_LIMIT}.",
        },
        "offset": {
            "type": "number",
            "description": "Matching rows to skip before the first returned: an integer >= 0.",
        },
    }
