"""Structuring untrusted tool arguments into attrs classes, strictly, with one-sentence errors.

cattrs alone coerces (``"false"`` → ``True``, ``5.9`` → ``5``, ``5`` → ``"5"``) and its errors are an
exception group; here primitives are checked by JSON type, unknown keys are refused by name at
every level, and every problem becomes a ``path: message`` sentence.
"""

from __future__ import annotations

import enum
import types
import typing
from typing import Any, TypeVar

import cattrs
from cattrs.errors import ForbiddenExtraKeysError

from ..arguments import ArgumentError
from ..strict import Problem, flatten_errors, json_type_name, make_strict_converter

__all__ = ["ArgumentError", "structure_strict", "unstructure"]

T = TypeVar("T")
_LITERAL: Any = typing.Literal


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _make_converter() -> cattrs.Converter:
    converter = make_strict_converter(forbid_extra_keys=True)

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


_CONVERTER = _make_converter()


def _sentences(problem: Problem) -> list[str]:
    path = ""
    for part in problem.path:  # attributes joined by dots; list indexes and mapping keys in brackets
        path = (f"{path}.{part}" if path else part) if type(part) is str else f"{path}[{part!r}]"
    error = problem.error
    if isinstance(error, ForbiddenExtraKeysError):
        prefix = f"{path}: " if path else ""
        return [f'{prefix}Unrecognized key: "{key}"' for key in sorted(error.extra_fields)]
    where = path or "arguments"
    if isinstance(error, KeyError):
        return [f"{where}: required"]
    return [f"{where}: {str(error) or type(error).__name__}"]


def structure_strict(value: Any, cls: type[T]) -> T:
    """``value`` as an instance of ``cls``; raises :class:`ArgumentError` naming every problem."""
    if not isinstance(value, dict):
        raise ArgumentError(f"arguments: expected object, got {json_type_name(value)}")
    try:
        return _CONVERTER.structure(value, cls)
    except Exception as exc:
        sentences = [sentence for problem in flatten_errors(exc) for sentence in _sentences(problem)]
        raise ArgumentError(*sentences) from None


def unstructure(value: Any) -> Any:
    """The JSON form of an attrs instance (enums by value, datetimes as ISO 8601)."""
    return _CONVERTER.unstructure(value)
