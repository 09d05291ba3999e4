"""How the host reads HTTP/1.1 off its sockets: uvicorn's h11 protocol with read deadlines and
connection accounting, so slow, idle or trickling clients cannot lock real ones out.

A client has ``server.read_timeout_seconds`` to send a request's headers, then as long again for
its body, else ``408``; headers past 16 KiB, sent whole or in pieces, get ``431``. At the
connection cap the connection that has waited longest on its client is closed to make room;
only when every connection has a request in flight is a new one refused (``503``). One timer per
connection serves all its deadlines, and under load a response's writes are joined into one.
Under a plain uvicorn: ``--http lorenz.host:ReadDeadlineProtocol``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import weakref
from collections.abc import Callable
from typing import Any, Literal

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

from lorenz._internals import callbacks_due
from lorenz.host.http.heads import HEADERS_TOO_LARGE, HeadMeter
from lorenz.host.scope import CANCEL_ON_DISCONNECT, READ_DEADLINES
from lorenz.settings.model import DEFAULT_READ_TIMEOUT_SECONDS
from lorenz.toolcall.eager import start_now

__all__ = [
    "ConnectionPool",
    "HostConfig",
    "ReadDeadlineProtocol",
    "default_connection_limit",
    "use_read_timeout",
]

#: How long a connection closed for being late still reads what its client sends.
LINGER_SECONDS = 2.0

Phase = Literal["headers", "body", "busy", "idle", "closed"]


_TIMEOUT_TEXT = b"Request Timeout: the request was not sent in time"
REQUEST_TIMEOUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\nconnection: close\r\n\r\n%s" % (len(_TIMEOUT_TEXT), _TIMEOUT_TEXT)
)


def default_connection_limit() -> int:
    """Three quarters of the soft open-file limit (the rest is for files, pipes and outbound
    connections); 10,000 where the platform has no such limit to read."""
    if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
        return 10_000
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 10_000
    return max(64, soft * 3 // 4)


class ConnectionPool:
    """The connections one server holds; those waiting on their client are kept oldest first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.open = 0
        self.waiting: dict[ReadDeadlineProtocol, None] = {}
        self._unflushed: list[_JoinedWrites] = []

    def admit(self, connection: ReadDeadlineProtocol) -> bool:
        """Count a new connection in, closing the longest-waiting one if at the cap; ``False``
        when there is no room (every connection has a request in flight)."""
        if self.open >= self.limit:
            oldest = next(iter(self.waiting), None)
            if oldest is None:
                return False
            oldest.expire(linger=False)
        self.open += 1
        return True

    def flush_soon(self, writes: _JoinedWrites, loop: asyncio.AbstractEventLoop) -> None:
        """Send what ``writes`` holds at the end of this loop turn (one callback per turn for
        every connection that wrote in it)."""
        if not self._unflushed:
            loop.call_soon(self._flush)
        self._unflushed.append(writes)

    def _flush(self) -> None:
        unflushed, self._unflushed = self._unflushed, []
        for writes in unflushed:
            writes.flush()


class HostConfig(uvicorn.Config):
    """uvicorn's config for the host: its HTTP protocol is :class:`ReadDeadlineProtocol`.

    ``read_timeout`` is called for each deadline, so a reloaded setting applies to the next one;
    ``max_connections`` defaults to :func:`default_connection_limit`. Answers carry no
    ``Server: uvicorn`` header unless ``server_header=True``: what the host runs on is nobody's
    business (and one header fewer to write per answer).
    """

    def __init__(
        self,
        app: Any,
        *,
        read_timeout: Callable[[], float],
        max_connections: int | None = None,
        **options: Any,
    ) -> None:
        options.setdefault("server_header", False)
        super().__init__(app, http=ReadDeadlineProtocol, **options)
        self.read_timeout = read_timeout
        self.pool = ConnectionPool(default_connection_limit() if max_connections is None else max_connections)


def _default_read_timeout() -> float:
    return DEFAULT_READ_TIMEOUT_SECONDS


_app_read_timeout: Callable[[], float] = _default_read_timeout
#: The pools of servers configured with a plain ``uvicorn.Config`` (``uvicorn --http ...``).
_pools: weakref.WeakKeyDictionary[uvicorn.Config, ConnectionPool] = weakref.WeakKeyDictionary()


def use_read_timeout(seconds: Callable[[], float]) -> None:
    """Where the deadlines come from when the protocol runs under a plain ``uvicorn.Config``:
    the app factory of this process names its live ``server.read_timeout_seconds``."""
    global _app_read_timeout
    _app_read_timeout = seconds


def _options(config: uvicorn.Config) -> tuple[Callable[[], float], ConnectionPool]:
    if isinstance(config, HostConfig):
        return config.read_timeout, config.pool
    pool = _pools.get(config)
    if pool is None:
        pool = _pools[config] = ConnectionPool(default_connection_limit())
    return _app_read_timeout, pool


class _JoinedWrites:
    """The connection's transport, with the writes made within one loop turn sent as one while
    other requests are in flight (one syscall per response where the CPU is shared). A request
    served alone is written as it comes: its client starts reading the head while the body is
    still being written."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop, pool: ConnectionPool) -> None:
        self._transport = transport
        self._loop = loop
        self._pool = pool
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._pending:
            if self._alone():
                self._transport.write(data)
                return
            self._pool.flush_soon(self, self._loop)
        self._pending.append(data)

    def _alone(self) -> bool:
        """Whether nothing else wants the CPU now: no other request in flight, and (on the standard
        loop) nothing else due in this turn. A request that arrived whole is answered inside its
        ``data_received``, while the other connections read in the same turn still look idle: their
        reads are the callbacks due."""
        ready = callbacks_due(self._loop)
        return not ready and self._pool.open - len(self._pool.waiting) <= 1

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def flush(self) -> None:
        if self._pending:
            data = b"".join(self._pending)
            self._pending.clear()
            if not self._transport.is_closing():
                self._transport.write(data)

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._pending.clear()
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class ReadDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with the read deadlines and connection accounting above, and
    ``TCP_NODELAY`` on every connection (a response is written in several pieces: with Nagle's
    algorithm and delayed ACKs each would wait ~40 ms, whatever socket the server bound)."""

    def __init__(
        self,
        config: uvicorn.Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        app_state[READ_DEADLINES] = True
        self.read_timeout, self.pool = _options(config)
        self.phase: Phase = "closed"
        self.admitted = False
        self.deadline: asyncio.TimerHandle | None = None
        #: When the current phase's deadline passes (the loop's clock), ``None`` for no deadline.
        self.expires: float | None = None
        self.head = HeadMeter()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.transport = _JoinedWrites(transport, self.loop, self.pool)  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.admitted = self.pool.admit(self)
        if not self.admitted:
            self.limit_concurrency = 0  # uvicorn answers its request with 503 and closes
        self._enter("headers")

    def data_received(self, data: bytes) -> None:
        if self.phase == "closed":  # lingering after a 408
            return
        if self.phase == "idle":  # a keep-alive connection's next request has begun
            self._enter("headers")
        in_head = self._reading_head()
        if in_head and not self.head.fits(data):
            self.expire(reply=HEADERS_TOO_LARGE)
            return
        cycle = self.cycle
        super().data_received(data)
        if in_head:
            if self._reading_head():
                self.head.add(data)
            else:
                self.head.restart()
        self._follow()
        if self.cycle is not cycle:  # a request came in whole or in part: its task starts now
            start_now(self.loop, self.tasks.__contains__)

    def _reading_head(self) -> bool:
        """Whether the client is sending a request's head (h11 waits for a request)."""
        return self.conn.their_state is h11.IDLE

    def on_response_complete(self) -> None:
        self.transport.flush()  # type: ignore[attr-defined]
        # uvicorn's, with its keep-alive timeout kept as the idle phase's deadline: uvicorn made a
        # timer for every response and cancelled it with the next request.
        self.server_state.total_requests += 1
        if self.transport.is_closing():
            return
        self.flow.resume_reading()
        if self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE:
            self.conn.start_next_cycle()
            self.head.restart()
            buffered = self.conn.trailing_data[0]  # a pipelined request
            if buffered and not self.head.fits(buffered):
                self._enter("headers")  # the next request's head is what goes unanswered
                self.expire(reply=HEADERS_TOO_LARGE)
                return
            self.handle_events()
            if buffered and self._reading_head():
                self.head.restart(self.conn.trailing_data[0])
        if self.phase != "closed" and not self.transport.is_closing():
            self._follow(response_done=True)

    def connection_lost(self, exc: Exception | None) -> None:
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            cancel: Callable[[], object] | None = cycle.scope.get(CANCEL_ON_DISCONNECT)  # type: ignore[assignment]
            if cancel is not None:
                cancel()
        self._enter("closed")
        if self.admitted:
            self.admitted = False
            self.pool.open -= 1
        super().connection_lost(exc)

    def expire(self, *, linger: bool = True, reply: bytes = REQUEST_TIMEOUT) -> None:
        """Close a connection whose client is late (or, ``linger=False``, that must make room; or
        whose headers are too large, ``reply=HEADERS_TOO_LARGE``): a request not yet answered gets
        ``reply`` first. Lingering, the connection reads (and drops) what the client still sends for
        a moment, so that the reply is not lost to a reset."""
        unanswered = self.phase == "headers" or (self.cycle is not None and not self.cycle.response_started)
        self._enter("closed")
        if self.transport.is_closing():
            return
        if unanswered:
            if self.cycle is not None:  # the app sees http.disconnect, and its replies go nowhere
                self.cycle.disconnected = True
                self.cycle.message_event.set()
            self.transport.write(reply)
        if linger and self.transport.can_write_eof():
            self.transport.write_eof()
            self.loop.call_later(LINGER_SECONDS, self.transport.close)
        else:
            self.transport.close()

    def _follow(self, *, response_done: bool = False) -> None:
        """Move to the phase h11 says the client is in."""
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if self.phase != "body":
                self._enter("body")
        elif state is h11.IDLE:
            if response_done:  # waiting for the next request, for uvicorn's keep-alive timeout
                self._enter("idle")
        elif self.phase != "closed":
            self._enter("busy")

    def _enter(self, phase: Phase) -> None:
        if self.phase == "closed" and phase != "headers":
            return
        self.phase = phase
        waiting = self.pool.waiting
        waiting.pop(self, None)
        if self.admitted and phase != "busy" and phase != "closed":
            waiting[self] = None  # the newest waiter, evicted last
        if phase == "headers" or phase == "body" or phase == "idle":
            timeout = self.timeout_keep_alive if phase == "idle" else self.read_timeout()
            self.expires = self.loop.time() + timeout
            if self.deadline is None or self.deadline.when() > self.expires:
                if self.deadline is not None:
                    self.deadline.cancel()
                self.deadline = self.loop.call_at(self.expires, self._on_deadline)
            return
        self.expires = None
        if phase == "closed" and self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _on_deadline(self) -> None:
        """One timer serves a connection's deadlines: a phase moves ``expires``, and a timer that
        fires early (the deadline moved on since) waits for the new one instead of a timer being
        made and cancelled for every request."""
        self.deadline = None
        if self.expires is None:
            return
        if self.loop.time() < self.expires:
            self.deadline = self.loop.call_at(self.expires, self._on_deadline)
        elif self.phase == "idle":
            self.timeout_keep_alive_handler()  # uvicorn's: the connection is closed quietly
        else:
            self.expire()
