"""``lorenz tools``: the tools a workflow mounts, or with ``--all`` every installed tool."""

from __future__ import annotations

import argparse
from typing import Any

from lorenz.cli.command import SERVER_ENV, WORKFLOW_ENV, Command, add_json, add_server, add_workflow, remote
from lorenz.cli.output import json_object, print_json
from lorenz.cli.workspace import open_for_command, warn

__all__ = ["COMMAND"]


def _summary(description: str) -> str:
    return description.strip().splitlines()[0] if description.strip() else ""


def _permissions(workspace: Any) -> dict[str, Any]:
    """Each installed pack's permissions: what it declares, widened by ``tools.<pack>.permissions``."""
    from lorenz.isolation.plan import effective_permissions

    settings = workspace.settings
    return {pack.name: effective_permissions(pack, settings).to_dict() for pack in workspace.discovery.tools}


def run(args: argparse.Namespace) -> int:
    from lorenz.mounting.inventory import installed_tools, mount_instruction

    if args.server:
        return _run_remote(args)
    workspace = open_for_command(args, args.workflow, listing=args.all)
    inventory = installed_tools(workspace.discovery, workspace.settings, workspace.mounted, unmounted=args.all)
    failures = [*workspace.mounted.failures, *workspace.mounted.dropped, *inventory.failures]
    code = 1 if workspace.mounted.failures else 0
    if args.json:
        path = workspace.settings.workflow_path
        extra = {"permissions": _permissions(workspace)} if args.all else {}
        print_json(
            json_object(
                workflow=None if path is None else str(path),
                tools=[tool.to_dict() for tool in inventory.tools],
                failures=[failure.to_dict() for failure in failures],
                **extra,
            )
        )
        return code
    tools = inventory.tools
    width = max((len(tool.name) for tool in tools), default=0)
    if not args.all:
        for tool in tools:
            print(f"{tool.name.ljust(width)}  [{tool.served_by}]  {_summary(tool.spec.description)}")
        return code
    rows = [(tool.name, tool.served_by, tool.origin, "mounted" if tool.mounted else "-") for tool in tools]
    widths = [max((len(row[i]) for row in rows), default=0) for i in range(4)]
    for row, tool in zip(rows, tools, strict=True):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=True)]
        print("  ".join([*cells, _summary(tool.spec.description)]))
    for failure in inventory.failures:
        warn(failure.error)
    packs = inventory.unmounted_packs()
    if packs:
        how = mount_instruction(packs[0], workspace.settings.workflow_path)
        warn(f"to mount a pack, {how} (not mounted: {', '.join(packs)})")
    return code


def _run_remote(args: argparse.Namespace) -> int:
    """``--server URL``: the tools the running server lists to this token."""
    from lorenz.cli.output import UsageError
    from lorenz.host.remote import remote_tools

    if args.all or args.workflow:
        raise UsageError("--server lists what the server serves: it takes no WORKFLOW and no --all")
    tools = remote(args, remote_tools)
    if args.json:
        print_json(json_object(server=args.server, tools=tools, failures=[]))
        return 0
    width = max((len(tool["name"]) for tool in tools), default=0)
    for tool in tools:
        print(f"{tool['name'].ljust(width)}  {_summary(tool.get('description') or '')}")
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_workflow(parser)
    add_json(parser)
    parser.add_argument("--all", action="store_true", help="every installed tool, mounted or not")
    add_server(parser)


COMMAND = Command(
    name="tools",
    description="The tools the workflow mounts, each with its pack; --all adds every other installed tool, with its "
    "distribution and whether it is mounted; --server URL lists what a running lorenz serve serves (to --token).",
    examples=(
        "lorenz tools",
        "lorenz tools --all",
        "lorenz tools WORKFLOW.md --json",
        "lorenz tools --server http://127.0.0.1:4040/mcp",
    ),
    env=(*WORKFLOW_ENV, *SERVER_ENV),
    arguments=_arguments,
    run=run,
    brief=True,
)
