"""Resource subscriptions: which clients watch which of the packs' resources, the packs told to watch
them (``subscribe_resource``/``unsubscribe_resource``, when the first client comes and the last one
goes), and a pack's ``PackInstance.resource_updated(uri)`` delivered to the clients watching ``uri``.

A handshake-era client subscribes with ``resources/subscribe`` (a stateful HTTP session, or stdio:
a stateless one has nowhere to be told) and hears ``notifications/resources/updated``; a 2026-07-28
client names the URIs on its ``subscriptions/listen`` stream and hears the update there. A client
subscribes only to a resource it can read (its pack visible to its grant).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.subscriptions import ListenHandler, ResourceUpdated, SubscriptionBus
from mcp.shared.exceptions import MCPError

from lorenz.contracts import ToolContext, ToolProvider
from lorenz.host.reload.live import request_snapshot
from lorenz.redact import redact_text
from lorenz.results import ToolResult, error_message, tool_failure

from .client_log import session_key
from .shaping import offer_packs
from .skills import RESOURCE_NOT_FOUND

if TYPE_CHECKING:
    import httpx
    from mcp.server import ServerRequestContext
    from mcp.server.session import ServerSession

    from lorenz.host.grants import Grant
    from lorenz.host.reload.live import LiveWorkspace

__all__ = ["MAX_SUBSCRIPTIONS", "ResourceSubscriptions"]

logger = logging.getLogger("lorenz.host")

#: The most (session, URI) subscriptions kept at once; one more is refused, saying so.
MAX_SUBSCRIPTIONS = 10_000


class ResourceSubscriptions:
    """The watched resources of one served MCP endpoint (see the module docstring)."""

    def __init__(
        self,
        live: LiveWorkspace,
        bus: SubscriptionBus | None,
        *,
        grant: Callable[[ServerRequestContext[Any, Any] | None], Grant],
        client: Callable[[], httpx.AsyncClient],
    ) -> None:
        # The host's live workspace, what a request may see and its outbound client (HostState's).
        self._live = live
        self._grant = grant
        self._client = client
        self._bus = bus
        #: ``{uri: {session key: session}}``: the handshake-era subscribers.
        self._sessions: dict[str, dict[str, ServerSession]] = {}
        #: ``{uri: (watchers, the pack watching it)}``: sessions and listen streams alike.
        self._watched: dict[str, tuple[int, ToolProvider]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        live.resource_listeners.append(self._updated)

    # -- what a pack says --------------------------------------------------------------------------

    def _updated(self, uri: str) -> None:
        """From any thread: a pack's resource changed."""
        loop = self._loop
        if loop is None or uri not in self._watched:
            return
        try:
            loop.call_soon_threadsafe(lambda: loop.create_task(self._deliver(uri)))
        except RuntimeError:  # the loop is gone: nobody is left to tell
            return

    async def _deliver(self, uri: str) -> None:
        for key, session in list(self._sessions.get(uri, {}).items()):
            try:
                await session.send_resource_updated(uri)
            except Exception as exc:  # the session ended: it watches nothing any more
                logger.debug("dropping session %s's subscription: %s", key[:16], error_message(exc))
                await self._forget(uri, key)
        if self._bus is not None:
            await self._bus.publish(ResourceUpdated(uri=uri))

    # -- what a client asks -----------------------------------------------------------------------

    async def on_subscribe(self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams) -> Any:
        uri = str(params.uri)
        key = session_key(ctx)
        if key is None:
            raise MCPError(types.INVALID_REQUEST, "a stateless HTTP client cannot be told of updates: no session")
        subscribers = self._sessions.setdefault(uri, {})
        if key not in subscribers:
            if sum(len(each) for each in self._sessions.values()) >= MAX_SUBSCRIPTIONS:
                raise MCPError(types.INTERNAL_ERROR, f"too many resource subscriptions ({MAX_SUBSCRIPTIONS:,})")
            await self._watch(ctx, uri)
            subscribers[key] = ctx.session
        return types.EmptyResult()

    async def on_unsubscribe(self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams) -> Any:
        key = session_key(ctx)
        if key is not None:
            await self._forget(str(params.uri), key)
        return types.EmptyResult()

    def listen(self, handler: ListenHandler) -> Callable[..., Awaitable[types.SubscriptionsListenResult]]:
        """``subscriptions/listen`` served by ``handler``, watching the resources the stream names
        (only those the caller can read: the others are left out of its acknowledgement)."""

        async def serve(
            ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
        ) -> types.SubscriptionsListenResult:
            watched: list[str] = []
            try:
                for uri in dict.fromkeys(params.notifications.resource_subscriptions or ()):
                    try:
                        await self._watch(ctx, uri)
                    except MCPError as exc:
                        logger.debug("not watching %s for a listen stream: %s", uri, exc.error.message)
                        continue
                    watched.append(uri)
                honored = params.notifications.model_copy(update={"resource_subscriptions": watched or None})
                return await handler(ctx, params.model_copy(update={"notifications": honored}))
            finally:
                with anyio.CancelScope(shield=True):  # the stream ends by its request's cancellation
                    for uri in watched:
                        await self._unwatch(uri)

        return serve

    async def _forget(self, uri: str, key: str) -> None:
        subscribers = self._sessions.get(uri)
        if subscribers is None or subscribers.pop(key, None) is None:
            return
        if not subscribers:
            del self._sessions[uri]
        await self._unwatch(uri)

    async def _watch(self, ctx: ServerRequestContext[Any, Any], uri: str) -> None:
        """One more watcher of ``uri``; its pack is told to watch it when it is the first."""
        self._loop = asyncio.get_running_loop()
        snapshot = request_snapshot(ctx.request) or await self._live.current_async()
        found = snapshot.workspace.mounted.offers.resource(uri)
        visible = await offer_packs(snapshot, self._grant(ctx), ctx)
        if found is None or (visible is not None and found[1].name not in visible):
            raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")
        pack = found[1]
        count, watching = self._watched.get(uri, (0, pack))
        if count > 0:
            self._watched[uri] = (count + 1, watching)
            return
        subscribe = getattr(pack, "subscribe_resource", None)
        if not callable(subscribe):
            raise MCPError(types.INVALID_PARAMS, f"resource {uri} cannot be subscribed to: its pack has no updates")
        self._watched[uri] = (1, pack)  # counted before the wait: a second watcher meanwhile adds to it
        context = ToolContext(settings=snapshot.settings, http=self._client())
        result = await _contained(lambda: subscribe(uri, context), snapshot.settings)
        if not result.success:
            count, _ = self._watched.get(uri, (1, pack))
            if count > 1:
                self._watched[uri] = (count - 1, pack)
            else:
                self._watched.pop(uri, None)
            text = redact_text(result.error or "failed", snapshot.settings.secrets, base_dir=snapshot.settings.base_dir)
            raise MCPError(types.INTERNAL_ERROR, f"subscribing to {uri} failed: {text}")

    async def _unwatch(self, uri: str) -> None:
        watched = self._watched.get(uri)
        if watched is None:
            return
        count, pack = watched
        if count > 1:
            self._watched[uri] = (count - 1, pack)
            return
        del self._watched[uri]
        unsubscribe = getattr(pack, "unsubscribe_resource", None)
        if not callable(unsubscribe):
            return
        settings = self._live.snapshot().settings
        context = ToolContext(settings=settings, http=self._client())
        result = await _contained(lambda: unsubscribe(uri, context), settings)
        if not result.success:
            logger.warning("lorenz: pack %s: unsubscribing from %s failed: %s", pack.name, uri, result.error)


async def _contained(work: Callable[[], Awaitable[ToolResult]], settings: Any) -> ToolResult:
    """A pack's subscription hook, within the tool timeout; what it raises is a failure."""
    try:
        with anyio.fail_after(settings.server.tool_timeout_seconds):
            result = await work()
    except TimeoutError:
        return tool_failure(
            f"no answer within {settings.server.tool_timeout_seconds:g} s (server.tool_timeout_seconds)"
        )
    except Exception as exc:
        return tool_failure(error_message(exc))
    return result if isinstance(result, ToolResult) else tool_failure(f"returned a {type(result).__name__}")
