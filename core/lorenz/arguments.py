"""Reading a tool call's arguments: the checks every pack's ``execute_tool`` starts with, and the
one wording of a refused call.

A pack raises :class:`ArgumentError` inside its ``try`` and returns ``tool_failure(error_message(exc))``,
so the agent sees the bare message. Arguments that break a tool's ``inputSchema`` or a typed tool's
input class are refused by :func:`invalid_arguments`, one sentence per :class:`ArgumentProblem`:
``invalid arguments for tool <tool>: <key path>: <message>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

from attrs import frozen

from .results import FormattedResult, failure_result

__all__ = [
    "ArgumentError",
    "ArgumentProblem",
    "INVALID_ARGUMENTS_RECOVERY",
    "as_arguments",
    "invalid_arguments",
    "must_be_one_of",
    "must_be_type",
    "optional_str",
    "require_str",
    "unrecognized_key",
]

_NO_ARGUMENTS: Mapping[str, Any] = MappingProxyType({})
_ARTICLES = {"integer": "an integer", "object": "an object", "array": "an array", "null": "null"}
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: What the agent should do about refused arguments (in every refusal's ``error.recovery``).
INVALID_ARGUMENTS_RECOVERY = "Fix the arguments to match the tool's inputSchema and call it again."


@frozen
class ArgumentProblem:
    """One thing wrong with a call's arguments: ``path`` is the key path of the value at fault
    (keys and list indexes; ``()`` is the arguments object itself) and ``message`` says what is
    wrong with it (``required``, ``must be a string``, ``Unrecognized key: "x"``)."""

    path: tuple[str | int, ...]
    message: str

    def __str__(self) -> str:
        """``where.and.0.op: must be one of ...``; the bare message at the root."""
        if not self.path:
            return self.message
        return ".".join(str(part) for part in self.path) + ": " + self.message

    @property
    def json_path(self) -> str:
        """The path as a JSON path for machines: ``$``, ``$.where.and[0].op``, ``$['a b']``."""
        parts = ["$"]
        for part in self.path:
            if type(part) is int:
                parts.append(f"[{part}]")
            elif _NAME.match(str(part)):
                parts.append(f".{part}")
            else:
                parts.append(f"[{json.dumps(str(part), ensure_ascii=False)}]")
        return "".join(parts)


class ArgumentError(ValueError):
    """Tool arguments are missing or malformed (raised before the tool does any work).

    ``problems`` are the messages given, one per problem (an :class:`ArgumentProblem` becomes its
    sentence, and is kept in ``located``); the error's message joins them with ``; ``.
    """

    def __init__(self, *problems: str | ArgumentProblem) -> None:
        self.problems = [str(problem) for problem in problems]
        super().__init__("; ".join(self.problems))
        #: The problems with their key paths (a plain string problem counts as one at the root).
        self.located = [
            problem if isinstance(problem, ArgumentProblem) else ArgumentProblem((), problem) for problem in problems
        ]


def unrecognized_key(key: str) -> str:
    """The message for a key the tool does not take: ``Unrecognized key: "staus"``."""
    return f"Unrecognized key: {json.dumps(key, ensure_ascii=False)}"


def must_be_type(names: Iterable[str]) -> str:
    """``must be a string``, ``must be an object or null`` for JSON type names."""
    return "must be " + " or ".join(_ARTICLES.get(name, f"a {name}") for name in names)


def must_be_one_of(values: Iterable[Any]) -> str:
    """``must be one of "red", "blue"`` (``must be "red"`` for one value), values as JSON."""
    rendered = [json.dumps(value, ensure_ascii=False) for value in values]
    return f"must be {rendered[0]}" if len(rendered) == 1 else f"must be one of {', '.join(rendered)}"


def invalid_arguments(tool: str, problems: Sequence[ArgumentProblem]) -> FormattedResult:
    """The failure for a call whose arguments are refused before the tool runs.

    ``error`` is ``invalid arguments for tool <tool>: <problem>; <problem>`` (each problem as
    ``key.path: message``); ``result.error`` adds ``path`` (the first problem's JSON path),
    ``problems`` (each ``{path, message}``), ``reason: invalid_arguments`` and a ``recovery`` hint.
    """
    unique = list(dict.fromkeys(problems))  # two validators can report the same problem
    return failure_result(
        f"invalid arguments for tool {tool}: " + "; ".join(str(problem) for problem in unique),
        reason="invalid_arguments",
        recovery=INVALID_ARGUMENTS_RECOVERY,
        path=unique[0].json_path if unique else "$",
        problems=[{"path": problem.json_path, "message": problem.message} for problem in unique],
    )


def as_arguments(input: object) -> Mapping[str, Any]:
    """The tool input as an argument mapping; an input that is not a mapping counts as no arguments."""
    return input if type(input) is dict or isinstance(input, Mapping) else _NO_ARGUMENTS


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
