"""The host as an ASGI app any server can import: ``lorenz.host:create_app``.

    uvicorn --factory lorenz.host:create_app --host 0.0.0.0 --port 4040 --workers 4 \\
        --http lorenz.host.protocol:ReadDeadlineProtocol
    gunicorn 'lorenz.host:create_app()' -k uvicorn_worker.UvicornWorker -w 4 -b 0.0.0.0:4040
    hypercorn -w 4 -b 0.0.0.0:4040 'lorenz.host:create_app()'
    granian --interface asgi --factory --workers 4 --host 0.0.0.0 --port 4040 lorenz.host:create_app

Each process builds its own app, as each worker of ``lorenz serve --workers`` does (:func:`app_from`):
the workflow is found as ``lorenz serve`` finds it (``$LORENZ_WORKFLOW``, else ``./WORKFLOW.md``,
else the embedded default), hot-reloaded, and the installed plugins re-discovered when
distributions change; ``$LORENZ_PLUGIN_MODULES`` names in-process plugins as ``-p`` does. The
security defaults are the app's own (Host/Origin checks, the bearer token, the body cap); what
only the server can do (read deadlines on slow clients) is ``ReadDeadlineProtocol``'s, which only
uvicorn can be given, and the app says so once when it runs without it.
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

from .command import StartError, configure_logging, is_loopback, open_live

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.types import ASGIApp, Receive, Scope, Send

    from .reload import LiveWorkspace

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
    from lorenz.cli.output import UsageError
    from lorenz.cli.workspace import import_plugin

    from .app import build_app, read_timeout
    from .protocol import use_read_timeout

    try:
        plugins = [import_plugin(reference) for reference in options.plugins]
    except UsageError as exc:
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
        from .protocol import READ_DEADLINES

        if not scope.get("state", {}).get(READ_DEADLINES):
            logger.warning(
                "lorenz: this server reads requests without Lorenz's read deadlines (server.read_timeout_seconds), "
                "so slow clients can hold connections: under uvicorn pass --http "
                "lorenz.host.protocol:ReadDeadlineProtocol, elsewhere set the server's own header and body "
                "timeouts (docs/deploy.md)"
            )
        host = (scope.get("server") or ("",))[0]
        server = self.live.snapshot().settings.server
        if host and not is_loopback(str(host)) and not (server.token or server.tokens):
            logger.warning(
                "lorenz: serving %s, beyond this machine, without a bearer token: set LORENZ_MCP_TOKEN "
                "(or server.token)",
                host,
            )
