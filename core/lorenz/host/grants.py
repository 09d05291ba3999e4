"""What a request's bearer token lets it do: every tool (``server.token``), or only the tools a
scoped token names (``server.tokens: [{token, tools: [glob, …], name}]``).

Every configured token is compared, in constant time, whichever matches; the grant travels in
the ASGI scope to the MCP handlers, which list and run only the tools it allows (and serve only
the skills, resources and prompts of packs it may use). A request without a grant gets :data:`NOTHING`: the full grant
is given explicitly (no token configured, the full token, stdio, an in-process client), never
assumed. The call log and traces carry the token's ``name``, never its value.
"""

from __future__ import annotations

import fnmatch
import hmac
from collections.abc import Iterable, MutableMapping
from typing import TYPE_CHECKING, Any

from attrs import frozen

from lorenz.contracts import Caller
from lorenz.host.scope import GRANT
from lorenz.settings.model import ServerSettings
from lorenz.toolcall.middleware import CallOrigin

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

    from lorenz.host.reload.live import Snapshot

__all__ = [
    "FULL",
    "NOTHING",
    "Grant",
    "grant_for",
    "grant_of",
    "origin_of",
    "remember",
    "token_matches",
    "visible_packs",
]


@frozen
class Grant:
    """The tools a request may see and call (``("*",)``: all) and the token's name; ``caller``
    when an OAuth access token earned it (:mod:`lorenz.host.auth`), and ``withheld`` the tools
    whose own scopes (``ToolSpec.auth``) that token lacks: both must allow a tool."""

    name: str | None
    tools: tuple[str, ...] = ("*",)
    caller: Caller | None = None
    withheld: frozenset[str] = frozenset()

    def allows(self, tool: str) -> bool:
        if self.withheld and tool in self.withheld:
            return False
        if self.tools == ("*",):  # every call asks: the common answer without a pattern match
            return True
        return any(fnmatch.fnmatchcase(tool, pattern) for pattern in self.tools)

    def allowed(self, names: Iterable[str]) -> list[str]:
        return [name for name in names if self.allows(name)]

    @property
    def everything(self) -> bool:
        return self.tools == ("*",) and not self.withheld


#: No token configured, the full token, stdio, an in-process client.
FULL = Grant(name=None)
#: What a request that arrives without a grant may do.
NOTHING = Grant(name=None, tools=())


def token_matches(header: str | bytes | None, token: str) -> bool:
    """Whether ``Authorization`` carries ``Bearer <token>``, compared in constant time.

    The scheme is case-insensitive (RFC 7235); the credential is compared as bytes, the raw
    header's against the token's UTF-8 (a ``str`` header is taken as text, UTF-8 too); the
    configured token's surrounding whitespace is not part of it.
    """
    if not header:
        return False
    raw = header.encode("utf-8") if isinstance(header, str) else header
    parts = raw.strip().split(None, 1)
    if len(parts) != 2 or parts[0].lower() != b"bearer":
        return False
    expected = token.strip().encode("utf-8")
    if not expected:
        return False
    return hmac.compare_digest(parts[1].strip(), expected)


def grant_for(authorization: bytes | None, server: ServerSettings) -> Grant | None:
    """The grant the ``Authorization`` header earns, ``FULL`` when no token is configured, ``None``
    when one is required and none matches (an OAuth access token is judged by
    :mod:`lorenz.host.auth`). Every token is compared, so timing says nothing."""
    if not server.token and not server.tokens and server.auth is None:
        return FULL
    full = bool(server.token) and token_matches(authorization, server.token or "")
    scoped = [entry for entry in server.tokens if token_matches(authorization, entry.token)]
    if full:
        return FULL
    if scoped:
        return Grant(name=scoped[0].name, tools=scoped[0].tools)
    return None


def remember(scope: MutableMapping[str, Any], grant: Grant) -> None:
    scope.setdefault("state", {})[GRANT] = grant


def origin_of(grant: Grant, ctx: ServerRequestContext[Any, Any] | None) -> CallOrigin:
    """Who calls and how, for the workflow's call middleware and catalog shapers: the grant's
    token name and OAuth caller (never the token), the transport and protocol version."""
    transport = "in-process" if ctx is None else "stdio" if ctx.request is None else "http"
    protocol = ctx.protocol_version if ctx is not None else None
    return CallOrigin(token_name=grant.name, caller=grant.caller, transport=transport, protocol=protocol)


def grant_of(request: Any, local: Grant | None = None) -> Grant:
    """The grant of an MCP request: the one :class:`SecurityMiddleware` put in its Starlette
    ``Request``'s scope, ``local`` for a request not made over HTTP (``request`` is ``None``) when
    the server was built for such a transport, else :data:`NOTHING`."""
    if request is None:
        return local if local is not None else NOTHING
    scope = getattr(request, "scope", None)
    if type(scope) is not dict and not isinstance(scope, MutableMapping):
        return NOTHING
    state = scope.get("state")
    grant = state.get(GRANT) if isinstance(state, MutableMapping) else None
    return grant if isinstance(grant, Grant) else NOTHING


def _tools_by_pack(snapshot: Snapshot) -> dict[str, list[str]]:
    """``{pack: every tool it declares}``, switched-off ones included, once per snapshot."""
    cached: dict[str, list[str]] | None = snapshot.wire.get("tools_by_pack")
    if cached is None:
        cached = {}
        for name, pack in snapshot.owners.items():
            cached.setdefault(pack.name, []).append(name)
        for name, entry in snapshot.workspace.mounted.disabled.items():
            cached.setdefault(entry.pack, []).append(name)
        snapshot.wire["tools_by_pack"] = cached
    return cached


def visible_packs(snapshot: Snapshot, grant: Grant) -> set[str] | None:
    """The packs whose resources and prompts ``grant`` may see (``None``: every pack)."""
    if grant.everything:
        return None
    return {pack for pack, tools in _tools_by_pack(snapshot).items() if any(grant.allows(tool) for tool in tools)}
