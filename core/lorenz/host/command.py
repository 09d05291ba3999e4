"""``lorenz serve``: open the workspace, refuse a bad one with its exact message, then serve."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..results import error_message

__all__ = ["serve"]


def _configure_logging() -> None:
    """Everything to stderr (stdout may be the stdio protocol stream)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    ours = logging.getLogger("lorenz")
    if not ours.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        ours.addHandler(handler)
        ours.propagate = False
    ours.setLevel(logging.INFO)


def _fail(message: str) -> int:
    print(f"lorenz: {message}", file=sys.stderr)
    return 1


def serve(
    *,
    workflow: str | None,
    host: str | None,
    port: int | None,
    stdio: bool,
    plugins: Sequence[object] = (),
    reload: bool = True,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Serve a workflow's mounted tools until interrupted; the exit code of ``lorenz serve``.

    HTTP on ``host:port`` (default ``server.host``/``server.port``; port 0 picks a free one and
    the URL printed says which), or stdio. A workflow that does not load or mount is refused
    with its exact message (exit 1); with no WORKFLOW.md the embedded default (the local board)
    is served.
    """
    from ..plugins import discover
    from ..redact import redact_text
    from ..workspace import open_workspace

    _configure_logging()
    cwd = Path.cwd() if cwd is None else cwd
    env = dict(os.environ if env is None else env)
    discovery = discover(plugins=plugins, env=env)
    for failure in discovery.failures:
        print(f"lorenz: warning: plugin {failure.name} failed to load: {failure.error}", file=sys.stderr)
    try:
        workspace = open_workspace(workflow, cwd=cwd, env=env, discovery=discovery)
    except Exception as exc:  # ConfigError, RegistryError, MountError, or a plugin's own error
        return _fail(redact_text(error_message(exc)))

    from .reload import LiveWorkspace

    try:
        live = LiveWorkspace(workspace, workflow=workflow, cwd=cwd, env=env, reload=reload)
    except Exception as exc:  # a pack's tool_specs() raising, or a spec the SDK cannot represent
        return _fail(redact_text(error_message(exc)))
    if workspace.embedded_default:
        print(
            f"lorenz: no WORKFLOW.md in {cwd}; serving the embedded default (the local board at .lorenz/local)",
            file=sys.stderr,
        )
    if stdio:
        from .stdio import run_stdio

        return run_stdio(live)

    from .app import run_http

    server = workspace.settings.server
    return run_http(live, host=host if host else server.host, port=server.port if port is None else port)
