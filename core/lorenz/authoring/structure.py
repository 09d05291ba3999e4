"""Structuring untrusted tool arguments into attrs classes, strictly, with one-sentence errors.

cattrs alone coerces (``"false"`` → ``True``, ``5.9`` → ``5``, ``5`` → ``"5"``) and its errors are an
exception group; here primitives are checked by JSON type, unknown keys are refused by name at
every level, and every problem becomes an :class:`~lorenz.arguments.ArgumentProblem` worded like
the host's JSON Schema check words it (``origin.x: must be a number``, ``Unrecognized key: "z"``).
cattrs loads with the first call, not with a pack's import: listing tools needs none of it.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
from collections import abc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from lorenz.arguments import ArgumentError, ArgumentProblem, must_be_one_of, must_be_type, unrecognized_key

from .schema import wire_name

if TYPE_CHECKING:
    import cattrs

    from lorenz.strict import Problem

__all__ = ["ArgumentError", "structure_strict", "unstructure"]

T = TypeVar("T")
_LITERAL: Any = typing.Literal


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _renames(cls: type) -> dict[str, Any]:
    """cattrs overrides giving each ``describe(wire=...)`` field of ``cls`` its wire key."""
    from cattrs.gen import override

    attrs.resolve_types(cls)
    fields = attrs.fields(cls)
    return {f.name: override(rename=wire_name(cls, f)) for f in fields if wire_name(cls, f) != f.name}


def _wire_names(cls: Any) -> list[str]:
    """The keys ``cls`` takes on the wire (a private attribute ``_x`` by its alias ``x``)."""
    if not attrs.has(cls):
        return []
    names = [(wire_name(cls, field), field) for field in attrs.fields(cls)]
    return [name if name != field.name else field.alias or name for name, field in names]


def _wire_path(cls: Any, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """``path`` with each attribute name replaced by its field's wire key, following the types down."""
    from lorenz.strict import Key  # cattrs: on the first call, not when listing

    out: list[str | int] = []
    tp: Any = cls
    for part in path:
        owner = _owner(tp, part) if type(part) is str else None
        if owner is not None:
            field = attrs.fields_dict(owner)[str(part)]
            out.append(wire_name(owner, field))
            tp = field.type
            continue
        out.append(part)
        tp = _member(tp, dict_value=isinstance(part, Key))
    return tuple(out)


def _owner(tp: Any, name: str) -> type | None:
    """The attrs class in ``tp`` (itself, or a member of its union) that has a field ``name``."""
    options = typing.get_args(tp) if _is_union(tp) else (tp,)
    for option in options:
        if isinstance(option, type) and attrs.has(option) and name in attrs.fields_dict(option):
            return option
    return None


def _member(tp: Any, *, dict_value: bool) -> Any:
    """The type of one item (or, ``dict_value``, one value) of the collection type ``tp``."""
    options = typing.get_args(tp) if _is_union(tp) else (tp,)
    for option in options:
        args = typing.get_args(option)
        if args:
            return args[-1] if dict_value or len(args) < 2 else args[0]
    return Any


@functools.cache
def _converter() -> cattrs.Converter:
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn

    from lorenz.strict import WrongType, make_strict_converter  # cattrs: on the first call, not when listing

    converter = make_strict_converter(forbid_extra_keys=True)

    def objects_only(tp: Any) -> Any:
        inner: Any
        renames = _renames(tp) if attrs.has(tp) else {}
        if renames:
            inner = make_dict_structure_fn(
                tp,
                converter,
                _cattrs_forbid_extra_keys=converter.forbid_extra_keys,
                _cattrs_detailed_validation=converter.detailed_validation,
                **renames,
            )
        elif attrs.has(tp):
            inner = converter.gen_structure_attrs_fromdict(tp)
        else:
            inner = converter.gen_structure_mapping(tp)

        def structure_object(value: Any, _: Any) -> Any:
            if not isinstance(value, dict):
                raise WrongType("object", value)
            return inner(value, tp)

        return structure_object

    def is_object(tp: Any) -> bool:
        return attrs.has(tp) or (typing.get_origin(tp) or tp) in (dict, abc.Mapping)

    converter.register_structure_hook_factory(is_object, objects_only)
    converter.register_unstructure_hook_factory(
        lambda tp: attrs.has(tp) and bool(_renames(tp)),
        lambda tp: make_dict_unstructure_fn(tp, converter, **_renames(tp)),
    )

    def structure_enum(value: Any, tp: Any) -> Any:
        try:
            return tp(value)
        except ValueError:
            raise ValueError(must_be_one_of(member.value for member in tp)) from None

    converter.register_structure_hook_func(
        lambda tp: isinstance(tp, type) and issubclass(tp, enum.Enum), structure_enum
    )

    def structure_literal(value: Any, tp: Any) -> Any:
        allowed = typing.get_args(tp)
        for option in allowed:
            if value == option and type(value) is type(option):
                return option
        raise ValueError(must_be_one_of(allowed))

    converter.register_structure_hook_func(lambda tp: typing.get_origin(tp) is _LITERAL, structure_literal)

    def structure_union(value: Any, tp: Any) -> Any:
        members = typing.get_args(tp)
        nullable = type(None) in members
        if value is None and nullable:
            return None
        expected: list[str] = []
        for member in (member for member in members if member is not type(None)):
            try:
                return converter.structure(value, member)
            except WrongType as exc:  # the value's type fits no member: say which types would
                expected.append(exc.expected)
            except Exception:
                if len(members) - nullable == 1:  # the one real member's own problem (a nested key, ...)
                    raise
                expected.append("")
        if all(expected):
            raise WrongType(" or ".join([*expected, "null"] if nullable else expected), value)
        raise ValueError("matches none of the allowed shapes")

    converter.register_structure_hook_func(_is_union, structure_union)
    return converter


def _located(problem: Problem, cls: type) -> list[ArgumentProblem]:
    from cattrs.errors import ForbiddenExtraKeysError

    from lorenz.strict import WrongType  # cattrs: on the first call, not when listing

    path = tuple(part if type(part) is int else str(part) for part in _wire_path(cls, problem.path))
    error = problem.error
    if isinstance(error, ForbiddenExtraKeysError):
        from lorenz.settings.suggest import did_you_mean  # only for an unknown key

        known = _wire_names(error.cl)
        return [
            ArgumentProblem(path, unrecognized_key(key) + did_you_mean(key, known))
            for key in sorted(error.extra_fields)
        ]
    if isinstance(error, KeyError):
        return [ArgumentProblem(path, "required")]
    if isinstance(error, WrongType):
        return [ArgumentProblem(path, must_be_type(error.expected.split(" or ")))]
    return [ArgumentProblem(path, str(error) or type(error).__name__)]


def structure_strict(value: Any, cls: type[T]) -> T:
    """``value`` as an instance of ``cls``; raises :class:`ArgumentError` naming every problem."""
    return structurer(cls)(value)


def structurer(cls: type[T]) -> Callable[[Any], T]:
    """:func:`structure_strict` into ``cls``, with ``cls``'s hook looked up once (a tool's plan)."""
    hook = _converter().get_structure_hook(cls)

    def structure(value: Any) -> T:
        if not isinstance(value, dict):
            raise ArgumentError(ArgumentProblem((), must_be_type(["object"])))
        try:
            result: T = hook(value, cls)
        except Exception as exc:
            from lorenz.strict import flatten_errors  # cattrs: on the first call, not when listing

            problems = (located for problem in flatten_errors(exc) for located in _located(problem, cls))
            raise ArgumentError(*problems) from None
        return result

    return structure


def unstructurer(cls: type) -> Callable[[Any], Any]:
    """:func:`unstructure` for an instance of exactly ``cls``, its hook looked up once (a tool's
    plan); an instance of another class (a subclass) is unstructured as its own class."""
    converter = _converter()
    hook = converter.get_unstructure_hook(cls)

    def unstructure_one(value: Any) -> Any:
        return hook(value) if type(value) is cls else converter.unstructure(value)

    return unstructure_one


def unstructure(value: Any) -> Any:
    """The JSON form of an attrs instance (enums by value, datetimes as ISO 8601)."""
    return _converter().unstructure(value)
