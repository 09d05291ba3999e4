"""JSON values under JavaScript semantics, as the query DSL compares, orders and prints them."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any, TypeGuard

__all__ = ["is_array", "is_number", "js_order", "js_string"]


def is_number(value: object) -> bool:
    """A JS number: an int or float that is not a bool."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_array(value: object) -> TypeGuard[list[Any] | tuple[Any, ...]]:
    return isinstance(value, list | tuple)


def js_order(text: str) -> str:
    """A string whose code-point order is JS string order (by UTF-16 code unit): ``text`` itself
    unless it holds astral characters, which become their surrogate pairs."""
    return text if text.isascii() else _ASTRAL.sub(_surrogate_pair, text)


_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def _surrogate_pair(match: re.Match[str]) -> str:
    code = ord(match.group()) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def js_string(value: object, _active: frozenset[int] = frozenset()) -> str:
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
        return ",".join("" if item is None else js_string(item, inner) for item in value)
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
