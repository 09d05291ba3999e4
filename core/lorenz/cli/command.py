"""What a ``lorenz`` command is (:class:`Command`), and the arguments and environment variables several
commands share. Each module under :mod:`lorenz.cli.commands` declares one."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Coroutine
from typing import Any

from attrs import frozen

from lorenz.host.remote import RemoteError

from .output import UsageError

__all__ = [
    "PIP_ENV",
    "PLUGINS_ENV",
    "SERVER_ENV",
    "WORKFLOW_ENV",
    "WORKFLOW_HELP",
    "Command",
    "Env",
    "add_json",
    "add_server",
    "add_workflow",
    "remote",
]

Env = tuple[tuple[str, str], ...]
"""Environment variables a command reads: ``(name, what it does)`` pairs, listed in its ``--help``."""

PLUGINS_ENV: Env = (
    ("LORENZ_LOAD_PLUGINS", "comma-separated distributions to load, and no others (empty: none)"),
    ("LORENZ_DISABLE_PLUGINS", "comma-separated distributions to leave out"),
)
WORKFLOW_ENV: Env = (
    ("LORENZ_WORKFLOW", "the workflow file when none is named (default ./WORKFLOW.md)"),
    *PLUGINS_ENV,
    ("LORENZ_SECRET_RESOLUTION_TIMEOUT_MS", "how long an op:// secret may take to resolve (30000)"),
    ("$NAME", "any variable the workflow references, and the tracker's defaults (JIRA_API_KEY, LINEAR_API_KEY...)"),
)
WORKFLOW_HELP = "WORKFLOW.md path (default: $LORENZ_WORKFLOW or ./WORKFLOW.md)"
SERVER_ENV: Env = (("LORENZ_MCP_TOKEN", "with --server: the bearer token to present (--token overrides it)"),)
PIP_ENV: Env = (("PIP_*", "pip's own settings (PIP_INDEX_URL, PIP_FIND_LINKS...), read by the pip lorenz runs"),)


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """A command with none beyond the global options."""


@frozen(kw_only=True)
class Command:
    """One ``lorenz`` subcommand: what ``lorenz NAME --help`` says about it, its arguments, and the
    function that runs it (its exit status). Its line in ``lorenz --help`` is in
    :data:`lorenz.cli.commands.TABLE`, so that listing the commands imports none."""

    name: str
    #: the paragraph atop ``lorenz NAME --help``
    description: str
    examples: tuple[str, ...]
    env: Env = ()
    #: adds the command's own arguments to its subparser (the global options are there already)
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    run: Callable[[argparse.Namespace], int]
    #: starts, prints and ends: the garbage collector stays paused throughout (:func:`lorenz.cli.main`);
    #: the others go on to run tools, trackers or a server, with it on
    brief: bool = False


def add_workflow(parser: argparse.ArgumentParser) -> None:
    """The optional ``workflow`` positional."""
    parser.add_argument("workflow", nargs="?", help=WORKFLOW_HELP)


def add_json(parser: argparse.ArgumentParser) -> None:
    """``--json``: print one JSON object (its shape in docs/cli-json.md)."""
    parser.add_argument("--json", action="store_true", help="print a JSON object (docs/cli-json.md)")


def add_server(parser: argparse.ArgumentParser) -> None:
    """``--server URL`` and ``--token``: ask a running ``lorenz serve`` instead of working in-process."""
    parser.add_argument("--server", metavar="URL", help="a running lorenz serve's MCP endpoint (http://HOST:PORT/mcp)")
    parser.add_argument("--token", help="with --server: the bearer token (default: $LORENZ_MCP_TOKEN)")


def remote(args: argparse.Namespace, work: Callable[[str, str | None], Coroutine[Any, Any, Any]]) -> Any:
    """Run ``work(url, token)`` against ``--server``; a server that cannot be asked is a one-line error."""
    import asyncio
    import os

    token = args.token or os.environ.get("LORENZ_MCP_TOKEN") or None
    try:
        return asyncio.run(work(args.server, token))
    except RemoteError as exc:
        raise UsageError(str(exc)) from exc
