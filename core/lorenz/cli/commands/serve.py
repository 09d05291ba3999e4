"""``lorenz serve``: serve the mounted tools over MCP, on HTTP or stdio."""

from __future__ import annotations

import argparse

from lorenz.cli.command import WORKFLOW_ENV, Command, add_workflow
from lorenz.cli.output import UsageError
from lorenz.cli.workspace import load_plugin_modules
from lorenz.host import serve
from lorenz.host.startup import stdout_to_stderr

__all__ = ["COMMAND"]


def run(args: argparse.Namespace) -> int:
    import contextlib

    if args.stdio and args.workers is not None:
        raise UsageError("--workers serves HTTP; --stdio is one process")
    if args.reload and (args.stdio or args.no_reload):
        raise UsageError("--reload serves HTTP from workers it replaces; not with --stdio or --no-reload")
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
        reload_code=args.reload,
    )


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        msg = "port must be 0-65535"
        raise argparse.ArgumentTypeError(msg)
    return port


def _workers(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        msg = "workers must be a whole number, 1 or more"
        raise argparse.ArgumentTypeError(msg)
    return count


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_workflow(parser)
    parser.add_argument("--host", help="bind address (default: server.host, 127.0.0.1)")
    parser.add_argument("--port", type=_port, help="port (default: server.port, 4040; 0 picks a free port)")
    parser.add_argument(
        "--workers", type=_workers, metavar="N", help="worker processes on one port (default: server.workers, 1)"
    )
    parser.add_argument(
        "--allow-no-token",
        action="store_true",
        help="listen beyond loopback without a bearer token (behind a proxy that authenticates)",
    )
    parser.add_argument("--stdio", action="store_true", help="speak MCP over stdin/stdout instead of HTTP")
    parser.add_argument("--no-reload", action="store_true", help="do not watch WORKFLOW.md for changes")
    parser.add_argument(
        "--reload",
        action="store_true",
        help="serve edits to a mounted editable pack's code: restart its isolated processes, or replace the "
        "workers one at a time (in-flight calls finish)",
    )


COMMAND = Command(
    name="serve",
    description="Serve the mounted tools over MCP: Streamable HTTP at http://HOST:PORT/mcp (a landing page at /), "
    "or stdio; a change to WORKFLOW.md re-mounts while serving.",
    examples=(
        "lorenz serve",
        "lorenz serve --port 0          # any free port",
        "lorenz serve --host 0.0.0.0 --workers 4   # with LORENZ_MCP_TOKEN set",
        "lorenz serve --stdio",
    ),
    env=(*WORKFLOW_ENV, ("LORENZ_MCP_TOKEN", "bearer token every /mcp request must carry (server.token)")),
    arguments=_arguments,
    run=run,
)
