"""Log messages to the client (``notifications/message``), for those that asked: in the handshake
era with ``logging/setLevel`` (remembered per session: a stateful HTTP session, or the stdio
connection), from 2026-07-28 with the request's ``_meta`` log-level opt-in. Each message is
redacted like every other text that leaves the host, and rides the call's own stream."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from lorenz.redact import redact_text

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

    from lorenz.contracts import LogSink
    from lorenz.settings.model import Settings

__all__ = ["ClientLevels", "LEVELS"]

logger = logging.getLogger("lorenz.host")

#: The MCP levels, least severe first.
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
#: Sessions whose level is remembered (as many as the sessions kept for change notifications).
MAX_SESSIONS = 10_000


def session_key(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The handshake-era session of ``ctx``: its ``Mcp-Session-Id``, ``"stdio"`` off HTTP, ``None``
    for stateless HTTP (no session to remember anything for)."""
    request = ctx.request
    if request is None:
        return "stdio"
    session_id: str | None = getattr(request, "headers", {}).get("mcp-session-id")
    return session_id


class ClientLevels:
    """The level each handshake-era session asked for with ``logging/setLevel``."""

    def __init__(self) -> None:
        self._levels: dict[str, str] = {}

    async def on_set_level(self, ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams) -> Any:
        key = session_key(ctx)
        if key is not None:  # stateless HTTP: accepted, but no later request could be told
            self._levels.pop(key, None)  # most recent last, so the cap below drops the oldest
            self._levels[key] = params.level
            if len(self._levels) > MAX_SESSIONS:
                del self._levels[next(iter(self._levels))]
        return types.EmptyResult()

    def wanted(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """The least severe level the client of ``ctx`` asked for on this call; ``None``: none."""
        if ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            key = session_key(ctx)
            return self._levels.get(key) if key is not None else None
        level = (ctx.meta or {}).get(types.LOG_LEVEL_META_KEY)
        return level if level in LEVELS else None

    def sink(self, ctx: ServerRequestContext[Any, Any] | None, settings: Settings, name: str) -> LogSink | None:
        """Where a call's log messages go, or ``None`` when the client asked for none."""
        wanted = self.wanted(ctx) if ctx is not None else None
        if ctx is None or wanted is None:
            return None
        threshold = LEVELS.index(wanted)
        session, request_id = ctx.session, ctx.request_id

        async def send(level: str, message: str) -> None:
            if level not in LEVELS or LEVELS.index(level) < threshold:
                return
            text = redact_text(message, settings.secrets, base_dir=settings.base_dir)
            params = types.LoggingMessageNotificationParams(level=level, data=text, logger=name)  # type: ignore[arg-type]
            try:  # on the call's own stream: 2026-07-28 allows it nowhere else
                await session.send_notification(types.LoggingMessageNotification(params=params), request_id)
            except Exception as exc:  # the client went away: the call goes on
                logger.debug("lorenz: dropped a log message for %s: %s", name, type(exc).__name__)

        return send
