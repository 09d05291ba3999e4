"""``lorenz serve``: open the workspace, refuse a bad one with its exact message, then serve."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from lorenz.client_input import serving_warnings

from .refusals import audience_warning, http_refusal
from .startup import StartError, configure_logging, open_live, stdout_to_stderr

__all__ = ["serve"]


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
    workers: int | None = None,
    allow_no_token: bool = False,
    reload_code: bool = False,
) -> int:
    """Serve a workflow's mounted tools until interrupted; the exit code of ``lorenz serve``.

    HTTP on ``host:port`` (default ``server.host``/``server.port``; port 0 picks a free one and
    the URL printed says which) by ``workers`` processes (default ``server.workers``), or stdio.
    A workflow that does not load or mount is refused with its exact message (exit 1), and so is
    a bind beyond loopback without a bearer token (unless ``allow_no_token``) and a stateful
    server with more than one worker. ``reload_code`` (``--reload``): serve from workers (one by
    default) that the supervisor replaces, one at a time, when a mounted pack's code is edited.
    """
    configure_logging()
    cwd = Path.cwd() if cwd is None else cwd
    env = dict(os.environ if env is None else env)
    # With --stdio, stdout is the protocol stream: whatever plugins print while being imported
    # or listing their tools goes to stderr until the SDK's stdio transport takes fd 1 over.
    with stdout_to_stderr() if stdio else contextlib.nullcontext():
        try:
            live = open_live(workflow, cwd=cwd, env=env, plugins=plugins, reload=reload)
        except StartError as exc:
            return _fail(str(exc))
    if stdio:
        from lorenz.host.stdio import run_stdio  # only the transport asked for loads

        return run_stdio(live)

    settings = live.snapshot().settings.server
    host = host or settings.host
    port = settings.port if port is None else port
    count = settings.workers if workers is None else workers
    refusal = http_refusal(settings, host=host, workers=count, allow_no_token=allow_no_token)
    if refusal is not None:
        return _fail(refusal)
    audience = audience_warning(settings)
    for warning in [*serving_warnings(settings, workers=count), *([audience] if audience else [])]:
        print(f"lorenz: warning: {warning}", file=sys.stderr)
    if count > 1 or reload_code:
        from lorenz.host.workers import run_workers  # only the transport asked for loads

        return run_workers(
            live,
            plugins,
            workflow=workflow,
            cwd=cwd,
            env=env,
            host=host,
            port=port,
            workers=count,
            reload_code=reload_code,
        )

    from .app import run_http  # only the transport asked for loads

    return run_http(live, host=host, port=port)
