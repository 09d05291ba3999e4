"""What the lean path of ``/mcp`` reads off a request before it answers one: whether it is a plain
JSON request (or asks for notifications on its way), its routing headers, whether a tool's schema
may mirror an argument in an ``Mcp-Param-*`` header, and the connection the SDK's inbound ladder
makes of a 2026-07-28 request's envelope. Each verdict is kept per distinct value seen: a client
sends the same values on every request.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pydantic_core
from mcp.server.connection import Connection
from mcp.server.streamable_http import check_accept_headers
from mcp.shared.inbound import (
    MCP_METHOD_HEADER,
    MCP_NAME_HEADER,
    MCP_PROTOCOL_VERSION_HEADER,
    NAME_BEARING_METHODS,
    X_MCP_HEADER_KEY,
    InboundLadderRejection,
    classify_inbound_request,
)
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    DEFAULT_NEGOTIATED_VERSION,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)
from starlette.requests import Request
from starlette.types import Scope

from lorenz.host.scope import PARSED_MESSAGE
from lorenz.host.security import raw_header

__all__ = [
    "born_ready",
    "declares_param_headers",
    "envelope_route",
    "plain_json_request",
    "reads_json",
    "routing_headers",
    "wants_notifications",
]


def plain_json_request(scope: Scope) -> dict[str, Any] | None:
    """The request (not a notification or a response) a client that reads JSON sent as JSON."""
    message = scope.get(PARSED_MESSAGE)
    if not isinstance(message, dict) or "id" not in message or "method" not in message:
        return None
    content_type = raw_header(scope, b"content-type")
    # Exactly as the SDK's transport compares it (case and all); anything else is its to judge.
    if content_type is None or content_type.split(b";")[0].strip() != b"application/json":
        return None
    return message if reads_json(raw_header(scope, b"accept")) else None


def wants_notifications(scope: Scope) -> bool:
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


def reads_json(accept: bytes | None) -> bool:
    """Whether the SDK's :func:`check_accept_headers` finds JSON in ``accept`` (the first header)."""
    verdict = _ACCEPTS.get(accept)
    if verdict is None:
        headers = [(b"accept", accept)] if accept is not None else []
        verdict, _ = check_accept_headers(Request({"type": "http", "headers": headers}))
        _remember(_ACCEPTS, accept, verdict, _ACCEPTS_KEPT)
    return verdict


#: The headers the SDK's inbound ladder reads (by the lowercase names ASGI gives).
_ROUTING = {name.encode("latin-1"): name for name in (MCP_PROTOCOL_VERSION_HEADER, MCP_METHOD_HEADER, MCP_NAME_HEADER)}


def routing_headers(scope: Scope) -> dict[str, str] | None:
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


#: Input schemas seen to hold no ``x-mcp-header`` key anywhere, by identity (kept alive here, so
#: an id is never reused while its entry stands): a tool's schema is one object per snapshot.
_HEADERLESS: dict[int, Mapping[str, Any]] = {}
_HEADERLESS_KEPT = 1024


def declares_param_headers(schema: Mapping[str, Any]) -> bool:
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


#: The outbound channel of a connection built from a request envelope: none (one HTTP exchange).
_NO_CHANNEL = Connection.from_envelope(DEFAULT_NEGOTIATED_VERSION, None, None).outbound


def born_ready(version: str, client_params: Any = None, capabilities: Any = None) -> Connection:
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


def envelope_route(message: dict[str, Any], routing: dict[str, str]) -> Connection | None:
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
            return born_ready(*identity) if identity is not None else None
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
