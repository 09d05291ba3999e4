"""The one cattrs setup for untrusted maps (workflow config, tool arguments, pack options).

cattrs alone structures a primitive by calling its type (``"false"`` → ``True``, ``5.9`` → ``5``,
``5`` → ``"5"``, ``"abc"`` → ``('a', 'b', 'c')``); the hooks here refuse that instead, and
:func:`flatten_errors` turns cattrs' nested exception groups into a flat list of problems, each
with its key path, for the caller to render in its own words.
"""

from __future__ import annotations

import typing
from collections import abc
from typing import Any

from attrs import frozen
from cattrs import Converter
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.preconf.json import make_converter

__all__ = ["Key", "Problem", "WrongType", "flatten_errors", "json_type_name", "make_strict_converter"]

_JSON_NAMES: dict[type, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    type(None): "null",
    list: "array",
    dict: "object",
}


def json_type_name(value: Any) -> str:
    """The JSON name of a value's type (``"string"``, ``"integer"``, ...)."""
    for kind, name in _JSON_NAMES.items():
        if type(value) is kind:
            return name
    return type(value).__name__


class WrongType(TypeError):
    """A value of another JSON type than the one expected: ``expected string, got integer``."""

    def __init__(self, expected: str, value: Any) -> None:
        super().__init__(f"expected {expected}, got {json_type_name(value)}")
        #: The JSON name of the expected type (``"string"``, ``"array"``, ...).
        self.expected = expected


class Key(str):
    """A mapping key in a :attr:`Problem.path` (a plain ``str`` there is an attribute name)."""

    __slots__ = ()


@frozen
class Problem:
    """One structuring failure: where (attribute names, list indexes, :class:`Key`\\ s) and what."""

    path: tuple[str | int, ...]
    error: Exception


def _primitive(kind: type) -> Any:
    # bool is not an int (``type() is``, not isinstance); an int is a valid float
    def hook(value: Any, _: Any) -> Any:
        if type(value) is kind:
            return value
        if kind is float and type(value) is int:
            return float(value)
        raise WrongType(_JSON_NAMES[kind], value)

    return hook


def make_strict_converter(*, forbid_extra_keys: bool) -> Converter:
    """A JSON converter that never coerces a primitive and takes only lists/tuples as sequences."""
    converter = make_converter(forbid_extra_keys=forbid_extra_keys)
    for kind in (str, int, float, bool):
        converter.register_structure_hook(kind, _primitive(kind))

    def structure_sequence(value: Any, tp: Any) -> Any:
        if not isinstance(value, list | tuple):  # never a str, bytes or dict
            raise WrongType("array", value)
        origin = typing.get_origin(tp) or tp
        args = typing.get_args(tp)
        fixed = origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis)
        if fixed and len(value) != len(args):
            msg = f"must have exactly {len(args)} items"
            raise ValueError(msg)
        items: list[Any] = []
        errors: list[Exception] = []
        for index, item in enumerate(value):
            item_type = args[index] if fixed else (args[0] if args else Any)
            try:
                items.append(converter.structure(item, item_type))
            except Exception as exc:
                exc.__notes__ = [*getattr(exc, "__notes__", []), IterableValidationNote("", index, item_type)]
                errors.append(exc)
        if errors:
            raise IterableValidationError("invalid items", errors, tp)
        if origin in (tuple, set, frozenset):
            return origin(items)
        return items

    def is_sequence(tp: Any) -> bool:
        return (typing.get_origin(tp) or tp) in (list, tuple, set, frozenset, abc.Sequence)

    converter.register_structure_hook_func(is_sequence, structure_sequence)
    return converter


def flatten_errors(exc: BaseException) -> list[Problem]:
    """Every leaf failure in ``exc`` with its path, in order; errors without a field come first
    (an unknown key usually explains a missing one)."""
    return list(_flatten(exc, ()))


def _flatten(exc: BaseException, path: tuple[str | int, ...]) -> abc.Iterator[Problem]:
    if isinstance(exc, ClassValidationError):
        with_notes, without = exc.group_exceptions()
        for inner in without:
            yield from _flatten(inner, path)
        for inner, note in with_notes:
            name = note.name if isinstance(note, AttributeValidationNote) else str(note)
            yield from _flatten(inner, (*path, name))
    elif isinstance(exc, IterableValidationError):
        indexed, unindexed = exc.group_exceptions()
        for inner, item in indexed:
            index = item.index
            part = index if type(index) is int else Key(index)
            yield from _flatten(inner, (*path, part))
        for inner in unindexed:
            yield from _flatten(inner, path)
    elif isinstance(exc, BaseExceptionGroup):
        for member in exc.exceptions:
            yield from _flatten(member, path)
    elif isinstance(exc, Exception):
        yield Problem(path, exc)
