"""Reading a tool call's arguments: the checks every pack's ``execute_tool`` starts with.

A pack raises :class:`ArgumentError` from inside its ``try`` and turns it into a
``tool_failure(error_message(exc))`` like any other error, so the agent sees the bare message
(``'issueId' is required``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["ArgumentError", "as_arguments", "optional_str", "require_str"]

_NO_ARGUMENTS: Mapping[str, Any] = MappingProxyType({})


class ArgumentError(ValueError):
    """Tool arguments are missing or malformed (raised before the tool does any work).

    ``problems`` are the messages given, one per problem; the error's message joins them with ``; ``.
    """

    def __init__(self, *problems: str) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


def as_arguments(input: object) -> Mapping[str, Any]:
    """The tool input as an argument mapping; an input that is not a mapping counts as no arguments."""
    return input if isinstance(input, Mapping) else _NO_ARGUMENTS


def require_str(args: Mapping[str, Any], key: str) -> str:
    """``args[key]`` as given; raises ``ArgumentError("'<key>' is required")`` when it is absent,
    not a string, or blank."""
    value = args.get(key)
    if not isinstance(value, str) or not value.strip():
        msg = f"'{key}' is required"
        raise ArgumentError(msg)
    return value


def optional_str(args: Mapping[str, Any], key: str, *, strict: bool = False) -> str | None:
    """``args[key]`` when it is a string, else ``None``.

    By default anything but a non-blank string (absent, ``None``, blank, another type) counts as
    absent. With ``strict=True`` only absent or ``None`` does: another type raises
    ``ArgumentError("'<key>' must be a string")`` and a blank string is returned as given.
    """
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        if strict:
            msg = f"'{key}' must be a string"
            raise ArgumentError(msg)
        return None
    if not strict and not value.strip():
        return None
    return value
