"""``/mcp`` in stateless mode, and its lean path for the common request.

A plain JSON request goes straight to the SDK's own request kernel (``ServerRunner``), run once as
:func:`mcp.server.runner.serve_one` runs it: the same handlers, validation and born-ready
connection, without the SDK transport's per-request streams and tasks. A 2026-07-28 request first
climbs the SDK's inbound ladder. Whatever the lean path does not answer goes through the SDK's
transport unchanged, so the SDK words every refusal. Its private SDK accesses: :mod:`lorenz._internals`.
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
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.inbound import (
    ERROR_CODE_HTTP_STATUS,
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PARAM_HEADER_PREFIX,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    X_MCP_HEADER_KEY,
    InboundLadderRejection,
    classify_inbound_request,
    validate_mcp_param_headers,
)
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import MessageMetadata, ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    DEFAULT_NEGOTIATED_VERSION,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    ErrorData,
    RequestId,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from lorenz._internals import lifespan_state, needs_teardown, runner_on_request
from lorenz.host.http.disconnect import until_disconnect
from lorenz.host.scope import AFTER_REPLY, PARSED_MESSAGE
from lorenz.host.security import raw_header

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


def _plain_json_request(scope: Scope) -> dict[str, Any] | None:
    """The request (not a notification or a response) a client that reads JSON sent as JSON."""
    message = scope.get(PARSED_MESSAGE)
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        return None
    content_type = raw_header(scope, b"content-type")
    # Exactly as the SDK's transport compares it (case and all); anything else is its to judge.
    if content_type is None or content_type.split(b";")[0].strip() != b"application/json":
        return None
    return message if _reads_json(raw_header(scope, b"accept")) else None


def _wants_notifications(scope: Scope) -> bool:
    """Whether the request asks for notifications on its way (a ``progressToken``, a 2026-07-28
    log level in ``_meta``) from a client that reads SSE."""
    message = scope.get(PARSED_MESSAGE)
    params = message.get("params") if isinstance(message, dict) and "id" in message else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict) or ("progressToken" not in meta and LOG_LEVEL_META_KEY not in meta):
        return False
    accept = raw_header(scope, b"accept")
    return accept is not None and b"text/event-stream" in accept.lower()


#: The SDK's verdict on each ``Accept`` value seen (clients send one value all day).
_ACCEPTS: dict[bytes | None, bool] = {}
_ACCEPTS_KEPT = 64


def _reads_json(accept: bytes | None) -> bool:
    """Whether the SDK's :func:`check_accept_headers` finds JSON in ``accept`` (the first header)."""
    verdict = _ACCEPTS.get(accept)
    if verdict is None:
        headers = [(b"accept", accept)] if accept is not None else []
        verdict, _ = check_accept_headers(Request({"type": "http", "headers": headers}))
        _remember(_ACCEPTS, accept, verdict, _ACCEPTS_KEPT)
    return verdict


#: The headers the SDK's inbound ladder reads (by the lowercase names ASGI gives).
_ROUTING = {name.encode("latin-1"): name for name in (MCP_PROTOCOL_VERSION_HEADER, MCP_METHOD_HEADER, MCP_NAME_HEADER)}


def _routing_headers(scope: Scope) -> dict[str, str] | None:
    """The routing headers the inbound ladder compares with the body, decoded; ``None`` when
    one is repeated (the SDK's transport refuses that, in its words)."""
    found: dict[str, str] = {}
    for key, value in scope["headers"]:
        name = _ROUTING.get(key)
        if name is not None:
            if name in found:
                return None
            found[name] = value.decode("latin-1")
    return found


def _remember(cache: dict[Any, Any], key: Any, value: Any, kept: int) -> None:
    """``cache[key] = value``, the cache emptied first once it holds ``kept`` entries (what a
    client sends repeats; a flood of distinct values only costs the work redone)."""
    if len(cache) >= kept:
        cache.clear()
    cache[key] = value


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
        if streaming is not None and _wants_notifications(scope):
            await until_disconnect(scope, receive, lambda receive: streaming(scope, receive, send))
            return
        request = Request(scope)
        message = _plain_json_request(scope) if self.lean else None
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
            legacy = _born_ready(version)
            return _Route(legacy, _Exchange(message["id"], metadata), modern=False)
        routing = _routing_headers(scope)
        if message["method"] == "subscriptions/listen" or routing is None:
            return None
        connection = _envelope_route(message, routing)
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
        if schema is None or not _declares_param_headers(schema):
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


#: Input schemas seen to hold no ``x-mcp-header`` key anywhere, by identity (kept alive here, so
#: an id is never reused while its entry stands): a tool's schema is one object per snapshot.
_HEADERLESS: dict[int, Mapping[str, Any]] = {}
_HEADERLESS_KEPT = 1024


def _declares_param_headers(schema: Mapping[str, Any]) -> bool:
    """Whether ``schema`` may annotate a property with ``x-mcp-header`` (the key is anywhere in it)."""
    if _HEADERLESS.get(id(schema)) is schema:
        return False
    stack: list[Any] = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if X_MCP_HEADER_KEY in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    _remember(_HEADERLESS, id(schema), schema, _HEADERLESS_KEPT)
    return False


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


#: The outbound channel of a connection built from a request envelope: none (one HTTP exchange).
_NO_CHANNEL = Connection.from_envelope(DEFAULT_NEGOTIATED_VERSION, None, None).outbound


def _born_ready(version: str, client_params: Any = None, capabilities: Any = None) -> Connection:
    """A connection as ``Connection.from_envelope`` makes it, from its identity already made:
    without one, the handshake-era stateless connection (no absent value validated only to fail)."""
    connection = Connection(_NO_CHANNEL, protocol_version=version, client_params=client_params)
    connection.client_capabilities = capabilities
    connection.initialized.set()
    return connection


#: The inbound ladder's verdict on each request envelope and routing headers seen: ``None`` (a
#: rejection) or what ``Connection.from_envelope`` made of the envelope (its version, client params
#: and capabilities). A client sends the same values on every request, and climbing the ladder and
#: validating them (or failing to) is most of a 2026-07-28 request's routing.
_ENVELOPES: dict[bytes, tuple[str, Any, Any] | None] = {}
_ENVELOPES_KEPT = 256
_ENVELOPE_KEYS = (PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY)


def _envelope_route(message: dict[str, Any], routing: dict[str, str]) -> Connection | None:
    """The connection of a 2026-07-28 request the SDK's inbound ladder
    (:func:`~mcp.shared.inbound.classify_inbound_request`) lets through, else ``None``; the ladder
    runs once per distinct value of what it reads (the envelope's keys, the method, the named
    param, the routing headers)."""
    params = message.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    key: bytes | None = None
    if type(meta) is dict:
        name_key = NAME_BEARING_METHODS.get(message["method"])
        named = params.get(name_key) if name_key is not None and type(params) is dict else None
        version, capabilities, info = _ENVELOPE_KEYS
        read = [routing, message["method"], named, version in meta, capabilities in meta]
        read += (meta.get(version), meta.get(capabilities), meta.get(info))
        try:
            key = pydantic_core.to_json(read)
        except pydantic_core.PydanticSerializationError:
            key = None
        if key is not None and key in _ENVELOPES:
            identity = _ENVELOPES[key]
            return _born_ready(*identity) if identity is not None else None
    verdict = classify_inbound_request(message, headers=routing)
    if isinstance(verdict, InboundLadderRejection):
        identity, connection = None, None
    else:
        connection = Connection.from_envelope(
            verdict.protocol_version, verdict.client_info, verdict.client_capabilities
        )
        identity = (verdict.protocol_version, connection.client_params, connection.client_capabilities)
    if key is not None:
        _remember(_ENVELOPES, key, identity, _ENVELOPES_KEPT)
    return connection


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
