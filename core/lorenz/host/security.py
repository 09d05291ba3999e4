"""The HTTP guard in front of every route: Host/Origin checks, the bearer token, the body cap,
and JSON-RPC bodies that are one well-formed message (:mod:`lorenz.host.http.jsonrpc`).

One pure ASGI middleware, so a rejected request costs no framework work and nothing behind it
runs. The limits are read from the live settings on every request, so a hot reload that
changes ``server.token`` or the allow-lists takes effect at once.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lorenz.host.grants import Grant, grant_for, remember, token_matches
from lorenz.host.http.jsonrpc import has_surrogate_escape, parse_message, within_sdk_depth
from lorenz.host.http.listening import MCP_PATH
from lorenz.host.scope import PARSED_MESSAGE, REQUEST_SNAPSHOT
from lorenz.settings.model import ServerSettings

if TYPE_CHECKING:
    from lorenz.host.auth import Refusal, ResourceServer

__all__ = [
    "LOOPBACK_HOSTS",
    "SecurityMiddleware",
    "host_allowed",
    "origin_allowed",
    "raw_header",
    "token_matches",
]

logger = logging.getLogger("lorenz.host")

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_WILDCARDS = ("0.0.0.0", "[::]", "")
_UNAUTHORIZED = {"error": {"code": "unauthorized", "message": "Missing or invalid MCP bearer token"}}


def _split_host(value: str) -> tuple[str, str | None]:
    """``host[:port]`` → ``(host, port)``; brackets kept on IPv6 literals."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end == -1:
            return value, None
        host, rest = value[: end + 1], value[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else None
    host, sep, port = value.partition(":")
    return host, port if sep else None


def _matches(host: str, port: str | None, patterns: Iterable[str]) -> bool:
    for pattern in patterns:
        want_host, want_port = _split_host(pattern)
        if want_host != host:
            continue
        if want_port in (None, "*") or want_port == port:
            return True
    return False


def host_allowed(
    value: str | None,
    extra: Iterable[str] = (),
    *,
    port: int | None = None,
    scheme: str = "http",
    own: Iterable[str] = (),
) -> bool:
    """Whether a ``Host`` header names this server: a loopback name (or an ``own`` name: the
    address it is bound to) with the ``port`` it is served on (the socket's; a ``Host`` without
    one names the scheme's default port; any port when the socket has none), or an ``extra``
    entry (``host``, ``host:port`` or ``host:*``; a bare host allows any port)."""
    if not value:
        return False
    host, given = _split_host(value)
    if host in LOOPBACK_HOSTS or host in own:
        named = given if given is not None else "443" if scheme == "https" else "80"
        if port is None or named == str(port):
            return True
    return _matches(host, given, extra)


def _refused_host(host: str | None, port: int | None) -> str:
    """The 421's message, naming the setting that would allow the ``Host``."""
    shown = json.dumps((host or "")[:200])
    served = f" (this server is served on port {port})" if port is not None else ""
    return f"Host {shown} does not name this server{served}; add it to server.allowed_hosts in WORKFLOW.md to allow it"


def origin_allowed(
    value: str | None, extra: Iterable[str] = (), *, host: str | None = None, scheme: str = "http"
) -> bool:
    """Whether an ``Origin`` may call ``/mcp``: absent (non-browser clients), the server's own
    origin (``scheme://host`` as the request reached it, ``host`` being its ``Host`` header; the
    loopback names on one port are one server), or an ``extra`` entry (``scheme://host[:port]``,
    port ``*`` for any). Pages on other loopback ports are other origins."""
    if value is None:
        return True
    origin = value.strip().lower()
    for pattern in extra:
        pattern = pattern.strip().lower().rstrip("/")
        if pattern == "*" or pattern == origin:
            return True
        if pattern.endswith(":*") and origin.startswith(pattern[:-1]) and origin[len(pattern) - 1 :].isdigit():
            return True
    return host is not None and _same_origin(origin, host, scheme)


def _same_origin(origin: str, host: str, scheme: str) -> bool:
    origin_scheme, sep, rest = origin.partition("://")
    if not sep or origin_scheme != scheme or "/" in rest:
        return False
    origin_host, origin_port = _split_host(rest)
    host_name, host_port = _split_host(host)
    default = "443" if scheme == "https" else "80"
    if (origin_port or default) != (host_port or default):
        return False
    return origin_host == host_name or (origin_host in LOOPBACK_HOSTS and host_name in LOOPBACK_HOSTS)


def raw_header(scope: Scope, name: bytes) -> bytes | None:
    """The first ``name`` header of a request, as sent."""
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


def _header(scope: Scope, name: bytes) -> str | None:
    value = raw_header(scope, name)
    return value.decode("latin-1") if value is not None else None


_PREFLIGHT = [
    (b"access-control-allow-methods", b"GET, POST, DELETE, OPTIONS"),
    (
        b"access-control-allow-headers",
        b"Authorization, Content-Type, Accept, Last-Event-ID, Mcp-Session-Id, Mcp-Protocol-Version, "
        b"Mcp-Method, Mcp-Name",
    ),
    (b"access-control-max-age", b"600"),
]


def _adding_headers(send: Send, headers: list[tuple[bytes, bytes]]) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), *headers]}
        await send(message)

    return wrapped


async def _send_json(send: Send, status: int, body: Any, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    payload = json.dumps(body, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


#: Origins already named in the log: each is logged once (a page may retry all day), and at most
#: this many, so a flood of made-up origins cannot fill the log.
_LOGGED_ORIGINS: set[str] = set()
_MAX_LOGGED_ORIGINS = 64


def _refused_origin(origin: str | None) -> str:
    """The 403's message, naming the setting that would allow the origin; logged once per origin."""
    shown = json.dumps((origin or "")[:200])
    if origin not in _LOGGED_ORIGINS and len(_LOGGED_ORIGINS) < _MAX_LOGGED_ORIGINS:
        _LOGGED_ORIGINS.add(origin or "")
        logger.warning("lorenz: refused a request from Origin %s; list it in server.allowed_origins to allow it", shown)
    return f"Origin {shown} is not allowed; add it to server.allowed_origins in WORKFLOW.md to allow it"


class SecurityMiddleware:
    """Guard the app: a foreign ``Host`` gets 421 everywhere; on ``/mcp`` an ``Origin`` other
    than the server's own or a configured one gets 403 (CORS preflights included), a missing or
    wrong bearer token 401, a body over the cap 413 and a POST body that is not one JSON-RPC
    message a 400 JSON-RPC error, before the MCP transport sees the request."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        server_settings: Callable[[Scope], ServerSettings | Awaitable[ServerSettings]],
        bind_host: str | None = None,
        mcp_endpoint: ASGIApp | None = None,
        resource_server: ResourceServer | None = None,
    ) -> None:
        self.app = app
        #: Judges OAuth access tokens when ``server.auth`` is set.
        self.resource_server = resource_server
        self.server_settings = server_settings
        # A request that passed the checks goes straight to the MCP transport: the framework's
        # router and exception layers add nothing there (the SDK answers its own errors).
        self.mcp_endpoint = mcp_endpoint if mcp_endpoint is not None else app
        # A specific non-loopback bind address is how clients reach us, so its name (on the port
        # served) is ours too.
        if bind_host and ":" in bind_host and not bind_host.startswith("["):
            bind_host = f"[{bind_host}]"
        self.bind_hosts: tuple[str, ...] = (bind_host.lower(),) if bind_host and bind_host not in _WILDCARDS else ()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        current = self.server_settings(scope)
        server = await current if inspect.isawaitable(current) else current
        host = _header(scope, b"host")
        local = scope.get("server")
        port = local[1] if local and isinstance(local[1], int) else None  # the socket's: --port 0 included
        scheme = scope.get("scheme", "http")
        if not host_allowed(host, server.allowed_hosts, port=port, scheme=scheme, own=self.bind_hosts):
            refused = {"error": {"code": "misdirected", "message": _refused_host(host, port)}}
            await _send_json(send, 421, refused)
            return
        if scope["path"] != MCP_PATH:
            await self.app(scope, receive, send)
            return
        origin = _header(scope, b"origin")
        if not origin_allowed(origin, server.allowed_origins, host=host, scheme=scheme):
            await _send_json(send, 403, {"error": {"code": "forbidden", "message": _refused_origin(origin)}})
            return
        cors: list[tuple[bytes, bytes]] = []
        if origin is not None:  # an allowed browser origin: let it read the answers (CORS)
            cors = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]
            if scope["method"] == "OPTIONS":  # preflight: carries no credentials, answered here
                await send({"type": "http.response.start", "status": 204, "headers": [*cors, *_PREFLIGHT]})
                await send({"type": "http.response.body", "body": b""})
                return
            cors.append((b"access-control-expose-headers", b"Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"))
            send = _adding_headers(send, cors)
        authorization = raw_header(scope, b"authorization")
        grant: Grant | Refusal | None = grant_for(authorization, server)
        if grant is None and server.auth is not None and self.resource_server is not None:
            snapshot = scope.get(REQUEST_SNAPSHOT)
            tool_scopes = snapshot.tool_scopes() if snapshot is not None else None
            grant = await self.resource_server.authenticate(server.auth, authorization, scope, tool_scopes)
        if grant is None:
            await _send_json(send, 401, _UNAUTHORIZED, [(b"www-authenticate", b'Bearer realm="lorenz"')])
            return
        if not isinstance(grant, Grant):
            await _refuse(send, grant)
            return
        remember(scope, grant)
        if scope["method"] != "POST":
            await self.mcp_endpoint(scope, receive, send)
            return
        await self._capped(scope, receive, send, server, grant)

    async def _capped(self, scope: Scope, receive: Receive, send: Send, server: ServerSettings, grant: Grant) -> None:
        limit = server.max_body_bytes
        too_large = {"error": {"code": "payload_too_large", "message": f"Request body exceeds {limit} bytes"}}
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await _send_json(send, 413, too_large)
            return
        # Read the stream itself: a lying or absent Content-Length must not get past the cap.
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _send_json(send, 413, too_large)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        message, rejected = parse_message(body)
        if rejected is not None:
            await _send_json(send, 400, rejected)
            return
        if not has_surrogate_escape(body) and within_sdk_depth(body):  # else the SDK's own parser judges it
            scope[PARSED_MESSAGE] = message
        refusal = self._scope_refusal(server, grant, message, scope)
        if refusal is not None:
            await _refuse(send, refusal)
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.mcp_endpoint(scope, replay, send)

    def _scope_refusal(self, server: ServerSettings, grant: Grant, message: Any, scope: Scope) -> Refusal | None:
        """A ``tools/call`` an OAuth caller's scopes do not cover: 403 ``insufficient_scope``, so
        the client can ask the user for the scope (a static token's call gets the tool error)."""
        if grant.caller is None or server.auth is None or self.resource_server is None:
            return None
        if not isinstance(message, dict) or message.get("method") != "tools/call":
            return None
        params = message.get("params")
        name = params.get("name") if isinstance(params, dict) else None
        if not isinstance(name, str):
            return None
        snapshot = scope.get(REQUEST_SNAPSHOT)
        needs = snapshot.tool_scopes().get(name, ()) if snapshot is not None else ()
        return self.resource_server.insufficient_scope(server.auth, grant, name, scope, needs)


async def _refuse(send: Send, refusal: Refusal) -> None:
    await _send_json(send, refusal.status, refusal.body, refusal.headers())
