"""``lorenz serve``: open the workspace, refuse a bad one with its exact message, then serve."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from ..results import error_message

__all__ = ["serve", "stdout_to_stderr"]


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


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout to stderr until the block exits: ``print`` (Python
    level) and writes to fd 1 itself (a child process, a C extension). For ``--stdio``, where
    stdout is the protocol stream and a plugin may print while it is imported or lists its
    tools; fd 1 and ``sys.stdout`` are restored for the SDK's transport afterwards."""
    original = sys.stdout
    try:
        saved: int | None = os.dup(1)
        os.dup2(2, 1)
    except OSError:  # no fd 1 to divert: the Python-level redirect still applies
        saved = None
    try:
        with contextlib.suppress(Exception):
            # Output still buffered from before (a `-p` module printing when the CLI imported it,
            # with stdout a pipe) is flushed now that fd 1 is stderr.
            original.flush()
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        with contextlib.suppress(Exception):
            original.flush()  # anything buffered by a direct reference to it goes to stderr too
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def _warn(message: str, *, level: str = "warning") -> None:
    from ..redact import redact_text

    print(f"lorenz: {level}: {' '.join(redact_text(message).split())}", file=sys.stderr)


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
    from ..isolation.plan import isolation_hint
    from ..isolation.pool import IsolationPool
    from ..plugins import discover
    from ..redact import redact_text
    from ..workspace import find_workflow, open_workspace

    _configure_logging()
    cwd = Path.cwd() if cwd is None else cwd
    env = dict(os.environ if env is None else env)
    # With --stdio, stdout is the protocol stream: whatever plugins print while being imported
    # or listing their tools goes to stderr until the SDK's stdio transport takes fd 1 over.
    with stdout_to_stderr() if stdio else contextlib.nullcontext():
        isolate = isolation_hint(find_workflow(workflow, cwd=cwd, env=env))  # left unimported by the host
        discovery = discover(plugins=plugins, env=env, isolate=isolate)
        for failure in discovery.failures:
            _warn(f"plugin {failure.name} ({failure.origin}) failed to load: {failure.error}")
        # The isolated packs' processes are supervised from the loop the host will serve on.
        isolation = IsolationPool(asyncio.new_event_loop())
        try:
            workspace = open_workspace(workflow, cwd=cwd, env=env, discovery=discovery, isolation=isolation)
        except Exception as exc:  # ConfigError, RegistryError, MountError, or a plugin's own error
            return _fail(redact_text(error_message(exc)))
        for warning in workspace.settings.warnings:
            _warn(warning)
        for pack_failure in workspace.mounted.failures:
            _warn(f"{pack_failure.error}; serving the other packs (see /healthz)", level="error")

        from .reload import LiveWorkspace

        try:
            live = LiveWorkspace(workspace, workflow=workflow, cwd=cwd, env=env, reload=reload, plugins=plugins)
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
