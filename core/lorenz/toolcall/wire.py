"""What may cross the wire: valid Unicode in, and JSON of bounded size out.

A lone surrogate (``"\\ud800"`` is legal JSON but not Unicode) in an argument would be written to
a board or a backend and break every later read, so arguments holding one are refused naming the
field. A pack or a file may still hand one back: results are scrubbed to U+FFFD instead of
failing to encode. Results are also measured before they are encoded, so one call never makes
the host build more than about ``max_bytes`` of JSON.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from lorenz.results import ToolResult, tool_failure

__all__ = [
    "MAX_ARGUMENT_VALUES",
    "ResultTooLarge",
    "compact_json",
    "encode_payload",
    "fast_pretty_json",
    "json_safe",
    "json_size_exceeds",
    "json_survey",
    "lone_surrogate_path",
    "pretty_json",
    "refuse_unsafe_arguments",
    "scrub_surrogates",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


class ResultTooLarge(ValueError):
    """A result whose JSON would exceed the configured limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"more than {limit:,} bytes of JSON")
        self.limit = limit


def lone_surrogate_path(value: Any, path: str = "") -> str | None:
    """The dotted path (``""`` for the root) of the first string, key included, holding a lone
    surrogate; ``None`` when there is none."""
    if isinstance(value, str):
        return path if _SURROGATE.search(value) else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and _SURROGATE.search(key):
                return where
            found = lone_surrogate_path(item, where)
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found = lone_surrogate_path(item, f"{path}.{index}" if path else str(index))
            if found is not None:
                return found
    return None


#: Values (strings, numbers, list items, object entries) one call's arguments may hold: far more
#: than any tool needs, and few enough that checking them against the schema stays cheap.
MAX_ARGUMENT_VALUES = 20_000


def _count_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` holds more than ``limit`` values, counted only until it knows."""
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        count += 1
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            pass  # a leaf: the ABC checks below cost more than the count
        elif kind is dict or isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        if count + len(stack) > limit:
            return True
    return False


#: Where a value sits: ``None`` for the arguments themselves, else ``(its parent's link, its key)``.
_Link = tuple[Any, Any] | None


def _dotted(link: _Link) -> str:
    """The dotted path of ``link``, spelled only when a refusal names it."""
    keys: list[Any] = []
    while link is not None:
        link, key = link
        keys.append(key)
    path = ""
    for key in reversed(keys):
        path = f"{path}.{key}" if path else str(key)
    return path


def _values_over(value: Any, limit: int) -> tuple[str, int] | None:
    """When ``value`` holds more than ``limit`` values: the dotted path and size of its largest
    list or object (to name in the refusal); ``None`` otherwise. Counts only until it knows; a
    container's children are pushed only once it is known not to pass the limit."""
    if not _count_exceeds(value, limit):  # the common case, without building a path
        return None
    count = 0
    largest: tuple[_Link, int] = (None, 0)
    stack: list[tuple[Any, _Link]] = [(value, None)]
    while stack:
        item, link = stack.pop()
        count += 1
        mapping = isinstance(item, Mapping)
        size = len(item) if mapping or isinstance(item, list | tuple) else 0
        if size > largest[1]:
            largest = (link, size)
        if count + size > limit:
            break
        if mapping:
            stack.extend((child, (link, key)) for key, child in item.items())
        elif size:
            stack.extend((child, (link, index)) for index, child in enumerate(item))
    return _dotted(largest[0]), largest[1]


def _any_surrogate(value: Any) -> bool:
    """Whether any string in ``value`` (keys included) holds a lone surrogate."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                return True
        elif kind is int or kind is bool or item is None:
            pass
        elif kind is dict or isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def refuse_unsafe_arguments(tool: str, arguments: Any) -> ToolResult | None:
    """A failure for arguments nothing may store or check cheaply: a lone surrogate (naming the
    argument) or more than :data:`MAX_ARGUMENT_VALUES` values; ``None`` when they are fine."""
    over = _values_over(arguments, MAX_ARGUMENT_VALUES)
    if over is not None:
        largest, size = over
        located = f"{largest}: " if largest else ""
        return tool_failure(
            f"invalid arguments for tool {tool}: {located}{size:,} values; "
            f"one call may hold at most {MAX_ARGUMENT_VALUES:,} in all",
            path=f"$.{largest}" if largest else "$",
        )
    where = lone_surrogate_path(arguments) if _any_surrogate(arguments) else None
    if where is None:
        return None
    path = f"{where}: " if where else ""
    return tool_failure(
        f"invalid arguments for tool {tool}: {path}contains a lone surrogate, which is not valid Unicode",
        path=f"$.{where}" if where else "$",
    )


def scrub_surrogates(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys included) replaced by U+FFFD."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, Mapping):
        return {scrub_surrogates(key): scrub_surrogates(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_surrogates(item) for item in value]
    return value


def _finite(value: Any) -> Any:
    """``value`` with every NaN/Infinity replaced by ``None`` (JSON has no such numbers)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_finite(item) for item in value]
    return value


#: JSON data's exact types that are no mapping (the survey skips the ABC check for them).
_NOT_MAPPINGS = frozenset({list, tuple, float})

#: Where pydantic_core (ryu) and :func:`repr` write a float alike (besides 0.0): outside it one
#: writes ``1e16``/``1e-5`` where the other writes ``1e+16``/``1e-05``.
_PLAIN_FLOATS = (1e-4, 1e16)


def _survey(value: Any, limit: float) -> tuple[int, bool]:
    """``(at_least, plain)``: a lower bound on the bytes of ``value``'s JSON, counted only until it
    passes ``limit`` (cheap: no string is built, and enough to refuse a huge result before encoding
    it); and whether ``value`` is plain data (dicts with string keys, lists, strings, integers,
    booleans, None, floats written without an exponent), which the fast encoder writes exactly as
    :func:`json.dumps` does."""
    total = 0
    plain = True
    stack = [value]
    while stack and total <= limit:
        item = stack.pop()
        kind = type(item)
        # Exact types first: what JSON data is made of, without the ABC checks below.
        if kind is str:
            total += len(item) + 2
        elif kind is int or kind is bool or item is None:
            total += 4
        elif kind is dict or (kind not in _NOT_MAPPINGS and isinstance(item, Mapping)):
            plain = plain and kind is dict
            total += 2 + 4 * len(item)
            for key in item:
                if type(key) is str:
                    total += len(key)
                else:
                    total += 4
                    plain = False
            stack.extend(item.values())
        elif kind is list or kind is tuple:
            total += 2 + len(item)
            stack.extend(item)
        elif kind is float:
            total += 4
            plain = plain and (item == 0.0 or _PLAIN_FLOATS[0] <= abs(item) < _PLAIN_FLOATS[1])
        elif isinstance(item, list | tuple):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += 4
            plain = plain and (item is None or kind is int or kind is bool)
    return total, plain and not stack


def json_size_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value``'s JSON is plainly more than ``limit`` bytes, known without encoding it."""
    return _survey(value, limit)[0] > limit


def json_survey(value: Any, limit: float) -> tuple[int, bool]:
    """What :func:`json_size_exceeds` counts (a lower bound on the bytes of ``value``'s JSON, up to
    ``limit``) and whether ``value`` is plain data (:func:`compact_json` may write it), in one walk."""
    return _survey(value, limit)


def compact_json(value: Any, *, plain: bool | None = None) -> bytes | None:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` as UTF-8, written by
    pydantic_core (several times faster), for plain data: ``plain`` when the caller knows, else a
    survey says. ``None`` when ``value`` is not plain data or holds a lone surrogate: the json
    module's turn. (Floats may be spelled differently, ``1e16`` for ``1e+16``: the same numbers.)"""
    if not (_survey(value, math.inf)[1] if plain is None else plain):
        return None
    import pydantic_core  # loaded with the first call, not with a pack's import

    try:
        return pydantic_core.to_json(value)
    except pydantic_core.PydanticSerializationError:
        return None


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON data: what JSON cannot hold (a datetime, a set) as its string form,
    NaN and Infinity as null."""
    return _finite(json.loads(json.dumps(value, default=str)))


def fast_pretty_json(value: Any) -> bytes | None:
    """``json.dumps(value, indent=2, ensure_ascii=False)`` written by pydantic_core (the SDK's own
    serializer, ~10x faster than the json module's pure-Python indenting encoder), for a value the
    caller knows is plain data (see :func:`_survey`); ``None`` when it holds a lone surrogate."""
    import pydantic_core  # loaded with the first call, not with a pack's import

    try:
        return pydantic_core.to_json(value, indent=2)
    except pydantic_core.PydanticSerializationError:
        return None


def pretty_json(value: Any) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False, default=str)``: the same text, by the
    fast encoder when ``value`` is plain data."""
    if _survey(value, math.inf)[1]:
        fast = fast_pretty_json(value)
        if fast is not None:
            return fast.decode("utf-8")
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


def _dumps(payload: Any) -> str:
    return json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False)


def encode_payload(payload: Any, *, max_bytes: int) -> tuple[Any, str]:
    """``(payload, text)``: the payload as plain JSON data and its pretty JSON text, valid
    Unicode (lone surrogates become U+FFFD) and at most ``max_bytes`` of UTF-8.

    Something JSON cannot hold (a datetime, a set, NaN) is shown as its string form or null.
    Raises :class:`ResultTooLarge` (before building the text when the size is plain from the data).
    """
    at_least, plain = _survey(payload, max_bytes)
    if at_least > max_bytes:
        raise ResultTooLarge(max_bytes)
    if plain:  # ~10x faster than the json module's pure-Python indenting encoder, same text
        fast = fast_pretty_json(payload)
        if fast is not None:  # else a lone surrogate: scrubbed below
            if len(fast) > max_bytes:
                raise ResultTooLarge(max_bytes)
            return payload, fast.decode("utf-8")
    try:
        text = _dumps(payload)
    except (TypeError, ValueError):
        payload = json_safe(payload)
        text = _dumps(payload)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        payload = scrub_surrogates(payload)
        text = _SURROGATE.sub("\ufffd", text)
        size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise ResultTooLarge(max_bytes)
    return payload, text
