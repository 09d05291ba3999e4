"""``/mcp`` in stateless mode, and its lean path for the common request.

A plain JSON request goes straight to the SDK's own request kernel (``ServerRunner``), run once as
:func:`mcp.server.runner.serve_one` runs it: the same handlers, validation and born-ready
connection, without the SDK transport's per-request streams and tasks. A 2026-07-28 request first
climbs the SDK's inbound ladder. Whatever the lean path does not answer goes through the SDK's
transport unchanged, so the SDK words every refusal. What it reads off a request to decide:
:mod:`.inbound`. Its private SDK accesses: :mod:`lorenz._internals`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.runner import ServerRunner, aclose_shielded, modern_error_data
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_PARAM_HEADER_PREFIX,
    validate_mcp_param_headers,
)
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import MessageMetadata, ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    ErrorData,
    RequestId,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from lorenz._internals import lifespan_state, needs_teardown, runner_on_request
from lorenz.host.http.disconnect import until_disconnect
from lorenz.host.scope import AFTER_REPLY
from lorenz.host.security import raw_header

from .inbound import (
    born_ready,
    declares_param_headers,
    envelope_route,
    plain_json_request,
    routing_headers,
    wants_notifications,
)

__all__ = ["StatelessEndpoint"]

logger = logging.getLogger("lorenz.host")

_TRANSPORT = TransportContext(kind="streamable-http", can_send_request=False)
_JSON_HEADERS = [(b"content-type", b"application/json")]
_MCP_PARAM = MCP_PARAM_HEADER_PREFIX.lower()


@dataclass
class _Exchange:
    """The dispatch context of one request answered in one JSON response: there is no stream to
    carry a notification (progress, a log message) and no way to ask the client anything, as on
    the SDK's stateless JSON transport."""

    request_id: RequestId
    message_metadata: MessageMetadata
    transport: TransportContext = _TRANSPORT
    can_send_request: bool = False
    _cancel_requested: anyio.Event | None = field(default=None, repr=False)

    @property
    def cancel_requested(self) -> anyio.Event:
        """Never set (a dropped connection is this exchange's only cancellation); made when a
        handler first asks for it."""
        if self._cancel_requested is None:
            self._cancel_requested = anyio.Event()
        return self._cancel_requested

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None) -> None:
        return None

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None


@dataclass(frozen=True)
class _Route:
    """How one request is served: its connection, its dispatch context, and its era's wire rules."""

    connection: Connection
    exchange: _Exchange
    modern: bool


class StatelessEndpoint:
    """``/mcp`` in stateless mode: only POST means anything (there is no session to stream to
    or delete), so GET and DELETE get 405 instead of an SSE stream that never ends.

    A client that drops the connection before its answer cancels the request, and so the tool
    call in flight: with no session, a dropped connection is how a stateless client cancels."""

    def __init__(
        self,
        transport: ASGIApp,
        manager: StreamableHTTPSessionManager,
        *,
        fast_path: bool = True,
        streaming: ASGIApp | None = None,
    ) -> None:
        self.transport = transport
        #: The SDK's SSE transport, for a request that asks for notifications when answers are JSON.
        self.streaming = streaming
        self.manager = manager
        #: Whether plain JSON requests take the lean path (else all go through the SDK's transport).
        self.lean = fast_path and manager.json_response
        self.server: Server[Any] = manager.app
        self.not_allowed = JSONResponse(
            {"error": {"code": "method_not_allowed", "message": "Method not allowed"}},
            status_code=405,
            headers={"Allow": "POST"},
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST":
            await self.not_allowed(scope, receive, send)
            return
        streaming = self.streaming
        if streaming is not None and wants_notifications(scope):
            await until_disconnect(scope, receive, lambda receive: streaming(scope, receive, send))
            return
        request = Request(scope)
        message = plain_json_request(scope) if self.lean else None
        route = self._route(scope, request, message) if message is not None else None
        if message is None or route is None:
            await until_disconnect(scope, receive, lambda receive: self.transport(scope, receive, send))
            return

        async def answer(receive: Receive) -> None:
            await receive()  # the body, parsed already by the guard
            later: list[Callable[[], None]] = []
            scope[AFTER_REPLY] = later
            try:
                await self._answer(send, message, route)
            finally:
                del scope[AFTER_REPLY]  # the work holds the request, so the scope: no cycle left
                _run_all(later)

        await until_disconnect(scope, receive, answer)

    def _route(self, scope: Scope, request: Request, message: dict[str, Any]) -> _Route | None:
        """The route of a request the lean path answers, else ``None``."""
        metadata = ServerMessageMetadata(request_context=request)
        header = raw_header(scope, b"mcp-protocol-version")
        version = header.decode("latin-1") if header is not None else DEFAULT_NEGOTIATED_VERSION
        if version in HANDSHAKE_PROTOCOL_VERSIONS:
            # Born ready, as the SDK's stateless transport builds it: there is no handshake.
            legacy = born_ready(version)
            return _Route(legacy, _Exchange(message["id"], metadata), modern=False)
        routing = routing_headers(scope)
        if message["method"] == "subscriptions/listen" or routing is None:
            return None
        connection = envelope_route(message, routing)
        if connection is None or self._param_rejection(request, message):
            return None
        transport = TransportContext(kind="streamable-http", can_send_request=False, headers=request.headers)
        return _Route(connection, _Exchange(message["id"], metadata, transport=transport), modern=True)

    def _param_rejection(self, request: Request, message: dict[str, Any]) -> bool:
        """Whether a ``tools/call``'s ``Mcp-Param-*`` headers disagree with its arguments (the
        SDK's check, against the tool's own ``inputSchema``)."""
        params = message.get("params") or {}
        name, arguments = params.get("name"), params.get("arguments")
        lookup = self.server.get_tool_input_schema
        if message["method"] != "tools/call" or lookup is None or not isinstance(name, str):
            return False
        if arguments is not None and type(arguments) is not dict and not isinstance(arguments, Mapping):
            return False
        if not arguments and not any(key.startswith(_MCP_PARAM) for key in request.headers):
            return False
        try:
            schema = lookup(name)
        except Exception:
            return True  # the SDK logs it and skips the check: let it
        if schema is None or not declares_param_headers(schema):
            return False  # no header can disagree with an argument no header mirrors
        return validate_mcp_param_headers(schema, arguments or {}, request.headers) is not None

    async def _answer(self, send: Send, message: dict[str, Any], route: _Route) -> None:
        """One request through the SDK's single-exchange driver, answered as the SDK's transport
        for its era answers it: a JSON-RPC result or error (handshake era: always HTTP 200)."""
        status = 200
        try:
            result = await _serve_one(
                self.server,
                route.exchange,
                message["method"],
                message.get("params"),
                connection=route.connection,
                lifespan_state=lifespan_state(self.manager),
            )
        except Exception as exc:
            if route.modern:
                error = modern_error_data(exc)
                status = ERROR_CODE_HTTP_STATUS.get(error.code, 200)
                wire = error.model_dump(by_alias=True, mode="json", exclude_none=True)
            else:  # as the SDK's handshake-era dispatcher maps it (code 0: its v1-compatible choice)
                error = handler_exception_to_error_data(exc) or _unmapped(message["method"], exc)
                wire = error.model_dump(by_alias=True, mode="json", exclude_unset=True)
            reply = {"jsonrpc": "2.0", "id": message["id"], "error": wire}
        else:
            reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        try:
            body = pydantic_core.to_json(reply)
        except pydantic_core.PydanticSerializationError:  # a lone surrogate: JSON can still escape it
            body = json.dumps(reply).encode()
        headers = [*_JSON_HEADERS, (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


async def _serve_one(
    server: Server[Any],
    exchange: _Exchange,
    method: str,
    params: Mapping[str, Any] | None,
    *,
    connection: Connection,
    lifespan_state: Any,
) -> dict[str, Any]:
    """The SDK's :func:`~mcp.server.runner.serve_one`: its kernel runs the request once; the
    connection's shielded teardown is skipped when nothing registered any (the usual case)."""
    on_request = runner_on_request(ServerRunner(server, connection, lifespan_state))
    try:
        result: dict[str, Any] = await on_request(exchange, method, params)
        return result
    finally:
        if needs_teardown(connection):
            await aclose_shielded(connection)


def _run_all(work: list[Callable[[], None]]) -> None:
    """Each of ``work``, one failing not stopping the others (the answer has gone already)."""
    for item in work:
        try:
            item()
        except Exception:
            logger.exception("lorenz: work after a reply failed")


def _unmapped(method: str, exc: Exception) -> ErrorData:
    logger.exception("handler for %r raised", method)
    return ErrorData(code=0, message=str(exc))
