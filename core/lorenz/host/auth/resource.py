"""The host as an OAuth 2.1 resource server (``server.auth``): who a bearer token names, what
its scopes let it call, and how a refusal tells a client where to log in.

A refusal carries ``WWW-Authenticate: Bearer resource_metadata="…"`` pointing at the Protected
Resource Metadata (RFC 9728) served at ``/.well-known/oauth-protected-resource[/mcp]``, which
names the issuer; a client (the SDK's ``OAuthClientProvider``, the MCP Inspector) discovers the
rest from there. The token's scopes become a :class:`~lorenz.host.grants.Grant`, the same
limit a scoped static token sets; the token itself stops here.

The resource identifier (the audience a token must name) never comes from the request: it is
``server.auth.audience``, else, on loopback only, ``/mcp`` at the address and port the server
listens on (the URL ``lorenz serve`` prints). Beyond loopback without an audience every token
is refused with a 500 naming the key (``lorenz serve`` refuses to start that way).
"""

from __future__ import annotations

import fnmatch
import logging
import math
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from attrs import evolve, frozen
from mcp.server.auth.json_response import PydanticJSONResponse
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Scope

from lorenz.contracts import Caller
from lorenz.host.grants import Grant
from lorenz.host.http.listening import MCP_PATH, display_url
from lorenz.host.refusals import NO_AUDIENCE, is_loopback
from lorenz.settings.model import OAuthSettings

from .cache import Budget

if TYPE_CHECKING:
    import httpx

    from .verifier import OAuthVerifier

__all__ = ["METADATA_PATH", "Refusal", "ResourceServer", "scopes_for"]

logger = logging.getLogger("lorenz.host")

METADATA_PATH = "/.well-known/oauth-protected-resource"
_MAX_AUDIENCES = 16
#: A scope token (RFC 6749 §3.3); a pack's scope that is not one never reaches a header.
_SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")


@frozen
class Refusal:
    """A 401 or 403 for ``/mcp``: its status, JSON body and ``WWW-Authenticate`` value; or a 503
    (the issuer cannot be asked now) with its ``Retry-After`` seconds, or a 500 (no audience)."""

    status: int
    body: dict[str, Any]
    challenge: str | None = None
    retry_after: int | None = None

    def headers(self) -> list[tuple[bytes, bytes]]:
        """The response headers that go with it."""
        headers = [(b"www-authenticate", self.challenge.encode("latin-1"))] if self.challenge else []
        if self.retry_after is not None:
            headers.append((b"retry-after", str(self.retry_after).encode()))
        return headers


_NO_AUDIENCE = Refusal(500, {"error": "server_error", "error_description": NO_AUDIENCE})


def scopes_for(auth: OAuthSettings, tool: str) -> list[str]:
    """The configured scopes that grant ``tool``."""
    return [scope for scope, globs in auth.scopes if any(fnmatch.fnmatchcase(tool, glob) for glob in globs)]


def _own_resource(bind_host: str | None, scope: Scope) -> str | None:
    """``/mcp`` at the loopback address this server listens on (``bind_host``, else the address the
    connection reached) and the port it is bound to: the socket's, so ``--port 0`` names the port
    picked; ``None`` beyond loopback or on a socket without a port."""
    local = scope.get("server")
    if not local or not isinstance(local[1], int):
        return None
    host = bind_host or str(local[0])
    return display_url(host, local[1]) if is_loopback(host) else None


def _metadata_url(resource: str) -> str:
    if urlsplit(resource).path.rstrip("/") == MCP_PATH:
        return str(build_resource_metadata_url(AnyHttpUrl(resource)))
    parts = urlsplit(resource)
    return urlunsplit((parts.scheme, parts.netloc, METADATA_PATH, "", ""))


class ResourceServer:
    """Judges bearer tokens against the live ``server.auth``; one per app (so per worker), keeping
    the issuer's keys between requests. ``bind_host``: the address the server listens on."""

    def __init__(self, client: Callable[[], httpx.AsyncClient], bind_host: str | None = None) -> None:
        self._client = client
        self._bind_host = bind_host
        self._keys: tuple[OAuthSettings, Any] | None = None
        self._verifiers: dict[str, OAuthVerifier] = {}
        self._said_no_audience = False
        #: The introspection requests this worker may still send (``.cache.Budget``).
        self._budget: Budget | None = None

    def resource(self, auth: OAuthSettings, scope: Scope) -> str | None:
        """This server's resource identifier (see the module docstring); ``None``: it has none."""
        resource = auth.audience or _own_resource(self._bind_host, scope)
        if resource is None and not self._said_no_audience:
            self._said_no_audience = True
            logger.error("lorenz: %s", NO_AUDIENCE)
        return resource

    def verifier(self, auth: OAuthSettings, audience: str) -> OAuthVerifier:
        from .keys import KeySet  # PyJWT, cryptography and httpx load with the first token
        from .verifier import OAuthVerifier  # PyJWT: only for server.auth

        if self._budget is None:
            self._budget = Budget()
        if self._keys is None or self._keys[0] != auth:  # a reload changed server.auth: start afresh
            self._keys = (auth, KeySet(auth, self._client))
            self._verifiers = {}
        verifier = self._verifiers.get(audience)
        if verifier is None:
            if len(self._verifiers) >= _MAX_AUDIENCES:
                self._verifiers.clear()
            verifier = OAuthVerifier(auth, self._keys[1], audience, self._client, self._budget)
            self._verifiers[audience] = verifier
        return verifier

    async def authenticate(
        self,
        auth: OAuthSettings,
        authorization: bytes | None,
        scope: Scope,
        tool_scopes: Mapping[str, tuple[str, ...]] | None = None,
    ) -> Grant | Refusal:
        """The grant a valid access token earns, or the 401/403 to answer. ``tool_scopes`` are the
        tools' own scopes (``ToolSpec.auth``): a tool whose scopes the token lacks is withheld."""
        from .keys import IssuerUnavailable  # PyJWT: only for server.auth

        resource = self.resource(auth, scope)
        if resource is None:
            return _NO_AUDIENCE
        token = _bearer(authorization)
        if token is None:
            return self._refusal(auth, scope, 401, None, "Authentication required")
        try:
            access = await self.verifier(auth, resource).verify_token(token)
        except IssuerUnavailable as exc:
            seconds = max(1, math.ceil(exc.retry_after))
            why = f"The token cannot be checked now ({exc.reason}); retry in {seconds} s"
            return Refusal(503, {"error": "temporarily_unavailable", "error_description": why}, retry_after=seconds)
        if access is None:
            return self._refusal(auth, scope, 401, "invalid_token", "The access token is invalid or expired")
        missing = [name for name in auth.required_scopes if name not in access.scopes]
        if missing:
            return self._refusal(auth, scope, 403, "insufficient_scope", f"Required scope: {missing[0]}", missing)
        caller = Caller(
            subject=access.subject,
            client_id=access.client_id or None,
            scopes=tuple(access.scopes),
            issuer=(access.claims or {}).get("iss"),
        )
        held = set(access.scopes)
        withheld = frozenset(name for name, needs in (tool_scopes or {}).items() if not held.issuperset(needs))
        if not auth.scopes:
            return Grant(name=None, caller=caller, withheld=withheld)
        granted = dict(auth.scopes)
        tools = tuple(glob for name in access.scopes for glob in granted.get(name, ()))
        return Grant(name=None, tools=("*",) if "*" in tools else tools, caller=caller, withheld=withheld)

    def insufficient_scope(
        self, auth: OAuthSettings, grant: Grant, tool: str, scope: Scope, needs: tuple[str, ...] = ()
    ) -> Refusal | None:
        """The 403 for calling ``tool`` without the scopes it takes: one that ``server.auth.scopes``
        grants it by (``None``: none does, the tool does not exist for the caller) and the tool's
        own ``needs``."""
        if grant.caller is None or grant.allows(tool):
            return None
        missing: list[str] = []
        if not Grant(name=None, tools=grant.tools).allows(tool):
            needed = scopes_for(auth, tool)
            if not needed:
                return None
            missing.append(needed[0])
        if tool in grant.withheld:
            # A pack's scope goes into a header: one that is no scope token is never named.
            missing += [name for name in needs if name not in grant.caller.scopes and _SCOPE_TOKEN.fullmatch(name)]
        if not missing:
            return None
        wanted = [*grant.caller.scopes, *missing]
        refusal = self._refusal(auth, scope, 403, "insufficient_scope", f"Required scope: {missing[0]}", wanted)
        if refusal.status != 403:
            return refusal
        # The tool's name is the client's text: in the body only, never in the header.
        noun = "scope" if len(missing) == 1 else "scopes"
        body = {**refusal.body, "error_description": f"Calling {tool} requires the {noun} {', '.join(missing)}"}
        return evolve(refusal, body=body)

    def _refusal(
        self,
        auth: OAuthSettings,
        scope: Scope,
        status: int,
        error: str | None,
        description: str,
        scopes: list[str] | None = None,
    ) -> Refusal:
        resource = self.resource(auth, scope)
        if resource is None:
            return _NO_AUDIENCE
        parts = [f'resource_metadata="{_metadata_url(resource)}"']
        wanted = scopes if scopes is not None else list(auth.required_scopes)
        # A token's scopes are the issuer's text: only scope tokens go into the quoted parameter.
        wanted = [name for name in wanted if _SCOPE_TOKEN.fullmatch(name)]
        if wanted:
            parts.append(f'scope="{" ".join(dict.fromkeys(wanted))}"')
        if error is not None:  # RFC 6750 §3.1: no error code when the request had no token
            parts[:0] = [f'error="{error}"', f'error_description="{description}"']
        body = {"error": error or "unauthorized", "error_description": description}
        return Refusal(status, body, "Bearer " + ", ".join(parts))

    async def metadata(self, request: Request) -> Response:
        """``/.well-known/oauth-protected-resource[/mcp]`` (RFC 9728); 404 without ``server.auth``."""
        snapshot = await request.app.state.live.current_async()
        auth: OAuthSettings | None = snapshot.settings.server.auth
        if auth is None:
            return JSONResponse({"error": {"code": "not_found", "message": "Route not found"}}, status_code=404)
        resource = self.resource(auth, request.scope)
        if resource is None:
            return JSONResponse({"error": {"code": "server_error", "message": NO_AUDIENCE}}, status_code=500)
        own = (name for needs in snapshot.tool_scopes().values() for name in needs if _SCOPE_TOKEN.fullmatch(name))
        names = list(dict.fromkeys([*auth.required_scopes, *(name for name, _ in auth.scopes), *own]))
        metadata = ProtectedResourceMetadata(
            resource=AnyHttpUrl(resource),
            authorization_servers=[AnyHttpUrl(auth.issuer)],
            scopes_supported=names or None,
            bearer_methods_supported=["header"],
            resource_name="Lorenz",
        )
        return PydanticJSONResponse(content=metadata, headers={"Cache-Control": "public, max-age=300"})


def _bearer(authorization: bytes | None) -> str | None:
    if not authorization:
        return None
    parts = authorization.strip().split(None, 1)
    if len(parts) != 2 or parts[0].lower() != b"bearer":
        return None
    try:
        token = parts[1].strip().decode("ascii")
    except UnicodeDecodeError:
        return None
    return token or None
