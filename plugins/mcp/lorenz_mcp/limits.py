"""Bounds on what an upstream sends: each message at most ``server.max_result_bytes``, and its
progress coalesced to at most :data:`PROGRESS_PER_SECOND` notifications a second per call.

A message over the cap is not read into memory: a stdio line is skipped as it streams (its first
and last few hundred bytes kept, to find the request it answers), an HTTP JSON body stops being
read at the cap (an SSE event is bounded by the SDK's ``max_sse_event_size``). The request it
answers fails at once with :func:`too_large`'s message instead of running into its timeout.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx2

__all__ = [
    "PROGRESS_PER_SECOND",
    "BoundedTransport",
    "Lines",
    "ProgressThrottle",
    "is_too_large",
    "too_large",
]

logger = logging.getLogger("lorenz_mcp")

#: Progress notifications relayed per second and call; the latest of each interval is the one sent.
PROGRESS_PER_SECOND = 20
#: How much of an oversized line's start and end is kept to find the id it answers.
_EDGE = 512
_ID = rb'(-?\d+|"(?:[^"\\]|\\.){0,200}")'
#: A response written id-first (``{"jsonrpc":"2.0","id":7,"result":…``) or result-first with the id
#: last (``{"result":…,"jsonrpc":"2.0","id":7}``).
_HEAD = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*' + _ID + rb'\s*,\s*"(?:result|error)"')
_RESPONSE_FIRST = re.compile(rb'^\s*\{\s*"(?:result|error)"\s*:')
_TAIL = re.compile(rb'"id"\s*:\s*' + _ID + rb"\s*\}\s*$")
_MARK = "(server.max_result_bytes)"
#: How the SDK (httpx2) words an SSE event over ``max_sse_event_size``.
_SSE_LIMIT = "Server-sent event exceeded the"
_INTERNAL_ERROR = -32603


def too_large(limit: int) -> str:
    """The error of a message over the cap (the words the host's own result cap uses)."""
    return f"its answer is more than {limit:,} bytes {_MARK}"


def is_too_large(message: str) -> bool:
    """Whether an error the SDK raised is one of the caps (ours, or its SSE event limit)."""
    return _MARK in message or _SSE_LIMIT in message


def _request_id(head: bytes, tail: bytes) -> int | str | None:
    found = _HEAD.match(head)
    if found is None and _RESPONSE_FIRST.match(head):
        found = _TAIL.search(tail)
    if found is None:
        return None
    raw = found.group(1)
    return int(raw) if raw[:1] != b'"' else raw[1:-1].decode("utf-8", "replace")


class Lines:
    """Splits a stdio server's output into messages of at most ``limit`` bytes each; a longer line
    becomes an error answer to the request it answers (or is dropped, logged, when it answers none)."""

    def __init__(self, limit: int, label: Callable[[], str]) -> None:
        self._limit = limit
        self._label = label
        self._buffer = bytearray()
        #: Bytes of the oversized line being skipped (0: none), its start and its end so far.
        self._skipped = 0
        self._head = b""
        self._tail = b""

    def feed(self, chunk: bytes) -> list[Any]:
        """The messages ``chunk`` completes: ``SessionMessage``s, or parse errors (as the SDK's
        stdio transport hands them on)."""
        done: list[Any] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            self._take(chunk[start:] if end < 0 else chunk[start:end])
            if end < 0:
                return done
            found = self._finish()
            if found is not None:
                done.append(found)
            start = end + 1

    def _take(self, piece: bytes) -> None:
        if self._skipped:
            self._skipped += len(piece)
            self._tail = (self._tail + piece[-_EDGE:])[-_EDGE:]
        elif len(self._buffer) + len(piece) > self._limit:
            self._skipped = len(self._buffer) + len(piece)
            self._head = (bytes(self._buffer[:_EDGE]) + piece[:_EDGE])[:_EDGE]
            self._tail = (bytes(self._buffer[-_EDGE:]) + piece[-_EDGE:])[-_EDGE:]
            self._buffer = bytearray()
        else:
            self._buffer += piece

    def _finish(self) -> Any:
        from mcp.shared.message import SessionMessage
        from mcp_types import ErrorData, JSONRPCError, jsonrpc_message_adapter

        if self._skipped:
            size, request = self._skipped, _request_id(self._head, self._tail)
            self._skipped, self._head, self._tail = 0, b"", b""
            if request is None:
                logger.warning(
                    "pack %s: dropped a message of %d bytes, over the %d-byte limit %s",
                    self._label(),
                    size,
                    self._limit,
                    _MARK,
                )
                return None
            error = ErrorData(code=_INTERNAL_ERROR, message=too_large(self._limit))
            return SessionMessage(JSONRPCError(jsonrpc="2.0", id=request, error=error))
        line, self._buffer = bytes(self._buffer), bytearray()
        if not line.strip():
            return None
        try:
            return SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError as exc:
            return exc


class _CappedBody(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._inner:
            seen += len(chunk)
            if seen > self._limit:
                raise httpx2.StreamError(too_large(self._limit))
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class BoundedTransport(httpx2.AsyncBaseTransport):
    """Stops reading a JSON answer at ``limit`` bytes: the SDK then fails its request with the
    cap's error (SSE events are bounded by the SDK itself)."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, limit: int) -> None:
        self._inner = inner
        self._limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        if not response.headers.get("content-type", "").lower().startswith("application/json"):
            return response
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)
        response.stream = _CappedBody(stream, self._limit)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


class ProgressThrottle:
    """Relays a call's progress at most :data:`PROGRESS_PER_SECOND` times a second: the latest of
    each interval, and the last one before the call's result (:meth:`flush`). On one loop."""

    def __init__(
        self, send: Callable[[float, float | None, str | None], None], loop: asyncio.AbstractEventLoop
    ) -> None:
        self._send = send
        self._loop = loop
        self._last = float("-inf")
        self._pending: tuple[float, float | None, str | None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    async def __call__(self, done: float, total: float | None, message: str | None) -> None:
        self._pending = (done, total, message)
        wait = self._last + 1 / PROGRESS_PER_SECOND - self._loop.time()
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            self._timer = self._loop.call_later(wait, self.flush)

    def flush(self) -> None:
        """Send the progress held back, if any."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        pending, self._pending = self._pending, None
        if pending is not None:
            self._last = self._loop.time()
            self._send(*pending)
