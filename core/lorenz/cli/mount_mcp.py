"""``lorenz mount KEY --provider mcp --command … | --url …``: a ``provider: mcp`` entry written from the
command line (:mod:`lorenz.cli.mcp_entries` says where its secrets go). No pack named ``KEY`` is looked
for: the key is new, and the ``mcp`` pack validates the entry before it is written."""

from __future__ import annotations

import argparse

from lorenz.cli.mcp_entries import exports, mcp_entry, write_entries
from lorenz.cli.output import UsageError
from lorenz.cli.workflow_edit import workflow_keys

__all__ = ["add_mcp_arguments", "mount_mcp"]


def add_mcp_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("any MCP server (--provider mcp)")
    group.add_argument("--provider", metavar="PACK", help="the pack serving this key: mcp (any MCP server)")
    target = group.add_mutually_exclusive_group()
    target.add_argument(
        "--command", dest="upstream_command", metavar='"PROGRAM ARG…"', help="a stdio server's command line"
    )
    target.add_argument("--url", metavar="URL", help="a Streamable HTTP server's endpoint")
    group.add_argument("--prefix", metavar="P", help="served tool names start with P (time_get_current_time)")
    group.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME[=$VAR]",
        help="a variable the server gets, read from $NAME (or the $VAR named) when it starts (repeatable)",
    )
    group.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME[=$VAR]",
        help="a header sent to a --url server, its value read from a variable likewise (repeatable)",
    )


def _pairs(values: list[str], flag: str) -> dict[str, str]:
    """``NAME`` (the value to be read from a variable) or ``NAME=VALUE`` for each ``--env``/``--header``."""
    pairs: dict[str, str] = {}
    for text in values:
        name, _, value = text.partition("=")
        if not name.strip():
            raise UsageError(f"{flag} {text!r}: expected NAME or NAME=$VAR")
        pairs[name.strip()] = value
    return pairs


def mount_mcp(args: argparse.Namespace) -> int:
    import shlex

    if args.provider != "mcp":
        given = "no --provider" if args.provider is None else f"--provider {args.provider}"
        raise UsageError(f"--command and --url take --provider mcp ({given} given)")
    if args.option:
        raise UsageError("--option does not go with --provider mcp: use --command or --url, --env, --header, --prefix")
    if args.upstream_command is None and args.url is None:
        raise UsageError(f'--provider mcp needs --command "PROGRAM ARG…" (a stdio server) or --url URL for {args.pack}')
    try:
        command = shlex.split(args.upstream_command) if args.upstream_command is not None else None
    except ValueError as exc:
        raise UsageError(f"--command: {exc}") from exc
    if command == []:
        raise UsageError("--command is empty: name the program to run")
    entry = mcp_entry(
        args.pack,
        where="",
        command=command,
        url=args.url,
        env={name: value or f"${name}" for name, value in _pairs(args.env, "--env").items()},
        headers=_pairs(args.header, "--header"),
        prefix=args.prefix,
    )
    replacing = args.pack in workflow_keys(args)
    written = write_entries(args, [entry], dry_run=False)
    if written is None:
        print(f"the workflow mounts {args.pack} already with these options: left as it was")
        return 0
    path, created = written
    if created:
        print(f"created {path.name} from the embedded default (tracker: {{kind: local}}, the board at .lorenz/local)")
    upstream = shlex.join(command) if command is not None else args.url
    done = f"replaced tools.{args.pack}" if replacing else f"mounted {args.pack}"
    print(f"{done} in {path.name}: the MCP server {upstream} (lorenz tools lists its tools)")
    if entry.secrets:
        print("it reads these variables (their values are never written to the file): export them before lorenz serve")
        print("\n".join(exports(entry.secrets)))
    return 0
