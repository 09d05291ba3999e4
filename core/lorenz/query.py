"""The read-only query DSL of the ``*_query`` tools: where, order_by, limit, offset and select.

A filter is ``{"field": f, "op": op, "value": v[, "ci": bool]}`` or ``{"and"|"or": [filter, ...]}``
or ``{"not": filter}``; ops are ``eq ne lt lte gt gte in nin contains exists``. Every bad or
oversized input raises :class:`QueryError` naming the argument and the bound (the ``MAX_*``
constants, checked before contents). Values compare with JavaScript semantics
(:mod:`lorenz._jsvalues`); sorting ranks numbers < strings < everything else, keeps those ranks
under ``desc`` and is stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import compress, repeat
from typing import Any, Literal, TypeAlias, cast

from attrs import define, field, frozen

from ._jsvalues import is_array
from ._query_eval import filter_records, sort_records
from .query_schema import (
    DEFAULT_LIMIT,
    MAX_CONTAINS,
    MAX_FILTER_DEPTH,
    MAX_FILTER_NODES,
    MAX_IN_VALUES,
    MAX_LIMIT,
    MAX_ORDER_BY_KEYS,
    MAX_SELECT_FIELDS,
    MAX_STRING_LENGTH,
    query_input_properties,
)

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_CONTAINS",
    "MAX_FILTER_DEPTH",
    "MAX_FILTER_NODES",
    "MAX_IN_VALUES",
    "MAX_LIMIT",
    "MAX_ORDER_BY_KEYS",
    "MAX_SELECT_FIELDS",
    "MAX_STRING_LENGTH",
    "Filter",
    "OrderBy",
    "QueryError",
    "QueryResult",
    "QuerySpec",
    "apply_query",
    "check_list_argument",
    "matches_filter",
    "parse_filter",
    "parse_query_spec",
    "parse_select",
    "pick_fields",
    "query_echo",
    "query_input_properties",
]

Filter: TypeAlias = dict[str, Any]
"""A parsed filter: a rebuilt plain dict (combinator, or predicate with field/op/value[/ci])."""

SortDirection: TypeAlias = Literal["asc", "desc"]

_COMPARE_OPS = frozenset({"eq", "ne", "lt", "lte", "gt", "gte"})
_SET_OPS = frozenset({"in", "nin"})
_COMBINATORS = ("and", "or", "not")
_SCALAR_TYPES = (str, int, float, type(None))  # bool is an int


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


def query_echo(spec: QuerySpec) -> dict[str, Any]:
    """``spec`` as parsed, for a tool's ``ctx.enrich.echo``: ``where`` and ``order_by`` when given
    (every sort key with its direction), ``limit`` and ``offset`` always (defaults filled in)."""
    echo: dict[str, Any] = {}
    if spec.where is not None:
        echo["where"] = spec.where
    if spec.order_by:
        echo["order_by"] = [{"field": key.field, "dir": key.dir} for key in spec.order_by]
    return {**echo, "limit": spec.limit, "offset": spec.offset}


# -- parse_filter -------------------------------------------------------------------------------


def parse_filter(node: object) -> Filter:
    """Validate a ``where`` filter and return it rebuilt (stray predicate keys dropped).

    Raises :class:`QueryError` on the first problem found.
    """
    return _parse_node(node, 1, _Tally())


@define
class _Tally:
    """What a filter has used so far of the bounds on its whole size."""

    nodes: int = 0
    contains: int = 0


def _parse_node(node: object, depth: int, tally: _Tally) -> Filter:
    if depth > MAX_FILTER_DEPTH:
        raise QueryError(f"filter nesting exceeds {MAX_FILTER_DEPTH} levels")
    tally.nodes += 1
    if tally.nodes > MAX_FILTER_NODES:
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
            return {"not": _parse_node(operand, depth + 1, tally)}
        if not is_array(operand) or not operand:
            raise QueryError(f"filter: '{key}' must be a non-empty array of filters")
        return {key: [_parse_node(child, depth + 1, tally) for child in operand]}
    return _parse_predicate(node, tally)


def _parse_predicate(node: Mapping[Any, Any], tally: _Tally) -> Filter:
    name = node.get("field")
    if not isinstance(name, str) or not name:
        raise QueryError("filter: predicate 'field' must be a non-empty string")
    if len(name) > MAX_STRING_LENGTH:
        raise QueryError(f"filter: predicate 'field' is longer than {MAX_STRING_LENGTH} characters")
    op = node.get("op")
    if not isinstance(op, str):
        raise QueryError("filter: predicate 'op' must be a string")
    if len(op) > MAX_STRING_LENGTH:  # an unknown op is quoted back
        raise QueryError(f"filter: predicate 'op' is longer than {MAX_STRING_LENGTH} characters")
    value = node.get("value")
    if op in _COMPARE_OPS:
        if "value" not in node or not isinstance(value, _SCALAR_TYPES):
            raise QueryError(f"filter: '{op}' value must be a string, number, boolean, or null")
        _check_string(op, value)
        return {"field": name, "op": op, "value": value}
    if op in _SET_OPS:
        if not is_array(value):
            raise QueryError(f"filter: '{op}' value must be an array of scalars")
        check_list_argument(f"filter: '{op}' value", value)
        if not all(map(isinstance, value, repeat(_SCALAR_TYPES))):
            raise QueryError(f"filter: '{op}' value must be an array of scalars")
        return {"field": name, "op": op, "value": list(value)}
    if op == "contains":
        tally.contains += 1
        if tally.contains > MAX_CONTAINS:
            raise QueryError(f"filter has more than {MAX_CONTAINS} 'contains' predicates")
        if not isinstance(value, str):
            raise QueryError("filter: 'contains' value must be a string")
        _check_string(op, value)
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


def _check_string(op: str, value: object) -> None:
    if isinstance(value, str) and len(value) > MAX_STRING_LENGTH:
        raise QueryError(f"filter: '{op}' value is longer than {MAX_STRING_LENGTH} characters")


def check_list_argument(name: str, items: Sequence[object]) -> None:
    """Refuse a list argument of a query tool (an ``in`` list, ids, states, channels) holding more
    than ``MAX_IN_VALUES`` items or a string longer than ``MAX_STRING_LENGTH``, before its items
    are looked at any further. Raises :class:`QueryError` naming ``name``."""
    if len(items) > MAX_IN_VALUES:
        raise QueryError(f"{name} has more than {MAX_IN_VALUES} items")
    if _longest_string(items) > MAX_STRING_LENGTH:
        raise QueryError(f"{name} has a string longer than {MAX_STRING_LENGTH} characters")


def _longest_string(items: Sequence[object]) -> int:
    """The length of the longest string among ``items`` (0 for none), without a Python loop."""
    strings = cast(Iterable[str], compress(items, map(isinstance, items, repeat(str))))
    return max(map(len, strings), default=0)


# -- matches_filter -----------------------------------------------------------------------------


def matches_filter(record: Mapping[str, Any], filter: Filter) -> bool:
    """Whether ``record`` satisfies a filter returned by :func:`parse_filter`. Never raises."""
    return bool(filter_records([record], filter))


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
    if not is_array(value):
        raise QueryError("order_by must be an array")
    if len(value) > MAX_ORDER_BY_KEYS:
        raise QueryError(f"order_by has more than {MAX_ORDER_BY_KEYS} keys")
    keys: list[OrderBy] = []
    for item in value:
        if not isinstance(item, Mapping) or not isinstance(item.get("field"), str) or not item["field"]:
            raise QueryError("order_by items must be { field: string, dir?: 'asc' | 'desc' }")
        if len(item["field"]) > MAX_STRING_LENGTH:
            raise QueryError(f"order_by field is longer than {MAX_STRING_LENGTH} characters")
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
    rows = filter_records(records, where) if where is not None else list(records)
    rows = sort_records(rows, [(key.field, key.dir == "desc") for key in spec.order_by])
    return QueryResult(rows=rows[spec.offset : spec.offset + spec.limit], total=len(rows))


# -- select -------------------------------------------------------------------------------------


def parse_select(value: object) -> list[str] | None:
    """``None`` (use the tool's default fields) or a list of field names; ``[]`` is valid."""
    if value is None:
        return None
    if not is_array(value):
        raise QueryError("select must be an array of field-name strings")
    if len(value) > MAX_SELECT_FIELDS:
        raise QueryError(f"select has more than {MAX_SELECT_FIELDS} fields")
    if not all(isinstance(item, str) for item in value):
        raise QueryError("select must be an array of field-name strings")
    if _longest_string(value) > MAX_STRING_LENGTH:
        raise QueryError(f"select has a field name longer than {MAX_STRING_LENGTH} characters")
    return list(value)


def pick_fields(record: Mapping[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """A new dict of the requested fields the record has (``None`` values kept), in ``fields`` order."""
    return {name: record[name] for name in fields if name in record}
