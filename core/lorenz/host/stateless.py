"""``/mcp`` in stateless mode, and its lean path for the common request.

The SDK's handshake-era stateless transport builds, for every POST, a transport, four memory
streams, a JSON-RPC dispatcher and two tasks, only to carry one request to ``serve_one``-style
handling and one response back: about two thirds of a call's CPU. A plain JSON request of that
era (what agents send all day) goes here straight to the SDK's own single-exchange driver,
:func:`mcp.server.runner.serve_one`, as the SDK's 2026-07-28 path does: the same handlers, the
same request and result validation, the same born-ready connection the stateless transport
builds, and the legacy dispatcher's mapping of a handler's exception to a JSON-RPC error.
Anything else (another era, SSE responses, a notification, an unusual header) goes through the
SDK's transport unchanged.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import pydantic_core
from mcp.server.connection import Connection
from mcp.server.lowlevel.server import Server
from mcp.server.runner import serve_one
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.dispatcher import CallOptions
from mcp.shared.exceptions import NoBackChannelError
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import MessageMetadata, ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import DEFAULT_NEGOTIATED_VERSION, ErrorData, RequestId
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .security import PARSED_MESSAGE

__all__ = ["StatelessEndpoint"]

logger = logging.getLogger("lorenz.host")

_TRANSPORT = TransportContext(kind="streamable-http", can_send_request=False)
_JSON_HEADERS = [(b"content-type", b"application/json")]


@dataclass
class _Exchange:
    """The dispatch context of one request answered in one JSON response: there is no stream to
    carry a notification (progress, a log message) and no way to ask the client anything, as on
    the SDK's stateless JSON transport."""

    request_id: RequestId
    message_metadata: MessageMetadata
    transport: TransportContext = _TRANSPORT
    cancel_requested: anyio.Event = field(default_factory=anyio.Event)
    can_send_request: bool = False

    async def send_raw_request(
        self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None
    ) -> dict[str, Any]:
        raise NoBackChannelError(method)

    async def notify(self, method: str, params: Mapping[str, Any] | None, opts: CallOptions | None = None) -> None:
        return None

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        return None


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


def _protocol_version(scope: Scope) -> str | None:
    """The handshake-era version this request speaks, or ``None`` when it is not one the lean
    path answers (a 2026-07-28 request, or a header the SDK must judge)."""
    header = _header(scope, b"mcp-protocol-version")
    if header is None:
        return DEFAULT_NEGOTIATED_VERSION
    version = header.decode("latin-1")
    return version if version in HANDSHAKE_PROTOCOL_VERSIONS else None


def _is_plain_json_request(scope: Scope, message: Any) -> bool:
    """A request (not a notification or a response) sent as JSON by a client that reads JSON."""
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        return False
    content_type = _header(scope, b"content-type")
    if content_type is None or content_type.split(b";")[0].strip().lower() != b"application/json":
        return False
    has_json, _ = check_accept_headers(Request(scope))
    return has_json


class StatelessEndpoint:
    """``/mcp`` in stateless mode: only POST means anything (there is no session to stream to
    or delete), so GET and DELETE get 405 instead of an SSE stream that never ends.

    A client that drops the connection before its answer cancels the request, and so the tool
    call in flight: with no session, a dropped connection is how a stateless client cancels."""

    def __init__(self, transport: ASGIApp, manager: StreamableHTTPSessionManager) -> None:
        self.transport = transport
        self.manager = manager
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
        message = scope.get(PARSED_MESSAGE)
        version = _protocol_version(scope) if self.manager.json_response else None
        if version is not None and _is_plain_json_request(scope, message):

            async def answer(receive: Receive) -> None:
                await receive()  # the body, parsed already by the guard
                await self._answer(scope, send, message, version)

            await _until_disconnect(receive, answer)
        else:
            await _until_disconnect(receive, lambda receive: self.transport(scope, receive, send))

    async def _answer(self, scope: Scope, send: Send, message: Any, version: str) -> None:
        """One request through the SDK's single-exchange driver, answered as the SDK's stateless
        JSON transport answers it (HTTP 200, a JSON-RPC result or error)."""
        exchange = _Exchange(message["id"], ServerMessageMetadata(request_context=Request(scope)))
        reply = await self._reply(exchange, message, version)
        try:
            body = pydantic_core.to_json(reply)
        except pydantic_core.PydanticSerializationError:  # a lone surrogate: JSON can still escape it
            body = json.dumps(reply).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [*_JSON_HEADERS, (b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})

    async def _reply(self, exchange: _Exchange, message: dict[str, Any], version: str) -> dict[str, Any]:
        # Born ready, as the SDK's stateless transport builds it: there is no handshake to wait for.
        connection = Connection.from_envelope(version, None, None)
        try:
            result = await serve_one(
                self.server,
                exchange,
                message["method"],
                message.get("params"),
                connection=connection,
                lifespan_state=getattr(self.manager, "_lifespan_state", None),
            )
        except Exception as exc:
            # As the SDK's handshake-era dispatcher maps it (code 0 is its v1-compatible choice).
            error = handler_exception_to_error_data(exc)
            if error is None:
                logger.exception("handler for %r raised", message["method"])
                error = ErrorData(code=0, message=str(exc))
            wire = error.model_dump(by_alias=True, mode="json", exclude_unset=True)
            return {"jsonrpc": "2.0", "id": exchange.request_id, "error": wire}
        return {"jsonrpc": "2.0", "id": exchange.request_id, "result": result}


async def _until_disconnect(receive: Receive, work: Callable[[Receive], Awaitable[None]]) -> None:
    """``work(receive)``, cancelled when the client disconnects before it is done. The watch starts
    once ``work`` has read the whole body, and costs one plain task: no task group, whose ending
    would format a task's repr for its cancel message on every request."""
    body_read = asyncio.Event()

    async def tracked() -> Message:
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            body_read.set()
        return message

    with anyio.CancelScope() as call:

        async def watch() -> None:
            await body_read.wait()
            while (await receive())["type"] != "http.disconnect":
                pass
            call.cancel()

        watcher = asyncio.get_running_loop().create_task(watch())
        try:
            await work(tracked)
        finally:
            watcher.cancel()
