"""``lorenz serve``: serve the mounted tools over MCP, on HTTP or stdio."""

from __future__ import annotations

import argparse

from lorenz.cli.output import UsageError
from lorenz.cli.workspace import load_plugin_modules

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    import contextlib

    from lorenz.host import serve
    from lorenz.host.command import stdout_to_stderr

    if args.stdio and args.workers is not None:
        raise UsageError("--workers serves HTTP; --stdio is one process")
    # Over --stdio, stdout is the protocol stream: a plugin printing at import must not reach it.
    with stdout_to_stderr() if args.stdio else contextlib.nullcontext():
        plugins = load_plugin_modules(args)
    return serve(
        workflow=args.workflow,
        host=args.host,
        port=args.port,
        stdio=args.stdio,
        plugins=plugins,
        reload=not args.no_reload,
        workers=args.workers,
        allow_no_token=args.allow_no_token,
    )
