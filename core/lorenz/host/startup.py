"""What starting the host takes, for ``lorenz serve`` and the ASGI factory alike: logging to stderr,
the workflow opened (a bad one refused with its exact message), and the HTTP settings checked."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from lorenz.isolation.pool import IsolationPool
from lorenz.plugins.discovery import discover
from lorenz.plugins.hint import in_doubt, isolation_hint, mounts_hint, sandbox_hint
from lorenz.redact import redact_text
from lorenz.results import error_message
from lorenz.workspace import find_workflow, open_workspace

from .reload.live import LiveWorkspace

__all__ = ["StartError", "configure_logging", "open_live", "stdout_to_stderr"]


def configure_logging(*, worker: bool = False, root: bool = True) -> None:
    """Everything to stderr (stdout may be the stdio protocol stream); a worker process's own
    lines name its pid, since several write to one stderr. ``root=False`` leaves every logger but
    ``lorenz``'s to the server the app runs under."""
    if root:
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    ours = logging.getLogger("lorenz")
    if not ours.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s (worker %(process)d)" if worker else "%(message)s"))
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


class StartError(Exception):
    """The workflow cannot be served: the message (redacted) is the one line to show."""


def _warn(message: str, *, level: str = "warning") -> None:
    print(f"lorenz: {level}: {' '.join(redact_text(message).split())}", file=sys.stderr)


def open_live(
    workflow: str | None,
    *,
    cwd: Path,
    env: Mapping[str, str],
    plugins: Sequence[object] = (),
    reload: bool = True,
    warn: bool = True,
    own_loop: bool = True,
) -> LiveWorkspace:
    """Discover the plugins and open the workflow to serve, printing (with ``warn``) the plugins
    that failed to load, the workflow's warnings and the packs left out; :class:`StartError` with
    the exact message when it does not load or mount. With no WORKFLOW.md the embedded default
    (the local board) is served.

    ``own_loop``: the host will serve on the loop made here for the isolated packs
    (:meth:`LiveWorkspace.run_host`); ``False`` for an app another server's loop runs (a worker,
    ``uvicorn --factory``), whose isolated packs are then supervised from the shared isolation loop."""

    path = find_workflow(workflow, cwd=cwd, env=env)
    isolate = isolation_hint(path)  # left unimported by the host
    discovery = discover(
        plugins=plugins,
        env=env,
        isolate=isolate,
        sandbox=sandbox_hint(path),
        unimported=in_doubt(path),
        mounts=mounts_hint(path),
    )
    for failure in discovery.failures if warn else ():
        _warn(f"plugin {failure.name} ({failure.origin}) failed to load: {failure.error}")
    # The isolated packs' processes are supervised from the loop the host will serve on.
    isolation = IsolationPool(asyncio.new_event_loop() if own_loop else None)
    try:
        workspace = open_workspace(workflow, cwd=cwd, env=env, discovery=discovery, isolation=isolation)
        live = LiveWorkspace(workspace, workflow=workflow, cwd=cwd, env=env, reload=reload, plugins=plugins)
    except Exception as exc:  # Config/Registry/MountError, a plugin's own error, a spec the SDK cannot represent
        raise StartError(redact_text(error_message(exc))) from exc
    if warn:
        for warning in workspace.settings.warnings:
            _warn(warning)
        for pack_failure in workspace.mounted.failures:
            _warn(f"{pack_failure.error}; serving the other packs (see /healthz)", level="error")
        if workspace.embedded_default:
            print(
                f"lorenz: no WORKFLOW.md in {cwd}; serving the embedded default (the local board at .lorenz/local)",
                file=sys.stderr,
            )
    return live
