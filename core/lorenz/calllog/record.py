"""One ``tools/call`` (or a pack's resource read or prompt render) as the call log writes it: the
record, its JSON line, and the caps on its texts.

Argument *values* are never recorded (only their size), and every message is redacted.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from attrs import asdict, frozen

from lorenz.redact import redact_text

__all__ = ["MAX_ERROR_CHARS", "MAX_FIELD_CHARS", "CallRecord", "capped", "clean_error"]

#: Characters of an error message kept in a record.
MAX_ERROR_CHARS = 500
#: Characters of any other text field (a tool name, a client's name) kept in a record.
MAX_FIELD_CHARS = 256
#: Characters of an error message redacted before it is cut to MAX_ERROR_CHARS.
_REDACTED_HEAD = 64 * 1024


#: Keys left out of a line when there is nothing to say (the others are always there, maybe null).
_WHEN_KNOWN = frozenset(
    {"instance", "client", "sessionId", "traceId", "token", "subject", "clientId", "clientGone", "kind"}
)


#: The second :meth:`CallRecord.stamp` last formatted, and its text (a race only formats it twice).
_STAMP: list[Any] = [None, ""]


@frozen(kw_only=True)
class CallRecord:
    """One ``tools/call`` as the call log writes it (camelCase keys on the wire)."""

    ts: str
    tool: str
    pack: str | None
    distribution: str | None
    duration_ms: float
    outcome: str
    error: str | None = None
    #: The ``tools:`` key of the instance that served the call, when it is not the pack's name.
    instance: str | None = None
    argument_bytes: int = 0
    result_bytes: int = 0
    protocol_version: str | None = None
    client: dict[str, str] | None = None
    session_id: str | None = None
    request_id: str | int | None = None
    trace_id: str | None = None
    token: str | None = None
    #: The OAuth caller (``server.auth``): the token's ``sub`` and the client it was issued to.
    subject: str | None = None
    client_id: str | None = None
    #: The client stopped waiting (dropped the connection, cancelled) before the call ended;
    #: ``outcome`` is still how the call ended.
    client_gone: bool | None = None
    #: ``resource`` (a ``resources/read``) or ``prompt`` (a ``prompts/get``); ``None``: a tool call.
    kind: str | None = None

    @staticmethod
    def now() -> str:
        """The current UTC time, ``2026-12-01T12:00:00.123Z``."""
        return CallRecord.stamp(time.time())

    @staticmethod
    def stamp(now: float) -> str:
        """``now`` (seconds since the epoch) as ``2026-12-01T12:00:00.123Z``: every call is
        stamped, so the part up to the second is formatted once per second."""
        second = int(now)
        if second != _STAMP[0]:
            _STAMP[:] = [second, datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")]
        return f"{_STAMP[1]}.{int((now - second) * 1000):03d}Z"

    def to_json(self) -> dict[str, Any]:
        names = {
            "duration_ms": "durationMs",
            "argument_bytes": "argumentBytes",
            "result_bytes": "resultBytes",
            "protocol_version": "protocolVersion",
            "session_id": "sessionId",
            "request_id": "requestId",
            "trace_id": "traceId",
            "client_gone": "clientGone",
            "client_id": "clientId",
        }
        # The error is capped by clean_error, at its own length.
        out = {names.get(key, key): value if key == "error" else _field(value) for key, value in asdict(self).items()}
        return {key: value for key, value in out.items() if value is not None or key not in _WHEN_KNOWN}


def _field(value: Any) -> Any:
    """A record's field as written: texts the client chose (a tool name, its own name) capped."""
    if isinstance(value, str):
        return capped(value, MAX_FIELD_CHARS)
    if isinstance(value, dict):
        return {capped(str(key), MAX_FIELD_CHARS): _field(item) for key, item in value.items()}
    return value


def clean_error(message: str | None, secrets: Iterable[str], arguments: Any = None) -> str | None:
    """A record's ``error``: redacted (``arguments``' values included: a message may quote the
    argument it refuses), one line, at most :data:`MAX_ERROR_CHARS` characters."""
    if message is None:
        return None
    # Only the first MAX_ERROR_CHARS are kept: a generous head bounds the redaction's work.
    text = " ".join(redact_text(message[:_REDACTED_HEAD], secrets, arguments=arguments).split())
    return capped(text, MAX_ERROR_CHARS)


def capped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, the last one an ellipsis when it was longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"
