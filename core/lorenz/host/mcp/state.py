"""What the MCP handlers share (:class:`HostState`): the live workspace, the tool runner, the call
recorder, the plugins' lifespan, the outbound HTTP client and the sessions to tell about reloads."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from mcp.server import ServerRequestContext
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from lorenz.host.grants import Grant, grant_of
from lorenz.host.lifespan import Lifespan
from lorenz.host.recording import CallRecorder
from lorenz.host.tracing import instrument_http, tracing_enabled
from lorenz.results import error_message
from lorenz.toolcall.execution import ToolRunner

from .catalog import ServedCatalog
from .client_log import ClientLevels
from .resource_updates import ResourceSubscriptions

if TYPE_CHECKING:
    import httpx
    from mcp.server.session import ServerSession

    from lorenz.host.reload.live import LiveWorkspace, Snapshot

__all__ = ["HostState"]

logger = logging.getLogger("lorenz.host")

#: Sessions kept for change notifications (the SDK's own default cap on open sessions).
MAX_REMEMBERED_SESSIONS = 10_000


class HostState:
    """What the handlers share: the live workspace, the outbound HTTP client (opened by the
    app's lifespan, or lazily) and, when change notifications are on, the sessions to notify.

    ``local_grant`` is what a request made off HTTP (stdio, an in-process client) may do; over
    HTTP it stays ``None``, so a request the guard did not grant anything sees nothing."""

    def __init__(
        self,
        live: LiveWorkspace,
        *,
        list_changed: bool = False,
        listen: bool = False,
        local_grant: Grant | None = None,
    ) -> None:
        self.live = live
        self.local_grant = local_grant
        self.list_changed = list_changed
        #: 2026-07-28 clients learn about reloads on ``subscriptions/listen`` streams, which need a
        #: transport that streams responses (SSE or stdio); ``None`` when there is none.
        self.listen: ListenHandler | None = None
        self._bus: InMemorySubscriptionBus | None = None
        if listen:
            self._bus = InMemorySubscriptionBus()
            self.listen = ListenHandler(self._bus)
        self.http: httpx.AsyncClient | None = None
        self.runner = ToolRunner()
        self.recorder = CallRecorder(live)
        #: Plugins' startup and shutdown hooks, and closing what a reload replaced.
        self.lifespan = Lifespan(live, self.recorder.sinks)
        #: What each handshake-era session asked for with ``logging/setLevel``.
        self.log_levels = ClientLevels()
        #: ``server.catalog``'s search index, each caller's usage and each session's found tools.
        self.catalog = ServedCatalog()
        self._sessions: dict[str, ServerSession] = {}
        #: Who watches which resource (``resources/subscribe``, listen streams).
        self.subscriptions = ResourceSubscriptions(live, self._bus, grant=self.grant, client=self.client)
        self._notified_generation = live.snapshot().generation
        self._offered = _offered(live.snapshot())

    def client(self) -> httpx.AsyncClient:
        if self.http is None:
            import httpx  # on the first tool call, not before the first answer

            self.http = httpx.AsyncClient(timeout=30.0)
            if tracing_enabled():
                instrument_http(self.http)
        return self.http

    async def aclose(self) -> None:
        if self.listen is not None:
            self.listen.close()  # ends open listen streams gracefully, so shutdown does not wait on them
        await self.runner.aclose()
        self.recorder.close()
        await self.lifespan.stop()  # plugins' shutdown hooks; middleware and sinks closed
        await self.live.aclose()  # the isolated packs' processes
        if self.http is not None:
            await self.http.aclose()
            self.http = None

    def grant(self, ctx: ServerRequestContext[Any, Any] | None) -> Grant:
        """What the request of ``ctx`` may see and call."""
        return grant_of(ctx.request if ctx is not None else None, self.local_grant)

    def remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Keep the session of a handshake-era stateful connection, to tell it about reloads."""
        if not self.list_changed or ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return
        request = ctx.request
        key = "stdio"
        if request is not None:
            session_id = getattr(request, "headers", {}).get("mcp-session-id")
            if session_id is None:
                return  # stateless HTTP: nowhere to deliver a notification
            key = session_id
        self._sessions.pop(key, None)  # most recent last, so the cap below drops the oldest
        self._sessions[key] = ctx.session
        if len(self._sessions) > MAX_REMEMBERED_SESSIONS:
            del self._sessions[next(iter(self._sessions))]

    async def notify_if_changed(self) -> None:
        """Tell clients about a reload, once per reload: ``notifications/tools/list_changed`` to every
        remembered handshake-era session, and a tools event on every 2026-07-28 listen stream; and
        likewise ``resources/list_changed`` and ``prompts/list_changed`` when those lists changed."""
        snapshot = self.live.snapshot()
        if snapshot.generation == self._notified_generation:
            return
        self._notified_generation = snapshot.generation
        await self.lifespan.retire_replaced()
        offered, self._offered = self._offered, _offered(snapshot)
        resources, prompts = offered[0] != self._offered[0], offered[1] != self._offered[1]
        if self._bus is not None:
            await self._bus.publish(ToolsListChanged())
            if resources:
                await self._bus.publish(ResourcesListChanged())
            if prompts:
                await self._bus.publish(PromptsListChanged())
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
                if resources:
                    await session.send_resource_list_changed()
                if prompts:
                    await session.send_prompt_list_changed()
            except Exception as exc:  # the session ended; stop tracking it
                logger.debug("dropping session %s: %s", key[:16], error_message(exc))
                self._sessions.pop(key, None)


def _offered(snapshot: Snapshot) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The resources (and templates) and the prompts ``snapshot`` serves, to compare across reloads."""
    offers = snapshot.workspace.mounted.offers
    resources = (*(spec for spec, _ in offers.resources), *(spec for spec, _, _ in offers.templates))
    return resources, tuple(spec for spec, _ in offers.prompts)
