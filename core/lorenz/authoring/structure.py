"""Structuring untrusted tool arguments into attrs classes, strictly, with one-sentence errors.

cattrs alone coerces (``"false"`` → ``True``, ``5.9`` → ``5``, ``5`` → ``"5"``) and its errors are an
exception group; here primitives are checked by JSON type, unknown keys are refused by name at
every level, and every problem becomes a ``path: message`` sentence.
"""

from __future__ import annotations

import enum
import typing
from collections import abc
from typing import Any, TypeVar

import cattrs
from cattrs.errors import (
    ClassValidationError,
    ForbiddenExtraKeysError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.preconf.json import make_converter

__all__ = ["ArgumentError", "make_strict_converter", "structure_strict", "unstructure"]

T = TypeVar("T")
_LITERAL: Any = typing.Literal

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


class ArgumentError(ValueError):
    """Arguments that do not fit the input class; ``problems`` are ``path: message`` sentences."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def _strict(kind: type) -> Any:
    def hook(value: Any, _: Any) -> Any:
        if type(value) is kind or (kind is float and type(value) is int):
            return float(typing.cast(float, value)) if kind is float else value
        msg = f"expected {_JSON_NAMES[kind]}, got {json_type_name(value)}"
        raise TypeError(msg)

    return hook


def _is_union(tp: Any) -> bool:
    import types

    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def make_strict_converter() -> cattrs.Converter:
    """A JSON converter that forbids extra keys and never coerces a primitive."""
    converter = make_converter(forbid_extra_keys=True)
    for kind in (str, int, float, bool):
        converter.register_structure_hook(kind, _strict(kind))

    def structure_sequence(value: Any, tp: Any) -> Any:
        if not isinstance(value, list | tuple):
            msg = f"expected array, got {json_type_name(value)}"
            raise TypeError(msg)
        origin = typing.get_origin(tp) or tp
        args = typing.get_args(tp)
        fixed = origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis)
        if fixed and len(value) != len(args):
            msg = f"expected an array of {len(args)} items, got {len(value)}"
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

    def structure_enum(value: Any, tp: Any) -> Any:
        try:
            return tp(value)
        except ValueError:
            allowed = ", ".join(repr(member.value) for member in tp)
            msg = f"expected one of {allowed}, got {value!r}"
            raise ValueError(msg) from None

    converter.register_structure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, enum.Enum), structure_enum
    )

    def structure_literal(value: Any, tp: Any) -> Any:
        allowed = typing.get_args(tp)
        for option in allowed:
            if value == option and type(value) is type(option):
                return option
        rendered = ", ".join(repr(option) for option in allowed)
        msg = f"expected one of {rendered}, got {value!r}"
        raise ValueError(msg)

    converter.register_structure_hook_func(lambda tp: typing.get_origin(tp) is _LITERAL, structure_literal)

    def structure_union(value: Any, tp: Any) -> Any:
        members = typing.get_args(tp)
        if value is None and type(None) in members:
            return None
        concrete = [member for member in members if member is not type(None)]
        if len(concrete) == 1:
            return converter.structure(value, concrete[0])
        for member in concrete:
            try:
                return converter.structure(value, member)
            except Exception:  # try the next member
                continue
        msg = f"got {json_type_name(value)}, which fits none of the allowed types"
        raise TypeError(msg)

    converter.register_structure_hook_func(_is_union, structure_union)
    return converter


_CONVERTER = make_strict_converter()


def _problems(exc: BaseException, path: str) -> list[str]:
    where = path or "arguments"
    if isinstance(exc, ForbiddenExtraKeysError):
        prefix = f"{path}: " if path else ""
        return [f'{prefix}Unrecognized key: "{key}"' for key in sorted(exc.extra_fields)]
    if isinstance(exc, ClassValidationError):
        out: list[str] = []
        with_notes, without = exc.group_exceptions()
        for inner in without:  # unknown keys first: a misspelled key usually explains a missing one
            out.extend(_problems(inner, path))
        for inner, note in with_notes:
            out.extend(_problems(inner, f"{path}.{note.name}" if path else note.name))
        return out
    if isinstance(exc, IterableValidationError):
        out = []
        indexed, unindexed = exc.group_exceptions()
        for inner, item in indexed:
            out.extend(_problems(inner, f"{path}[{item.index!r}]"))
        for inner in unindexed:
            out.extend(_problems(inner, path))
        return out
    if isinstance(exc, BaseExceptionGroup):
        return [problem for inner in exc.exceptions for problem in _problems(inner, path)]
    if isinstance(exc, KeyError):
        return [f"{where}: required"]
    text = str(exc) or type(exc).__name__
    return [f"{where}: {text}"]


def structure_strict(value: Any, cls: type[T]) -> T:
    """``value`` as an instance of ``cls``; raises :class:`ArgumentError` naming every problem."""
    if not isinstance(value, dict):
        raise ArgumentError([f"arguments: expected object, got {json_type_name(value)}"])
    try:
        return _CONVERTER.structure(value, cls)
    except Exception as exc:
        raise ArgumentError(_problems(exc, "")) from None


def unstructure(value: Any) -> Any:
    """The JSON form of an attrs instance (enums by value, datetimes as ISO 8601)."""
    return _CONVERTER.unstructure(value)
