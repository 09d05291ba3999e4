"""Filter evaluation and sorting for :mod:`lorenz.query`: every record at once, column by column.

Each filter node yields a *match vector*, an int with one byte per record (1 for a match), so
``and``/``or``/``not`` are single int operations. Predicates read per-field columns built once
per query: equality keys, sorted numbers and strings with a stored vector every ``_BLOCK``
records, and the field's strings. Values compare with JavaScript semantics (:mod:`lorenz._jsvalues`).
"""

from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import compress, repeat
from typing import Any, SupportsIndex, TypeVar, cast

from attrs import frozen

from ._jsvalues import is_array, is_number, js_order, js_string

__all__ = ["filter_records", "sort_records"]

Filter = dict[str, Any]
T = TypeVar("T")


class _Marker:
    """A stand-in value that equals only itself."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


_ABSENT = _Marker("absent")  # a record without the field
_UNEQUAL = _Marker("unequal")  # a record value no scalar equals: NaN, a list, an object
_NO_RECORD = _Marker("no record")  # an operand no record value equals: NaN
_TRUE = _Marker("true")  # bools get their own keys, since True == 1 in Python but not in JS
_FALSE = _Marker("false")
# Values of these exact types are their own equality keys (floats are not: NaN); values of
# _UNEQUAL_TYPES equal no scalar.
_SELF_KEYED = frozenset({str, int, type(None), _Marker})
_UNEQUAL_TYPES = frozenset({list, tuple, dict})
_ORDERINGS = frozenset({"lt", "lte", "gt", "gte"})


def _equality_key(value: object) -> object:
    """A hashable key whose ``==`` is JS ``===`` between a record value and a scalar operand."""
    if isinstance(value, bool):
        return _TRUE if value else _FALSE
    if value is None or isinstance(value, str):
        return value
    if is_number(value) and value == value:
        return value
    return _UNEQUAL


def _operand_key(value: object) -> object:
    key = _equality_key(value)
    return _NO_RECORD if key is _UNEQUAL else key


def _operand_keys(operands: list[Any]) -> list[Any]:
    if set(map(type, operands)) <= _SELF_KEYED:
        return operands
    return list(map(_operand_key, operands))


# -- match vectors ------------------------------------------------------------------------------


def _vector(flags: Iterable[SupportsIndex]) -> int:
    """The match vector of one truth value per record."""
    return int.from_bytes(bytes(flags), "big")


def _from_indices(size: int, indices: Iterable[int]) -> int:
    """The match vector of the records at ``indices`` out of ``size``."""
    flags = bytearray(size)
    for index in indices:
        flags[index] = 1
    return int.from_bytes(flags, "big")


class _Ordered:
    """The records whose field holds one kind of value (numbers, or strings in ``js_order``),
    sorted by it. A range predicate is a bisect, then the vector of a prefix of that order: a
    stored vector every ``_BLOCK`` records, plus fewer than ``_BLOCK`` records set one by one."""

    def __init__(self, size: int, values: list[Any], indices: list[int]) -> None:
        order = sorted(range(len(values)), key=values.__getitem__)
        self.values = list(map(values.__getitem__, order))
        self.indices = list(map(indices.__getitem__, order))
        self.size = size
        self.prefixes = [0]  # prefixes[b]: the vector of the first b * _BLOCK records
        flags = bytearray(size)
        for start in range(0, len(order), _BLOCK):
            for index in self.indices[start : start + _BLOCK]:
                flags[index] = 1
            self.prefixes.append(int.from_bytes(flags, "big"))

    def _first(self, count: int) -> int:
        block = count // _BLOCK
        return self.prefixes[block] | _from_indices(self.size, self.indices[block * _BLOCK : count])

    def select(self, op: str, operand: Any) -> int:
        """The vector of the records whose value is ``op`` (lt, lte, gt, gte) the operand."""
        if operand != operand:  # NaN: every comparison is false
            return 0
        if op == "lt":
            return self._first(bisect_left(self.values, operand))
        if op == "lte":
            return self._first(bisect_right(self.values, operand))
        at_most = bisect_right(self.values, operand) if op == "gt" else bisect_left(self.values, operand)
        return self.prefixes[-1] ^ self._first(at_most)


_BLOCK = 256


@frozen
class _Haystacks:
    """What ``contains`` searches in one field: ``texts``, each record's string value (``()``,
    which contains nothing, for other values; empty when no value is a string), and
    ``elements``, the JS ``String()`` of each element of the list values, with their record's
    index in ``owners``."""

    texts: list[Any]
    elements: list[str]
    owners: list[int]

    def lowered(self) -> _Haystacks:
        texts = [t.lower() if isinstance(t, str) else t for t in self.texts]
        return _Haystacks(texts, [e.lower() for e in self.elements], self.owners)


def filter_records(records: Sequence[Mapping[str, Any]], where: Filter) -> list[Mapping[str, Any]]:
    """The records (the same objects, in order) that satisfy a filter from ``parse_filter``."""
    matched = _Columns(records).match(where)
    return list(compress(records, matched.to_bytes(len(records), "big")))


class _Columns:
    """The records seen column-wise, each column built on first use."""

    def __init__(self, records: Sequence[Mapping[str, Any]]) -> None:
        self.records = records
        self.size = len(records)
        self.everything = _vector(repeat(1, self.size))
        self.fields: set[str] = set().union(*records)
        self._cache: dict[tuple[str, str], Any] = {}
        self._equal: dict[tuple[str, object], int] = {}

    def _column(self, kind: str, name: str, build: Callable[[], T]) -> T:
        key = (kind, name)
        if key not in self._cache:
            self._cache[key] = build()
        return cast(T, self._cache[key])

    def values(self, name: str) -> list[Any]:
        """``record[name]`` per record, ``_ABSENT`` where the field is missing."""
        return self._column("values", name, lambda: [record.get(name, _ABSENT) for record in self.records])

    def types(self, name: str) -> set[type]:
        """The types of the field's values (``_Marker`` where it is missing)."""
        return self._column("types", name, lambda: set(map(type, self.values(name))))

    def _holds(self, name: str, kind: tuple[type, ...]) -> bool:
        """Whether some record's value is an instance of ``kind`` (bools are not numbers)."""
        return any(issubclass(t, kind) and t is not bool for t in self.types(name))

    def present(self, name: str) -> int:
        if name not in self.fields:
            return 0
        return self._column("present", name, lambda: _vector(map(operator.is_not, self.values(name), repeat(_ABSENT))))

    def keys(self, name: str) -> list[Any]:
        """The equality key per record (``_ABSENT`` where the field is missing)."""

        def build() -> list[Any]:
            values, types = self.values(name), self.types(name)
            if types <= _SELF_KEYED:
                return values
            if types <= _SELF_KEYED | _UNEQUAL_TYPES:
                return [v if type(v) in _SELF_KEYED else _UNEQUAL for v in values]
            return list(map(_equality_key, values))

        return self._column("keys", name, build)

    def last(self, name: str) -> dict[object, int]:
        """The index of the last record holding each equality key."""
        return self._column("last", name, lambda: dict(zip(self.keys(name), range(self.size), strict=True)))

    def equal(self, name: str, key: object) -> int:
        """The vector of the records whose value is ``===`` the operand with this key: none when
        no record holds the key, one when no key repeats, else one pass over the keys."""
        cached = self._equal.get((name, key))
        if cached is None:
            last = self.last(name)
            if key not in last:
                cached = 0
            elif len(last) == self.size:
                cached = 1 << 8 * (self.size - 1 - last[key])
            else:
                cached = _vector(map(operator.eq, self.keys(name), repeat(key)))
            self._equal[name, key] = cached
        return cached

    def equal_any(self, name: str, operands: list[Any]) -> int:
        """The vector of the records whose value is ``===`` one of the operands (as for ``equal``)."""
        last = self.last(name)
        keys = set(filter(last.__contains__, _operand_keys(operands)))
        if not keys:
            return 0
        if len(last) == self.size:
            return _from_indices(self.size, map(last.__getitem__, keys))
        return _vector(map(keys.__contains__, self.keys(name)))

    def numbers(self, name: str) -> _Ordered | None:
        def build() -> _Ordered | None:
            if not self._holds(name, (int, float)):
                return None
            values = self.values(name)
            indices = [i for i, v in enumerate(values) if is_number(v) and v == v]  # NaN orders nowhere
            return _Ordered(self.size, list(map(values.__getitem__, indices)), indices)

        return self._column("numbers", name, build)

    def strings(self, name: str) -> _Ordered | None:
        def build() -> _Ordered | None:
            if not self._holds(name, (str,)):
                return None
            values = self.values(name)
            if self.types(name) == {str}:
                indices, texts = list(range(self.size)), values
            else:
                indices = list(compress(range(self.size), map(isinstance, values, repeat(str))))
                texts = list(map(values.__getitem__, indices))
            if not all(map(str.isascii, texts)):
                texts = list(map(js_order, texts))
            return _Ordered(self.size, texts, indices)

        return self._column("strings", name, build)

    def haystacks(self, name: str, ci: bool) -> _Haystacks:
        """What ``contains`` searches, lowercased for ``ci``."""
        if ci:
            return self._column("haystacks-ci", name, lambda: self.haystacks(name, False).lowered())
        return self._column("haystacks", name, lambda: self._haystacks(name))

    def _haystacks(self, name: str) -> _Haystacks:
        values = self.values(name)
        texts = [v if isinstance(v, str) else () for v in values] if self._holds(name, (str,)) else []
        elements: list[str] = []
        owners: list[int] = []
        if self._holds(name, (list, tuple)):
            for index, value in enumerate(values):
                if is_array(value):
                    elements += map(js_string, value)
                    owners += repeat(index, len(value))
        return _Haystacks(texts, elements, owners)

    def match(self, node: Filter) -> int:
        """The match vector of a parsed filter node."""
        if "and" in node:
            matched = self.everything
            for child in node["and"]:
                matched &= self.match(child)
                if not matched:
                    break
            return matched
        if "or" in node:
            matched = 0
            for child in node["or"]:
                matched |= self.match(child)
                if matched == self.everything:
                    break
            return matched
        if "not" in node:
            return self.everything ^ self.match(node["not"])
        return self._predicate(node["field"], node["op"], node["value"], bool(node.get("ci", False)))

    def _predicate(self, name: str, op: str, operand: Any, ci: bool) -> int:
        present = self.present(name)
        if op == "exists":
            return present if operand is True else self.everything ^ present
        if not present:  # an absent field fails every other predicate
            return 0
        if op in ("eq", "ne"):
            equal = self.equal(name, _operand_key(operand))
            return equal if op == "eq" else present ^ equal
        if op in ("in", "nin"):
            found = self.equal_any(name, operand)
            return found if op == "in" else present ^ found
        if op == "contains":
            return self._contains(name, operand.lower() if ci else operand, ci)
        if op not in _ORDERINGS:
            return 0
        ordered: _Ordered | None = None
        if is_number(operand):
            ordered = self.numbers(name)
        elif isinstance(operand, str):
            ordered, operand = self.strings(name), js_order(operand)
        return 0 if ordered is None else ordered.select(op, operand)

    def _contains(self, name: str, needle: str, ci: bool) -> int:
        hay = self.haystacks(name, ci)
        found = _vector(map(operator.contains, hay.texts, repeat(needle))) if hay.texts else 0
        if hay.elements:
            hits = compress(hay.owners, map(operator.contains, hay.elements, repeat(needle)))
            found |= _from_indices(self.size, hits)
        return found


# -- sorting ------------------------------------------------------------------------------------

_Row = TypeVar("_Row", bound=Mapping[str, Any])


def sort_records(rows: list[_Row], keys: Iterable[tuple[str, bool]]) -> list[_Row]:
    """``rows`` stably sorted by the ``(field, descending)`` keys, first key first (the order is
    described in :mod:`lorenz.query`)."""
    firsts: dict[str, bool] = {}
    for name, descending in keys:  # a repeated field orders nothing its first use left tied
        firsts.setdefault(name, descending)
    # A stable sort per key, least significant first, gives the multi-key order.
    for name, descending in reversed(firsts.items()):
        values = [row.get(name, _ABSENT) for row in rows]
        types = set(map(type, values))
        if types <= {str}:
            ranked: list[Any] = values if all(map(str.isascii, values)) else list(map(js_order, values))
        elif types <= {int}:
            ranked = values
        elif any(issubclass(t, str | int | float) and t is not bool for t in types):
            ranks = (2, 1, 0) if descending else (0, 1, 2)
            ranked = [_ranked(value, ranks) for value in values]
        else:  # nothing but values that rank last and tie
            continue
        rows = [rows[i] for i in sorted(range(len(rows)), key=ranked.__getitem__, reverse=descending)]
    return rows


def _ranked(value: object, ranks: tuple[int, int, int]) -> tuple[int, Any]:
    # Ranks are mirrored for `desc` (the sort runs reversed) so numbers < strings < rest holds in
    # both directions; the second slot is only ever compared within one rank.
    if is_number(value) and value == value:  # NaN is unordered, so it ranks with the rest
        return (ranks[0], value)
    if isinstance(value, str):
        return (ranks[1], js_order(value))
    return (ranks[2], 0)
