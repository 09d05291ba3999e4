"""A pack's process's replies and events, read by hand: each call's way back without cattrs.

The process is untrusted: every field is checked for its JSON type (a boolean is no integer), and
a frame that is not a well-formed reply or event is refused naming the fields at fault, as
:func:`~lorenz.isolation.protocol.structure` refuses the other messages.
"""

from __future__ import annotations

from typing import Any

from lorenz.strict import json_type_name

from .frames import ProtocolError
from .protocol import Event, InputRound, Reply

__all__ = ["read_event", "read_reply"]

_NONE = type(None)

#: The fields checked (by wire key): the types each may be and their JSON name; and those required.
_Spec = dict[str, tuple[tuple[type, ...], str]]
_REPLY: _Spec = {
    "id": ((int,), "integer"),
    "nonce": ((str,), "string"),
    "success": ((bool,), "boolean"),
    "error": ((str, _NONE), "string"),
    "text": ((str, _NONE), "string"),
    "content": ((list, _NONE), "array"),
    "denied": ((str, _NONE), "string"),
    "outcome": ((str, _NONE), "string"),
    "inputRequired": ((dict, _NONE), "object"),
}
_EVENT: _Spec = {
    "id": ((int,), "integer"),
    "nonce": ((str,), "string"),
    "done": ((int, float), "number"),
    "total": ((int, float, _NONE), "number"),
    "level": ((str,), "string"),
    "message": ((str, _NONE), "string"),
}
_EVENT_REQUIRED = ("id", "nonce")
_REPLY_REQUIRED = ("id", "nonce", "success")


def _problems(frame: dict[str, Any], spec: _Spec, required: tuple[str, ...]) -> list[str]:
    problems = [f"{key}: required field missing" for key in required if key not in frame]
    for key, value in frame.items():
        checked = spec.get(key)
        if checked is not None and type(value) not in checked[0]:  # a bool is no integer here
            problems.append(f"{key}: expected {checked[1]}, got {json_type_name(value)}")
    return problems


def _refuse(what: str, problems: list[str]) -> ProtocolError:
    return ProtocolError(f"a malformed {what} frame ({'; '.join(problems[:3])})")


def _object(frame: Any) -> dict[str, Any]:
    if not isinstance(frame, dict):
        msg = f"a frame that is not an object but {type(frame).__name__}"
        raise ProtocolError(msg)
    return frame


def _round_problems(value: dict[str, Any]) -> list[str]:
    requests, state = value.get("requests"), value.get("state")
    problems = []
    if not isinstance(requests, dict):
        problems.append(f"inputRequired.requests: expected object, got {json_type_name(requests)}")
    else:
        problems += [
            f"inputRequired.requests.{name}: expected object, got {json_type_name(wire)}"
            for name, wire in requests.items()
            if not isinstance(wire, dict)
        ]
    if type(state) is not str:
        problems.append(f"inputRequired.state: expected string, got {json_type_name(state)}")
    return problems


def read_reply(frame: Any) -> Reply:
    """``frame`` as a :class:`Reply`; raises :class:`ProtocolError` when it is not one."""
    get = _object(frame).get
    problems = _problems(frame, _REPLY, _REPLY_REQUIRED)
    if get("op") != "result":
        problems.insert(0, f"op: expected 'result', got {get('op')!r}"[:200])
    content = get("content")
    if isinstance(content, list):
        problems += [
            f"content.{index}: expected object, got {json_type_name(block)}"
            for index, block in enumerate(content)
            if not isinstance(block, dict)
        ]
    asked = get("inputRequired")
    if isinstance(asked, dict):
        problems += _round_problems(asked)
    if problems:
        raise _refuse("reply", problems)
    return Reply(
        op="result",
        id=frame["id"],
        nonce=frame["nonce"],
        success=frame["success"],
        result=get("result"),
        error=get("error"),
        text=get("text"),
        content=content,
        denied=get("denied"),
        input_required=None if asked is None else InputRound(requests=asked["requests"], state=asked["state"]),
        outcome=get("outcome"),
    )


def read_event(frame: Any) -> Event:
    """``frame`` (a ``progress`` or ``log`` frame) as an :class:`Event`; raises :class:`ProtocolError`
    when it is not one."""
    get = _object(frame).get
    problems = _problems(frame, _EVENT, _EVENT_REQUIRED)
    op = get("op")
    if op != "progress" and op != "log":
        problems.insert(0, f"op: expected 'progress' or 'log', got {op!r}"[:200])
    if problems:
        raise _refuse("event", problems)
    total = get("total")
    try:
        done, total = float(get("done", 0.0)), None if total is None else float(total)
    except OverflowError:  # an integer past any float
        raise _refuse("event", ["done or total: a number too large"]) from None
    return Event(
        op="progress" if op == "progress" else "log",
        id=frame["id"],
        nonce=frame["nonce"],
        done=done,
        total=total,
        level=get("level", "info"),
        message=get("message"),
    )
