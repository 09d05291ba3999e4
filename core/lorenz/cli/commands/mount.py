"""``lorenz mount``: add an installed pack (and its options) to the workflow's ``tools:`` map."""

from __future__ import annotations

import argparse

from lorenz.cli.command import WORKFLOW_ENV, Command, add_workflow
from lorenz.cli.mount_mcp import add_mcp_arguments, mount_mcp
from lorenz.cli.output import UsageError, counted
from lorenz.cli.workflow_edit import edit_tools, option_value
from lorenz.cli.workspace import known_pack_hint, load_plugin_modules
from lorenz.plugins.discovery import discover
from lorenz.workspace import find_workflow

__all__ = ["COMMAND"]


def run(args: argparse.Namespace) -> int:
    if args.provider is not None or args.upstream_command is not None or args.url is not None:
        return mount_mcp(args)
    options = dict(option_value(text) for text in args.option)
    discovery = discover(plugins=load_plugin_modules(args), unimported=True)
    if discovery.tools.get(args.pack) is None:
        raise UsageError(f"no installed pack is named {args.pack}{known_pack_hint(args.pack, discovery)}")
    created = not _workflow_exists(args)
    path, tools = edit_tools(args, args.pack, options)
    if created:
        print(f"created {path.name} from the embedded default (tracker: {{kind: local}}, the board at .lorenz/local)")
    if tools is None:
        print(f"{path.name} mounts {args.pack} already{' with these options' if options else ''}: left as it was")
        return 0
    print(f"mounted {args.pack} in {path.name}: {counted(len(tools), 'tool')} ({', '.join(tools)})")
    return 0


def _workflow_exists(args: argparse.Namespace) -> bool:
    import os
    from pathlib import Path

    return find_workflow(args.workflow, cwd=Path.cwd(), env=os.environ) is not None


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pack", metavar="PACK", help="the pack's name (lorenz plugins lists them), or the new key")
    add_workflow(parser)
    parser.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="one of the pack's options, the value read as YAML (repeatable)",
    )
    add_mcp_arguments(parser)


COMMAND = Command(
    name="mount",
    description="Add PACK (with --option values) to WORKFLOW.md's tools: map, keeping the file's comments, layout "
    "and body (with no WORKFLOW.md, one is created from the embedded default, the local board); the edited "
    "workflow is validated as lorenz check does before it replaces the file. A running "
    "lorenz serve picks the change up. With --provider mcp, PACK is a new key serving any MCP server "
    "(--command or --url); an --env or --header value is never written: the entry reads it from "
    "$NAME, which you export.",
    examples=(
        "lorenz mount weather",
        "lorenz mount weather --option units=imperial",
        "lorenz mount jira ops/WORKFLOW.md",
        'lorenz mount time --provider mcp --command "uvx mcp-server-time" --prefix time_',
        "lorenz mount vendor --provider mcp --url https://mcp.example.com/mcp --header Authorization",
    ),
    env=WORKFLOW_ENV,
    arguments=_arguments,
    run=run,
    brief=True,
)
