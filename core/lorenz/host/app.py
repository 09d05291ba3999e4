"""The host's Starlette app: the SDK's Streamable HTTP transport at ``/mcp`` behind the security
middleware, next to the landing page, the server card and ``/healthz``; and how to run it
under uvicorn (in the foreground for ``lorenz serve``, or in a thread for tests)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import anyio
import uvicorn
from attrs import frozen
from mcp.server.auth.routes import cors_middleware
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Scope

from lorenz._internals import fast_path_usable, session_transports
from lorenz.host.security import SecurityMiddleware
from lorenz.host.tracing import TraceHeaders, configure_server
from lorenz.plugins.containment import note_host_signal
from lorenz.redact import redact_text
from lorenz.settings.model import ServerSettings

from .auth import METADATA_PATH, ResourceServer
from .http.listening import MCP_PATH, announcer, listen
from .http.loopback import serve_app_in_thread
from .http.protocol import HostConfig
from .mcp.server import build_server
from .mcp.state import HostState
from .mcp.stateless import StatelessEndpoint
from .ops.pages import landing_page
from .ops.status import healthz, server_card
from .ops.token_form import SCRIPT_PATH, landing_script
from .ops.watchdog import LoopWatchdog, exit_if_stuck, exit_past_stuck_threads, size_thread_pools
from .reload.live import LiveWorkspace
from .scope import REQUEST_SNAPSHOT

__all__ = ["RunningServer", "build_app", "serve_in_thread"]

logger = logging.getLogger("lorenz.host")

#: How often the lifespan task looks at WORKFLOW.md and the packs' news, to push
#: ``tools/list_changed`` to sessions (requests also look, so a change is served at once either way).
RELOAD_POLL_SECONDS = 0.5
#: How long closing may take as the host stops (plugins' shutdown hooks, middleware and sinks
#: closed, packs detached, isolated packs stopped), each step bounded on its own too.
CLOSE_SECONDS = 30.0
#: The SDK's own body cap is only a backstop: ours is read from the live settings per request.
_SDK_BODY_CAP = 64 * 1024 * 1024


def build_app(
    source: Any,
    *,
    bind_host: str | None = None,
    reload_poll_seconds: float | None = RELOAD_POLL_SECONDS,
    exit_when_stuck: bool = False,
    watch_workflow: bool = False,
) -> Starlette:
    """The whole HTTP app for a :class:`LiveWorkspace` (or a plain ``Workspace``, served as is).

    Stateless with JSON responses unless ``server.stateful`` / ``server.json_response`` say
    otherwise (both fixed at build time). A new app per server: the SDK's session manager runs
    once. ``exit_when_stuck`` (the foreground ``lorenz serve``) ends the process at shutdown
    even when tool calls are stuck in threads. ``watch_workflow``: requests reach the app only
    through the sockets of the loop it runs on (an HTTP server), so the kernel's reports of changes
    to WORKFLOW.md can stand in for a look at it per request (:meth:`LiveWorkspace.watch_on`).
    """
    live = source if isinstance(source, LiveWorkspace) else LiveWorkspace(source, reload=False)
    server_settings: ServerSettings = live.snapshot().settings.server
    stateful = server_settings.stateful
    state = HostState(live, list_changed=stateful, listen=not server_settings.json_response)
    mcp_server = build_server(state)
    traced = configure_server(mcp_server, live.env)

    def session_manager(*, json_response: bool) -> StreamableHTTPSessionManager:
        return StreamableHTTPSessionManager(
            app=mcp_server,
            stateless=not stateful,
            json_response=json_response,
            # Host/Origin are checked by SecurityMiddleware against the live allow-lists.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=max(_SDK_BODY_CAP, server_settings.max_body_bytes),
        )

    manager = session_manager(json_response=server_settings.json_response)
    # Stateless JSON answers have no stream for a notification to ride: a request that asks for
    # progress or log messages is answered as an SSE stream by a transport of its own instead.
    streaming = session_manager(json_response=False) if not stateful and server_settings.json_response else None

    async def watch() -> None:
        while True:
            await anyio.sleep(reload_poll_seconds or RELOAD_POLL_SECONDS)
            await live.current_async()  # a reload runs in a thread of its own
            await state.notify_if_changed()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        streams = streaming.run() if streaming is not None else contextlib.nullcontext()
        async with manager.run(), streams, anyio.create_task_group() as tg:
            state.client()
            await state.lifespan.start()  # plugins' lorenz_startup, bounded: a failing one is logged
            loop = asyncio.get_running_loop()
            size_thread_pools(loop)
            watchdog = app.state.watchdog = LoopWatchdog(loop)
            watchdog.start()
            if reload_poll_seconds is not None:  # without reloads, for packs whose tools change
                tg.start_soon(watch)
            stop_watching = live.watch_on(loop) if watch_workflow else None
            try:
                yield
            finally:
                if stop_watching is not None:
                    stop_watching()
                watchdog.stop()
                tg.cancel_scope.cancel()
                if exit_when_stuck:
                    exit_if_stuck(state.runner)
                # Shielded from the cancel just above, or the plugins' shutdown hooks and the packs'
                # detach would be cut at their first await; bounded as a whole (a pack's detach is not).
                with anyio.move_on_after(CLOSE_SECONDS, shield=True) as closing:
                    await state.aclose()
                if closing.cancelled_caught:
                    logger.warning("lorenz: closing the host took over %g s; stopping without the rest", CLOSE_SECONDS)

    async def current_server_settings(scope: Scope) -> ServerSettings:
        snapshot = await live.current_async()
        scope[REQUEST_SNAPSHOT] = snapshot  # the request is judged and served by one configuration
        settings: ServerSettings = snapshot.settings.server
        return settings

    transport = StreamableHTTPASGIApp(manager)
    endpoint: ASGIApp = transport
    if not stateful:
        fast_path = server_settings.fast_path and fast_path_usable(manager)
        endpoint = StatelessEndpoint(
            transport,
            manager,
            fast_path=fast_path,
            streaming=StreamableHTTPASGIApp(streaming) if streaming is not None else None,
        )
    resource_server = ResourceServer(state.client, bind_host=bind_host)
    app = Starlette(
        routes=[
            Route(MCP_PATH, endpoint=endpoint),
            # Public and read by browser clients (the MCP Inspector): CORS as the SDK serves it.
            *(
                Route(path, cors_middleware(resource_server.metadata, ["GET", "OPTIONS"]), methods=["GET", "OPTIONS"])
                for path in (METADATA_PATH, f"{METADATA_PATH}{MCP_PATH}")
            ),
            Route("/", landing_page, methods=["GET"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route(SCRIPT_PATH, landing_script, methods=["GET"]),
            Route("/.well-known/mcp.json", server_card, methods=["GET"]),
        ],
        middleware=[
            *([Middleware(TraceHeaders)] if traced else []),
            Middleware(
                SecurityMiddleware,
                server_settings=current_server_settings,
                bind_host=bind_host,
                mcp_endpoint=endpoint,
                resource_server=resource_server,
            ),
        ],
        exception_handlers={404: not_found, 405: method_not_allowed},
        lifespan=lifespan,
    )
    app.state.live = live
    app.state.host = state
    app.state.sessions = manager
    app.state.resource_server = resource_server  # the landing page judges OAuth tokens with it too
    return app


async def not_found(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse({"error": {"code": "not_found", "message": "Route not found"}}, status_code=404)


async def method_not_allowed(request: Request, exc: Exception) -> JSONResponse:
    return JSONResponse({"error": {"code": "method_not_allowed", "message": "Method not allowed"}}, status_code=405)


class _Server(uvicorn.Server):
    """uvicorn with our own signal handling: SIGINT/SIGTERM start a graceful shutdown and the
    process then exits normally (uvicorn would re-raise the signal), and nothing is installed
    off the main thread."""

    def __init__(self, config: uvicorn.Config, *, on_started: Any = None) -> None:
        super().__init__(config)
        self._on_started = on_started

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def stop(signum: int, frame: FrameType | None) -> None:
            # Deliberately not the bound method itself: sse_starlette would find this server
            # through it and cut every SSE response mid-stream, in-flight tool calls included.
            # shutdown() ends what would otherwise hold it: listen streams and session streams.
            self.handle_exit(signum, frame)

        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """Start a graceful shutdown (a second SIGINT forces it), without uvicorn's re-raise of the
        signal once stopped."""
        note_host_signal(sig)  # from now on a KeyboardInterrupt/SystemExit is the host's, not a pack's
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        self.should_exit = True

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        settle_startup_heap()
        if self.started and self._on_started is not None:
            self._on_started()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        # uvicorn drains connections before the app's lifespan ends: end the open listen streams
        # first, or each would hold shutdown for the whole grace period.
        app_state = getattr(self.config.app, "state", None)
        state = getattr(app_state, "host", None)
        if isinstance(state, HostState) and state.listen is not None:
            state.listen.close()
        # Likewise each stateful session's GET stream, ended cleanly; its in-flight calls finish
        # (the manager keeps no public list of sessions; an SDK without it skips this step).
        manager = getattr(app_state, "sessions", None)
        for transport in session_transports(manager):
            with contextlib.suppress(Exception):
                transport.close_standalone_sse_stream()
        await super().shutdown(sockets)


def settle_startup_heap() -> None:
    """Once a serving process has started: what start-up built (modules, the SDK's and the packs'
    models, the tool snapshot) stays for the process's life, so it is moved out of the garbage
    collector's reach. A full collection then walks only what requests allocate: without this,
    one every few thousand calls walks the whole start-up heap (~40 ms at p99 under load)."""
    gc.collect()
    gc.freeze()


#: How the host runs under uvicorn, in the foreground and in a thread.
UVICORN_OPTIONS: dict[str, Any] = {
    "log_level": "warning",
    "lifespan": "on",
    "access_log": False,
    "timeout_keep_alive": 5,
    "timeout_graceful_shutdown": 5,
    # Headers are capped by h11 (16 KiB); the body cap is SecurityMiddleware's. Not uvicorn's
    # limit_concurrency: it counts idle connections too (HostConfig's protocol does the accounting).
    "ws": "none",  # nothing here speaks WebSocket
}


def uvicorn_config(app: Starlette) -> HostConfig:
    """The foreground server's config for an app from :func:`build_app` (with uvicorn's access log
    when ``server.access_log`` is on)."""
    live: LiveWorkspace = app.state.live
    access_log = bool(live.snapshot().settings.server.access_log)
    config = HostConfig(app, read_timeout=read_timeout(live), **{**UVICORN_OPTIONS, "access_log": access_log})
    if access_log:
        enable_access_log(live)
    return config


class _RedactedAccess(logging.Filter):
    """Access lines never carry a secret (a token in a query string, say): they are redacted."""

    def __init__(self, live: LiveWorkspace) -> None:
        super().__init__()
        self._live = live

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact_text(record.getMessage(), self._live.snapshot().settings.secrets)
        record.args = None
        return True


def enable_access_log(live: LiveWorkspace) -> None:
    """uvicorn's access log, one line per HTTP request, on stderr (stdout stays quiet)."""
    access = logging.getLogger("uvicorn.access")
    access.handlers.clear()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    handler.addFilter(_RedactedAccess(live))
    access.addHandler(handler)
    access.setLevel(logging.INFO)
    access.propagate = False


def read_timeout(live: LiveWorkspace) -> Callable[[], float]:
    """The live ``server.read_timeout_seconds`` (a reload applies to the next deadline)."""

    def seconds() -> float:
        value: float = live.snapshot().settings.server.read_timeout_seconds
        return value

    return seconds


@frozen
class RunningServer:
    """A server started by :func:`serve_in_thread`."""

    base_url: str
    app: Starlette

    @property
    def url(self) -> str:
        """The MCP endpoint, ``<base_url>/mcp``."""
        return self.base_url + MCP_PATH

    @property
    def live(self) -> LiveWorkspace:
        live: LiveWorkspace = self.app.state.live
        return live


@contextlib.contextmanager
def serve_in_thread(
    workflow: str | os.PathLike[str] | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    plugins: Sequence[object] = (),
    token: str | None = None,
    reload: bool = True,
) -> Iterator[RunningServer]:
    """Run the real app under uvicorn on ``127.0.0.1:<free port>`` in a background thread.

    ``token`` (if given) sets ``LORENZ_MCP_TOKEN`` in the workspace's environment, so clients
    must send it. Raises the workspace's ``ConfigError``/``RegistryError``/``MountError``.

    Example::

        with serve_in_thread("WORKFLOW.md", plugins=[my_pack_plugin]) as server:
            async with mcp.Client(server.url) as client:
                result = await client.call_tool("my_tool", {"x": 1})

        # with a token: send it through the SDK's HTTP client
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        with serve_in_thread(token="s3cret") as server:
            http = httpx2.AsyncClient(headers={"Authorization": "Bearer s3cret"})
            async with http, mcp.Client(streamable_http_client(server.url, http_client=http)) as client:
                ...
    """
    env = dict(os.environ if env is None else env)
    if token is not None:
        env["LORENZ_MCP_TOKEN"] = token
    live = LiveWorkspace.open(workflow, cwd=cwd, env=env, plugins=list(plugins), reload=reload)
    app = build_app(live, bind_host="127.0.0.1", watch_workflow=True)
    options = {**UVICORN_OPTIONS, "read_timeout": read_timeout(live)}
    with serve_app_in_thread(app, start_timeout=30, name="lorenz-serve", config=HostConfig, **options) as server:
        yield RunningServer(base_url=server.base_url, app=app)


def run_http(live: LiveWorkspace, *, host: str, port: int) -> int:
    """Serve over HTTP in the foreground until SIGINT/SIGTERM; print the URL once listening."""
    sock = listen(host, port)
    if sock is None:
        return 1
    app = build_app(live, bind_host=host, exit_when_stuck=True, watch_workflow=True)
    server = _Server(uvicorn_config(app), on_started=announcer(live, host, sock))
    try:
        live.run_host(server.serve(sockets=[sock]))  # on the loop the isolated packs live on
    finally:
        sock.close()
    print("lorenz: stopped", file=sys.stderr)
    return exit_past_stuck_threads(0 if server.started else 1)
