"""``lorenz import``: the MCP servers of a client's configuration file (Claude Desktop, Claude Code, Cursor,
VS Code) as ``provider: mcp`` entries of the workflow's ``tools:`` map, their secrets left in the
environment (:mod:`lorenz.cli.mcp_entries`)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lorenz.cli.client_configs import read_config, servers_of
from lorenz.cli.command import WORKFLOW_ENV, Command, add_workflow
from lorenz.cli.mcp_entries import exports, mcp_entry, write_entries
from lorenz.cli.output import UsageError, counted
from lorenz.cli.workflow_edit import workflow_keys

if TYPE_CHECKING:
    from lorenz.cli.mcp_entries import Entry

__all__ = ["COMMAND"]

_KEY = re.compile(r"[^A-Za-z0-9_-]+")


def _strings(value: Any, where: str, *, kind: type = dict) -> Any:
    """A list or map of strings from the client's file, or an error naming where it is."""
    if value is None:
        return kind()
    if kind is list and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    if kind is dict and isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return value
    raise UsageError(f"{where} must be a {'list' if kind is list else 'map'} of strings")


def convert(name: str, server: Any, where: str, *, prefix: bool) -> Entry | str:
    """The entry for one of the file's servers, or the reason it is left out (a string)."""
    if not isinstance(server, dict):
        raise UsageError(f"{where} must be a map")
    if server.get("disabled") is True:
        return "disabled in the client"
    kind = server.get("type") or server.get("transport")
    if kind == "sse":
        return "an SSE server: the mcp pack speaks Streamable HTTP (try its URL ending in /mcp)"
    if server.get("envFile"):
        return "envFile is not read: list its variables under env"
    key = _KEY.sub("_", name).strip("_") or "server"
    command, url = server.get("command"), server.get("url")
    if command is not None and not (isinstance(command, str) and command):
        raise UsageError(f"{where}.command must be a program's name")
    return mcp_entry(
        key,
        where=where,
        command=[command, *_strings(server.get("args"), f"{where}.args", kind=list)] if command else None,
        url=url if isinstance(url, str) else None,
        env=_strings(server.get("env"), f"{where}.env"),
        headers=_strings(server.get("headers"), f"{where}.headers"),
        cwd=server.get("cwd") if isinstance(server.get("cwd"), str) else None,
        prefix=f"{key}_" if prefix else None,
    )


def run(args: argparse.Namespace) -> int:
    import sys

    path = Path(args.file).expanduser()
    if not path.is_file():
        raise UsageError(f"{path}: no such file (a client's MCP configuration: claude_desktop_config.json, .mcp.json…)")
    root, servers = servers_of(read_config(path)[0], path)
    if args.only:
        unknown = [name for name in args.only if name not in servers]
        if unknown:
            raise UsageError(
                f"{path}: no server named {', '.join(unknown)} under {root} ({', '.join(servers) or 'none'})"
            )
        servers = {name: servers[name] for name in args.only}
    entries: list[Entry] = []
    for name, server in servers.items():
        found = convert(str(name), server, f"{path.name}: {root}.{name}", prefix=not args.no_prefix)
        if isinstance(found, str):
            print(f"left out {name}: {found}", file=sys.stderr)
        else:
            entries.append(found)
    if not entries:
        raise UsageError(f"{path}: no server to import under {root}")
    present = [] if args.replace else [entry.key for entry in entries if entry.key in workflow_keys(args)]
    if present:
        print(f"the workflow has {', '.join(present)} already: left as it was (--replace writes over it)")
        entries = [entry for entry in entries if entry.key not in present]
    written = write_entries(args, entries, dry_run=args.dry_run) if entries else None
    if written is None:
        if entries:
            print(f"the workflow has {', '.join(entry.key for entry in entries)} already: left as it was")
        return 0
    keys = ", ".join(entry.key for entry in entries)
    target, created = written
    secrets = [secret for entry in entries for secret in entry.secrets]
    if args.dry_run:
        print(f"dry run: {target.name} left as it was (without --dry-run, lorenz import writes it)")
    else:
        made = f"created {target.name} from the embedded default (the local board) and " if created else ""
        print(f"{made}imported {counted(len(entries), 'MCP server')} into {target.name}: {keys}")
    if secrets:
        print(
            "the entries read these variables (values are never written to the file): export them before lorenz serve"
        )
        print("\n".join(exports(secrets)))
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="a client's MCP configuration (mcpServers or servers map)")
    add_workflow(parser)
    parser.add_argument("--dry-run", "-n", action="store_true", help="print the change to the workflow; write nothing")
    parser.add_argument("--only", action="append", metavar="NAME", help="import this server only (repeatable)")
    parser.add_argument("--replace", action="store_true", help="write over a tools: entry of the same name")
    parser.add_argument(
        "--no-prefix", action="store_true", help="serve the tools under their own names (no KEY_ prefix)"
    )


COMMAND = Command(
    name="import",
    description="Read FILE, an MCP client's configuration (Claude Desktop's claude_desktop_config.json, Claude "
    "Code's .mcp.json, Cursor's .cursor/mcp.json: mcpServers; VS Code's .vscode/mcp.json: servers) and add each "
    "server to WORKFLOW.md's tools: map as a provider: mcp entry under its name, its tools prefixed NAME_ (an "
    "entry of that name already there is left alone, unless --replace). Every "
    "env and header value becomes a $VAR reference (the variable is named after it) and is never written; "
    "export those variables before lorenz serve. --dry-run shows the change as a diff. The edited workflow is "
    "validated as lorenz check does (no server is started) before it replaces the file.",
    examples=(
        "lorenz import ~/.config/Claude/claude_desktop_config.json --dry-run",
        "lorenz import .mcp.json",
        "lorenz import .vscode/mcp.json --only github --no-prefix",
    ),
    env=WORKFLOW_ENV,
    arguments=_arguments,
    run=run,
    brief=True,
)
