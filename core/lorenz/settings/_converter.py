"""The cattrs converter behind :func:`lorenz.settings._structure.structure`.

It is :func:`lorenz.strict.make_strict_converter` (no primitive is ever coerced) plus the config's
own kinds (ports, flexible booleans, sections with camelCase aliases). Errors become one sentence
naming the key path (``tracker.active_states.0 must be a string``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import attrs
from cattrs import Converter
from cattrs.gen import make_dict_structure_fn

from lorenz.strict import WrongType, flatten_errors, make_strict_converter

from ._kinds import (
    FlexBool,
    Invalid,
    McpPort,
    Port,
    PositiveInt,
    PositiveNumber,
    Routes,
    camel_to_snake,
    normalize_aliases,
)
from .errors import ConfigError
from .suggest import unknown_keys

__all__ = ["structure_strictly"]

T = TypeVar("T")

#: The config's wording of :class:`~lorenz.strict.WrongType` (its only lists are lists of strings).
_WRONG_TYPE = {"string": "must be a string", "boolean": "must be a boolean", "array": "must be a list of strings"}


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _flex_bool(value: Any, _: object) -> bool:
    if isinstance(value, bool):
        return value
    if value in ("true", "false"):
        return bool(value == "true")
    raise Invalid("expected a boolean", labelled=False)


def _port_hook(low: int) -> Any:
    message = f"must be a valid port number ({low}-65535)"

    def hook(value: Any, _: object) -> int:
        if isinstance(value, str) and value.isascii() and value.isdigit():
            value = int(value)
        if not _is_int(value) or not low <= value <= 65535:
            raise Invalid(message)
        return int(value)

    return hook


def _positive_int(value: Any, _: object) -> int:
    if not _is_int(value) or value <= 0:
        raise Invalid("must be a positive integer")
    return int(value)


def _positive_number(value: Any, _: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0 or value == float("inf"):
        raise Invalid("must be a positive number")
    return float(value)


def _unsupported(extra: list[str], names: frozenset[str]) -> Invalid:
    return Invalid(f"contains unsupported keys: {unknown_keys(extra, sorted(names))}")


def _is(kind: object) -> Callable[[Any], bool]:
    return lambda type_: bool(type_ == kind)


def _make_converter() -> Converter:
    converter = make_strict_converter(forbid_extra_keys=False)

    def as_type(kind: Any) -> Any:
        return lambda value, _: converter.structure(value, kind)

    def routes(value: Any, _: object) -> tuple[str, ...] | None:
        return None if value is None else converter.structure(value, tuple[str, ...])

    for kind, hook in (
        # an optional key may be left out, but an explicit null is refused like any other non-string
        (str | None, as_type(str)),
        (tuple[str, ...] | None, as_type(tuple[str, ...])),
        (FlexBool, _flex_bool),
        (Port, _port_hook(0)),
        (McpPort, _port_hook(1)),
        (McpPort | None, _port_hook(1)),
        (PositiveInt, _positive_int),
        (PositiveInt | None, _positive_int),
        (PositiveNumber, _positive_number),
        (Routes | None, routes),
    ):
        # singledispatch cannot key on ``tuple[str, ...]``, unions or NewTypes
        converter.register_structure_hook_func(_is(kind), hook)

    def section_hook(cls: type[Any]) -> Any:
        structure_fields = make_dict_structure_fn(cls, converter, _cattrs_forbid_extra_keys=False)
        names = frozenset(field.name for field in attrs.fields(cls))

        def hook(value: Any, _: object) -> Any:
            if not isinstance(value, Mapping):
                raise Invalid("must be a map")
            normalized = normalize_aliases(value, names)
            extra = [str(key) for key in normalized if key not in names]
            try:
                result = structure_fields(normalized, cls)
            except Exception as exc:
                # a wrong type comes first, but a misspelt key explains the missing one
                if extra and all(isinstance(p.error, KeyError) for p in flatten_errors(exc)):
                    raise _unsupported(extra, names) from None
                raise
            if extra:
                raise _unsupported(extra, names)
            return result

        return hook

    converter.register_structure_hook_factory(attrs.has, section_hook)
    return converter


_CONVERTER = _make_converter()


def structure_strictly(raw: Any, cls: type[T], label: str) -> T:
    """:func:`~lorenz.settings._structure.structure` through the converter, whatever ``raw`` is."""
    try:
        return _CONVERTER.structure(raw, cls)
    except Exception as exc:  # every structuring failure is the config's fault
        raise ConfigError(_render(exc, label)) from None


def _render(exc: BaseException, label: str) -> str:
    first = flatten_errors(exc)[0]
    error, where = first.error, _label(label, first.path)
    if isinstance(error, Invalid):
        return f"{where} {error.message}" if error.labelled else error.message
    if isinstance(error, WrongType) and error.expected in _WRONG_TYPE:
        return f"{where} {_WRONG_TYPE[error.expected]}"
    if isinstance(error, KeyError):  # cattrs' way of saying a field without a default is missing
        return f"{where} is required"
    return f"{where} is invalid"


def _label(label: str, path: Sequence[str | int]) -> str:
    return ".".join([label, *(camel_to_snake(str(part)) for part in path)])
