"""A typed tool's call plan: what every call of it needs, worked out once, at its first call,
instead of on each call — the argument structuring hook and keyword check, the output's
unstructuring hook and ``omit_none`` keys, and whether its default text may be written by the
fast encoder (an output class whose fields are all plain JSON types)."""

from __future__ import annotations

import datetime as dt
import enum
import json
import types
import typing
from collections import abc
from collections.abc import Callable
from typing import Any, Protocol

import attrs
from attrs import frozen

from lorenz.toolcall.wire import fast_pretty_json, pretty_json

from .schema import KeywordCheck, wire_name
from .structure import structurer, unstructurer

__all__ = ["CallPlan", "call_plan", "default_text"]

_PLAIN_SCALARS = (str, int, bool, type(None), dt.datetime, dt.date)  # dates unstructure to ISO strings


@frozen
class CallPlan:
    """What one tool's calls share."""

    #: Raw arguments (a dict) to the input instance; raises :class:`lorenz.ArgumentError`.
    structure: Callable[[Any], Any]
    keywords: KeywordCheck | None
    #: An instance of exactly the output class to its JSON form (``None``: the tool has no output class).
    unstructure: Callable[[Any], Any] | None
    #: Wire keys of the output's ``omit_none`` fields.
    omitted: tuple[str, ...]
    #: Whether every value of the output class's JSON form is plain data by its fields' types.
    plain_output: bool


class Defined(Protocol):
    """What a plan is built from: a tool's definition (a :class:`lorenz.authoring.tool.Tool`)."""

    @property
    def input(self) -> type[Any]: ...
    @property
    def output(self) -> type[Any] | None: ...
    @property
    def keywords(self) -> KeywordCheck | None: ...


def call_plan(tool: Defined) -> CallPlan:
    """The plan of ``tool`` (built from its definition; the tool caches it)."""
    output = tool.output
    omitted: tuple[str, ...] = ()
    if output is not None and attrs.has(output):
        omitted = tuple(wire_name(output, f) for f in attrs.fields(output) if (f.metadata or {}).get("omit_none"))
    return CallPlan(
        structure=structurer(tool.input),
        keywords=tool.keywords,
        unstructure=unstructurer(output) if output is not None else None,
        omitted=omitted,
        plain_output=output is not None and _plain(output, set()),
    )


def default_text(data: Any, plain: bool) -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False, default=str)``; ``plain``: ``data`` is
    known to be plain data (a :attr:`CallPlan.plain_output`), so it goes straight to the fast
    encoder without a walk to check it."""
    if not plain:
        return pretty_json(data)
    fast = fast_pretty_json(data)  # None: a lone surrogate, which only the json module writes
    return fast.decode("utf-8") if fast is not None else json.dumps(data, indent=2, ensure_ascii=False)


def _plain(tp: Any, seen: set[Any]) -> bool:
    """Whether the JSON form of a value of type ``tp`` is plain data whatever the value: no float
    (pydantic_core writes some with other exponents), nothing typed ``Any``."""
    if tp in _PLAIN_SCALARS:
        return True
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return all(type(member.value) in (str, int) for member in tp)
    if isinstance(tp, type) and attrs.has(tp):
        if tp in seen:  # a recursive class: decided by its other fields
            return True
        seen.add(tp)
        attrs.resolve_types(tp)
        return all(_plain(field.type, seen) for field in attrs.fields(tp))
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Literal:
        return all(type(arg) in (str, int, bool, type(None)) for arg in args)
    if origin in (typing.Union, types.UnionType):
        return all(_plain(arg, seen) for arg in args)
    if origin in (list, abc.Sequence):
        return len(args) == 1 and _plain(args[0], seen)
    if origin is tuple:
        members = args[:1] if len(args) == 2 and args[1] is Ellipsis else args
        return bool(members) and all(_plain(arg, seen) for arg in members)
    if origin in (dict, abc.Mapping):
        return len(args) == 2 and args[0] is str and _plain(args[1], seen)
    return False
