"""The kinds the config's sections are declared with (ports, flexible booleans, positive numbers,
routes), the error a hook raises for one key, and the camelCase spelling of keys."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NewType

__all__ = [
    "FlexBool",
    "Invalid",
    "McpPort",
    "Port",
    "PositiveInt",
    "PositiveNumber",
    "Routes",
    "camel_to_snake",
    "normalize_aliases",
]

#: ``true``/``false`` or the strings ``"true"``/``"false"`` (``tracker.dispatch.accept_unrouted``).
FlexBool = NewType("FlexBool", bool)
#: 0–65535, as an integer or a string of digits.
Port = NewType("Port", int)
#: 1–65535, as an integer or a string of digits.
McpPort = NewType("McpPort", int)
PositiveInt = NewType("PositiveInt", int)
#: A number above zero, integer or not (seconds).
PositiveNumber = NewType("PositiveNumber", float)
#: A list of strings where an explicit ``null`` means "no restriction".
Routes = NewType("Routes", tuple[str, ...])

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])([A-Z])")


class Invalid(ValueError):
    """One problem at a key: ``<label> <message>``, or the bare message when not ``labelled``."""

    def __init__(self, message: str, *, labelled: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.labelled = labelled


def camel_to_snake(key: str) -> str:
    """``routeLabelPrefix`` → ``route_label_prefix``; snake keys are unchanged."""
    return _CAMEL_BOUNDARY.sub(lambda match: "_" + match.group(1).lower(), key)


def normalize_aliases(raw: Mapping[str, Any], names: frozenset[str] | set[str]) -> dict[str, Any]:
    """Rename camelCase spellings of ``names`` to snake_case; when both are given, snake wins.

    Other keys are kept verbatim and in order.
    """
    out: dict[str, Any] = {}
    for key, value in raw.items():
        snake = camel_to_snake(key) if isinstance(key, str) else key
        if snake != key and snake in names:
            if snake not in raw:
                out[snake] = value
        else:
            out[key] = value
    return out
