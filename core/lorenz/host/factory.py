"""The host as an ASGI app any server can import: ``lorenz.host:create_app``.

    uvicorn --factory lorenz.host:create_app --workers 4 --http lorenz.host:ReadDeadlineProtocol

Each process builds its own app (:func:`app_from`, as each worker of ``lorenz serve --workers``
does), finding the workflow as ``lorenz serve`` does; ``$LORENZ_PLUGIN_MODULES`` names in-process
plugins as ``-p`` does. :class:`ServerCheck` says once what the server does not do that ``lorenz
serve`` does (read deadlines, a bearer token beyond loopback). Other servers: docs/deploy.md.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from attrs import field, frozen

from lorenz.plugins.paths import PluginImportError, import_plugin

from .app import build_app, read_timeout
from .http.protocol import use_read_timeout
from .refusals import is_loopback
from .scope import READ_DEADLINES
from .startup import StartError, configure_logging, open_live

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.types import ASGIApp, Receive, Scope, Send

    from .reload.live import LiveWorkspace

__all__ = ["PLUGIN_MODULES_ENV", "STARTUP_FAILURE", "AppOptions", "app_from", "create_app", "plugin_reference"]

logger = logging.getLogger("lorenz.host")

#: In-process plugins for :func:`create_app`, separated by ``os.pathsep``: what ``-p`` takes.
PLUGIN_MODULES_ENV = "LORENZ_PLUGIN_MODULES"
#: The exit code uvicorn's and gunicorn's supervisors take for "broken, do not restart the worker".
STARTUP_FAILURE = 3


@frozen(kw_only=True)
class AppOptions:
    """What one process needs to build the app; picklable, to reach spawned worker processes."""

    #: The WORKFLOW.md named on the command line (``None``: ``$LORENZ_WORKFLOW`` or ``./WORKFLOW.md``).
    workflow: str | None = None
    cwd: str
    env: Mapping[str, str] = field(repr=False)
    reload: bool = True
    #: In-process plugins, as ``-p`` takes them: module names, ``.py`` files, package directories.
    plugins: tuple[str, ...] = ()
    #: The address the server listens on, when known: a specific one is a name clients use.
    bind_host: str | None = None
    #: Print the workflow's warnings (a worker of ``lorenz serve`` leaves them to its parent).
    warn: bool = True
    #: ``lorenz serve --reload``: a worker asks to be replaced when a mounted pack's code is edited.
    reload_code: bool = False

    @classmethod
    def from_environment(cls) -> AppOptions:
        """The options of :func:`create_app`: this process's working directory and environment."""
        env = dict(os.environ)
        plugins = tuple(entry.strip() for entry in env.get(PLUGIN_MODULES_ENV, "").split(os.pathsep) if entry.strip())
        return cls(cwd=os.getcwd(), env=env, plugins=plugins)


def plugin_reference(plugin: object) -> str:
    """What imports the in-process plugin ``plugin`` (a module) again in another process, as
    ``-p`` takes it: its ``.py`` file (a lone file is importable by no name), else its name.
    ``ValueError`` for a plugin that is no module: an object cannot cross to a worker process."""
    if not isinstance(plugin, ModuleType):
        msg = f"the in-process plugin {plugin!r} is not a module, so worker processes cannot import it"
        raise ValueError(msg)
    file = getattr(plugin, "__file__", None)
    return file if isinstance(file, str) and file.endswith(".py") else plugin.__name__


def app_from(options: AppOptions) -> Starlette:
    """The app of one process: :class:`StartError` when its plugins or workflow do not load."""
    # Here, not at the top: the parent of ``lorenz serve --workers`` imports this module for
    # :class:`AppOptions` and never builds an app, so it does without the SDK and the server.
    try:
        plugins = [import_plugin(reference) for reference in options.plugins]
    except PluginImportError as exc:
        raise StartError(f"{PLUGIN_MODULES_ENV}: {exc}") from exc
    live = open_live(
        options.workflow,
        cwd=Path(options.cwd),
        env=options.env,
        plugins=plugins,
        reload=options.reload,
        warn=options.warn,
        own_loop=False,  # uvicorn's loop serves this app, not one made for it
    )
    app = build_app(live, bind_host=options.bind_host, exit_when_stuck=True, watch_workflow=True)
    use_read_timeout(read_timeout(live))
    return app


def create_app() -> Starlette:
    """The ASGI app for the workflow of this process's working directory and environment.

    A workflow (or ``$LORENZ_PLUGIN_MODULES``) that does not load prints its exact message and
    exits with :data:`STARTUP_FAILURE`, which the server's supervisor does not restart.
    """
    configure_logging(worker=True, root=False)
    try:
        app = app_from(AppOptions.from_environment())
    except StartError as exc:
        print(f"lorenz: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(STARTUP_FAILURE) from None
    if app.state.live.snapshot().settings.server.stateful:
        logger.warning(
            "lorenz: server.stateful: sessions live in the process that created them; behind more than one "
            "worker or replica, route each Mcp-Session-Id to one of them (docs/deploy.md)"
        )
    app.add_middleware(ServerCheck, live=app.state.live)
    return app


class ServerCheck:
    """On the first request, say what the server this app runs under does not do that
    ``lorenz serve`` does: read deadlines, or a bearer token beyond loopback."""

    def __init__(self, app: ASGIApp, *, live: LiveWorkspace) -> None:
        self.app = app
        self.live = live
        self.checked = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.checked and scope["type"] == "http":
            self.checked = True
            self.check(scope)
        await self.app(scope, receive, send)

    def check(self, scope: Scope) -> None:
        if not scope.get("state", {}).get(READ_DEADLINES):
            logger.warning(
                "lorenz: this server reads requests without Lorenz's read deadlines (server.read_timeout_seconds), "
                "so slow clients can hold connections: under uvicorn pass --http "
                "lorenz.host:ReadDeadlineProtocol, elsewhere set the server's own header and body "
                "timeouts (docs/deploy.md)"
            )
        host = (scope.get("server") or ("",))[0]
        server = self.live.snapshot().settings.server
        if host and not is_loopback(str(host)) and not (server.token or server.tokens or server.auth):
            logger.warning(
                "lorenz: serving %s, beyond this machine, without an access token for clients: set LORENZ_MCP_TOKEN "
                "(or server.token)",
                host,
            )
