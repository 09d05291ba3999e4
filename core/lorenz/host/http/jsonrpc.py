"""What a POST to ``/mcp`` must hold before the SDK sees it: one well-formed JSON-RPC 2.0 message.

:func:`parse_message` answers what is not (in both protocol eras, with one plain JSON-RPC error:
``-32700``, ``-32600`` or ``-32602``) where the SDK's handshake-era transport would drop it as a
notification or answer with a validation dump. JSON here is strict: UTF-8, no ``NaN``/``Infinity``,
no number too large for a float. A well-formed message passes unchanged.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pydantic_core

__all__ = [
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "error_reply",
    "has_surrogate_escape",
    "parse_message",
    "within_sdk_depth",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


def error_reply(code: int, message: str, id: Any = None, data: str | None = None) -> dict[str, Any]:
    """A JSON-RPC error response object."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": error}


def _not_a_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number out of range: {text[:40]}")
    return value


#: One decoder for every body (``json.loads`` with hooks builds a new one per call).
_DECODER = json.JSONDecoder(parse_constant=_not_a_constant, parse_float=_finite)


def _loads(text: str) -> Any:
    if text.startswith("\ufeff"):  # as json.loads words it
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)


#: A ``\uD800``-``\uDFFF`` escape: only then can a parsed string hold a lone surrogate.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def has_surrogate_escape(body: bytes) -> bool:
    """Whether ``body`` may spell a lone surrogate (``"\\ud800"``), which only some parsers accept."""
    return _SURROGATE_ESCAPE.search(body) is not None


#: Nesting that the SDK's JSON parser (pydantic's) always accepts; it refuses some deeper bodies
#: with a parse error of its own.
_SDK_SAFE_DEPTH = 200


def within_sdk_depth(body: bytes) -> bool:
    """Whether the SDK's parser accepts ``body``'s nesting (so a reply built from our own parse
    answers as the SDK would). Counting the brackets settles nearly every body; only one with
    more of them is parsed again, by that parser, to tell."""
    if body.count(b"{") + body.count(b"[") <= _SDK_SAFE_DEPTH:
        return True
    try:
        pydantic_core.from_json(body)
    except ValueError:
        return False
    return True


def _lone_surrogate(message: Any) -> str | None:
    """The path of the first key or string holding a lone surrogate, else ``None``."""
    stack: list[tuple[str, Any]] = [("", message)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    return path or "the body"
        elif isinstance(value, dict):
            for key, item in value.items():
                stack.append((path, key))
                stack.append((f"{path}.{key}".lstrip(".")[:200], item))
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]"[:200], item) for index, item in enumerate(value))
    return None


def _valid_id(value: Any) -> bool:
    return type(value) is int or type(value) is str


def _invalid(reason: str, id: Any = None) -> dict[str, Any]:
    return error_reply(INVALID_REQUEST, f"Invalid Request: {reason}", id)


def parse_message(body: bytes, *, refuse_lone_surrogates: bool = False) -> tuple[Any, dict[str, Any] | None]:
    """``(message, None)`` for a body holding one well-formed JSON-RPC message, else
    ``(None, error response)``.

    ``refuse_lone_surrogates`` makes a string holding a lone surrogate escape (``"\\ud800"``) a
    parse error naming the field: for stdio, where the SDK's parser would drop such a line without
    a reply. Over HTTP they are left to the host, which names the field in its ``isError`` result.
    """
    try:
        message = _loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        return None, error_reply(PARSE_ERROR, "Parse error", data="the body is not UTF-8")
    except RecursionError:
        return None, error_reply(PARSE_ERROR, "Parse error", data="the body is nested too deeply")
    except ValueError as exc:  # json.JSONDecodeError included: its message gives the position
        return None, error_reply(PARSE_ERROR, "Parse error", data=str(exc))
    if refuse_lone_surrogates and has_surrogate_escape(body) and (where := _lone_surrogate(message)):
        return None, error_reply(PARSE_ERROR, "Parse error", data=f"{where}: a lone surrogate escape is not text")
    problem = _malformed(message)
    return (None, problem) if problem is not None else (message, None)


def _malformed(message: Any) -> dict[str, Any] | None:
    if isinstance(message, list):
        return _invalid("batch requests are not supported; send one message per request")
    if not isinstance(message, dict):
        return _invalid("the body must be a JSON-RPC message object")
    id = message.get("id")
    reply_id = id if _valid_id(id) else None
    if message.get("jsonrpc") != "2.0":
        return _invalid("'jsonrpc' must be \"2.0\"", reply_id)
    if "method" in message:
        if not isinstance(message["method"], str):
            return _invalid("'method' must be a string", reply_id)
        if "id" in message and not _valid_id(id):
            return _invalid("'id' must be a string or an integer")
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return error_reply(INVALID_PARAMS, "Invalid params: 'params' must be an object", reply_id)
        return None
    # A response to a request the server sent (its id is null only when it reports an error).
    if "result" in message:
        if not _valid_id(id):
            return _invalid("'id' must be a string or an integer")
        if not isinstance(message["result"], dict):
            return _invalid("'result' must be an object", reply_id)
        return None
    if "error" in message:
        if id is not None and not _valid_id(id):
            return _invalid("'id' must be a string, an integer or null")
        error = message["error"]
        if not (isinstance(error, dict) and type(error.get("code")) is int and isinstance(error.get("message"), str)):
            return _invalid("'error' must be an object with an integer 'code' and a string 'message'", reply_id)
        return None
    return _invalid("a message needs a 'method' (a request or notification) or a 'result' or 'error' (a response)")
