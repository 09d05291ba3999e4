"""Who asks for a page around ``/mcp`` (the landing page, the server card, ``/healthz``): the
grant its bearer token earns, judged as ``/mcp`` judges it, a static token or, with
``server.auth``, an OAuth access token checked by the app's resource server; and the line that
tells a signed-in caller who the server took it for, and which calls are its own."""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING

from starlette.requests import Request

from lorenz.host.grants import Grant, grant_for
from lorenz.host.security import raw_header

if TYPE_CHECKING:
    from lorenz.calllog.record import CallRecord
    from lorenz.host.reload.live import Snapshot

__all__ = ["own_call", "page_grant", "signed_in"]


async def page_grant(request: Request, snapshot: Snapshot) -> Grant | None:
    """What the caller may see; ``None``: an anonymous caller (or a token ``/mcp`` would refuse)."""
    server = snapshot.settings.server
    authorization = raw_header(request.scope, b"authorization")
    grant = grant_for(authorization, server)
    resource_server = getattr(request.app.state, "resource_server", None)
    if grant is not None or server.auth is None or resource_server is None or not authorization:
        return grant
    judged = await resource_server.authenticate(server.auth, authorization, request.scope, snapshot.tool_scopes())
    return judged if isinstance(judged, Grant) else None


def signed_in(grant: Grant | None) -> list[str]:
    """``Signed in as …`` for a caller an OAuth access token named (nothing for a static token)."""
    caller = grant.caller if grant is not None else None
    if caller is None:
        return []
    who = escape(caller.subject or caller.client_id or "an unnamed caller")
    client = f" through the client <code>{escape(caller.client_id)}</code>" if caller.client_id else ""
    scopes = f", scopes <code>{escape(' '.join(caller.scopes))}</code>" if caller.scopes else ""
    return [f'<p id="signed-in">Signed in as <b>{who}</b>{client}{scopes}.</p>']


def own_call(call: CallRecord, grant: Grant) -> bool:
    """Whether ``grant``'s caller made ``call``: an OAuth caller by its subject (by its client when
    the token names no subject), a scoped static token by its name."""
    caller = grant.caller
    if caller is None:
        return call.token is not None and call.token == grant.name
    if caller.subject:
        return call.subject == caller.subject
    return caller.client_id is not None and call.subject is None and call.client_id == caller.client_id
