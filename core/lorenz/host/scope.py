"""Every key the host's modules put in an ASGI scope (or its ``state``) for each other.

One line each: who sets it, who reads it. Keys are namespaced ``lorenz.*`` so they never meet a
server's or a middleware's own.
"""

from __future__ import annotations

__all__ = ["AFTER_REPLY", "CANCEL_ON_DISCONNECT", "GRANT", "PARSED_MESSAGE", "READ_DEADLINES", "REQUEST_SNAPSHOT"]

#: In ``scope["state"]`` (the lifespan state): ``True`` under the host's protocol; set by
#: ``http.protocol.ReadDeadlineProtocol``, read by ``http.disconnect`` and ``factory.ServerCheck``.
READ_DEADLINES = "lorenz.read_deadlines"
#: What to call when the client goes away before the answer; set by ``http.disconnect``, called by
#: ``http.protocol.ReadDeadlineProtocol.connection_lost``.
CANCEL_ON_DISCONNECT = "lorenz.cancel_on_disconnect"
#: A POST's JSON-RPC message, parsed once; set by ``http.security``, read by ``mcp.stateless``.
PARSED_MESSAGE = "lorenz.message"
#: The snapshot the request is judged and served with; set by ``app``, read by
#: ``reload.snapshot.request_snapshot``.
REQUEST_SNAPSHOT = "lorenz.snapshot"
#: In ``scope["state"]``: the caller's :class:`~lorenz.host.grants.Grant`; set by
#: ``mcp.grants.remember`` (from ``http.security``), read by ``mcp.grants.grant_of``.
GRANT = "lorenz.grant"
#: Callables to run once the answer is written; set by ``mcp.stateless`` (the lean path), appended
#: to by ``recording`` (the call log's bookkeeping).
AFTER_REPLY = "lorenz.after_reply"
