"""``lorenz connect``: write an MCP client's configuration file (Claude Code, Claude Desktop, Cursor, VS
Code) so that it reaches this host, over stdio (the client starts ``lorenz serve --stdio``) or HTTP (a
running ``lorenz serve``, the token read from a variable, never written), keeping every other entry."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path
from typing import Any

from lorenz.cli.client_configs import CLIENTS, Client, read_config, write_config
from lorenz.cli.command import Command
from lorenz.cli.output import UsageError
from lorenz.cli.workflow_edit import read_front_matter
from lorenz.workspace import find_workflow
from lorenz.yaml12 import load_yaml

__all__ = ["COMMAND"]

TOKEN_ENV = "LORENZ_MCP_TOKEN"
DEFAULT_PORT = 4040


def _server(workflow: Path | None) -> dict[str, Any]:
    """The workflow's ``server:`` map as written (no plugin is loaded, no secret resolved)."""
    if workflow is None:
        return {}
    try:
        config = load_yaml(read_front_matter(workflow).text)
    except ValueError:
        return {}
    server = config.get("server") if isinstance(config, dict) else None
    return server if isinstance(server, dict) else {}


def _token_variable(args: argparse.Namespace, server: dict[str, Any]) -> str | None:
    """The variable holding the bearer token the client presents: ``--token-env``, the ``$NAME`` that
    ``server.token`` reads, or ``LORENZ_MCP_TOKEN`` when the host has a token; ``None`` when it has none."""
    if args.token_env:
        return str(args.token_env)
    token = server.get("token")
    reference = re.fullmatch(r"\$([A-Za-z_][A-Za-z0-9_]*)", token) if isinstance(token, str) else None
    if reference is not None:
        return reference.group(1)
    if token or server.get("tokens") or os.environ.get(TOKEN_ENV):
        return TOKEN_ENV
    return None


def _stdio_command(workflow: Path | None) -> list[str]:
    script = Path(sys.executable).parent / ("lorenz.exe" if sys.platform == "win32" else "lorenz")
    start = [str(script)] if script.is_file() else [sys.executable, "-m", "lorenz"]
    return [*start, "serve", "--stdio", *([str(workflow)] if workflow is not None else [])]


def _shown(path: Path) -> str:
    """``path`` relative to the current directory, or to ``~``, where it is under one."""
    for base, label in ((Path.cwd(), ""), (Path.home(), "~/")):
        if path.is_relative_to(base):
            return label + str(path.relative_to(base))
    return str(path)


def entry_for(client: Client, args: argparse.Namespace, workflow: Path | None) -> dict[str, Any]:
    """The client's entry for this host."""
    if args.url is None:
        if client.project_file is None and workflow is None:
            msg = f"{client.label} starts servers elsewhere: name a WORKFLOW.md, or make one (lorenz mount PACK)"
            raise UsageError(msg)
        command = _stdio_command(workflow)
        entry: dict[str, Any] = {"type": client.stdio_type} if client.stdio_type else {}
        return {**entry, "command": command[0], "args": command[1:]}
    if client.project_file is None:
        msg = (
            f"{client.label}'s config file takes stdio servers only: drop --url (it starts lorenz serve --stdio itself)"
        )
        raise UsageError(msg)
    server = _server(workflow)
    url = args.url or f"http://127.0.0.1:{server.get('port') or DEFAULT_PORT}/mcp"
    entry = {"type": client.http_type} if client.http_type else {}
    entry["url"] = url
    variable = _token_variable(args, server)
    if variable is not None:
        entry["headers"] = {"Authorization": "Bearer " + client.env_reference.format(variable)}
    return entry


def run(args: argparse.Namespace) -> int:
    import json

    client = CLIENTS[args.client]
    found = find_workflow(args.workflow, cwd=Path.cwd(), env=os.environ)
    workflow = found.resolve() if found is not None else None
    path = client.path(Path.cwd(), Path.home())
    entry = None if args.remove else entry_for(client, args, workflow)
    if args.print:
        print(json.dumps({client.root: {args.name: entry}}, indent=2))
        return 0
    data, commented = read_config(path)
    where = _shown(path)
    servers = data.setdefault(client.root, {})
    if not isinstance(servers, dict):
        raise UsageError(f"{path}: {client.root} must be a map of server names to servers")
    if args.remove:
        if args.name not in servers:
            print(f"{where} has no {args.name} entry: left as it was")
            return 0
        del servers[args.name]
        verb = f"removed {args.name} from"
    elif servers.get(args.name) == entry:
        print(f"{where} reaches lorenz already ({args.name}): left as it was")
        return 0
    else:
        verb = f"{'updated' if args.name in servers else 'added'} {args.name} in"
        servers[args.name] = entry
    if commented:
        msg = f"{path} has comments, which rewriting would drop: edit it by hand (lorenz connect {client.name} --print)"
        raise UsageError(msg)
    write_config(path, data)
    print(f"{verb} {where} ({client.label})")
    headers = (entry or {}).get("headers")
    if headers:
        print(f"{client.label} sends {headers['Authorization']}: set that variable where it runs (no token is written)")
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("client", choices=list(CLIENTS), metavar="CLIENT", help=", ".join(CLIENTS))
    parser.add_argument(
        "workflow", nargs="?", help="the WORKFLOW.md it serves (default: $LORENZ_WORKFLOW or ./WORKFLOW.md)"
    )
    parser.add_argument(
        "--url",
        nargs="?",
        const="",
        metavar="URL",
        help="reach a running lorenz serve over HTTP (default URL: http://127.0.0.1:PORT/mcp, server.port or 4040)",
    )
    parser.add_argument(
        "--token-env", metavar="NAME", help=f"with --url: the variable holding the token (default {TOKEN_ENV})"
    )
    parser.add_argument("--name", default="lorenz", help="the entry's name in the client's file (default lorenz)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--print", action="store_true", help="print the entry as JSON; write nothing")
    action.add_argument("--remove", action="store_true", help="remove the entry, and no other")


COMMAND = Command(
    name="connect",
    description="Add an entry for this host to CLIENT's MCP configuration file, keeping every other entry: "
    "Claude Code's .mcp.json, Cursor's .cursor/mcp.json and VS Code's .vscode/mcp.json in the current "
    "directory, Claude Desktop's claude_desktop_config.json in your home directory. By default the client starts "
    "lorenz serve --stdio with this workflow; with --url it reaches a running lorenz serve, sending a bearer "
    "token read from a variable (the token is never written). Running it again changes nothing; --remove takes "
    "the entry out; --print shows the JSON instead.",
    examples=(
        "lorenz connect claude-code",
        "lorenz connect vscode --url",
        "lorenz connect cursor --url http://127.0.0.1:4040/mcp --token-env LORENZ_MCP_TOKEN",
        "lorenz connect claude-desktop --print",
        "lorenz connect claude-code --remove",
    ),
    env=(("LORENZ_WORKFLOW", "the workflow file when none is named (default ./WORKFLOW.md)"),),
    arguments=_arguments,
    run=run,
    brief=True,
)
