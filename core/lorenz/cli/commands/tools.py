"""``lorenz tools``: the tools a workflow mounts, or with ``--all`` every installed tool; ``--budget``
adds what each costs an agent's context (:mod:`lorenz.toolsearch.cost`)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from typing import Any

from lorenz.cli.command import SERVER_ENV, WORKFLOW_ENV, Command, add_json, add_server, add_workflow, remote
from lorenz.cli.output import UsageError, json_object, print_json, progress
from lorenz.cli.workspace import open_for_command, until_started, warn
from lorenz.mounting.inventory import installed_tools, mount_instruction
from lorenz.toolsearch.budget import fit
from lorenz.toolsearch.cost import BYTES_PER_TOKEN, context_tokens
from lorenz.words import counted

__all__ = ["COMMAND"]


def _summary(description: str) -> str:
    return description.strip().splitlines()[0] if description.strip() else ""


def _with_costs(tools: Sequence[Mapping[str, Any]], wires: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``--budget --json``: each tool with its ``contextTokens``, and their total."""
    costs = [context_tokens(wire) for wire in wires]
    return {
        "tools": [{**tool, "contextTokens": cost} for tool, cost in zip(tools, costs, strict=True)],
        "contextTokens": sum(costs),
    }


def _print_budget(rows: Sequence[tuple[str, str]], wires: Sequence[Mapping[str, Any]]) -> None:
    """``--budget``: each tool's name, where it comes from and its estimated tokens, then the total."""
    costs = [context_tokens(wire) for wire in wires]
    names = max((len(name) for name, _ in rows), default=0)
    origins = max((len(origin) for _, origin in rows), default=0)
    digits = len(str(sum(costs)))
    for (name, origin), cost in zip(rows, costs, strict=True):
        print(f"{name.ljust(names)}  {origin.ljust(origins)}  {str(cost).rjust(digits)} tokens")
    how = f"estimated: bytes of each tool's tools/list JSON / {BYTES_PER_TOKEN}"
    print(f"{'total'.ljust(names)}  {''.ljust(origins)}  {sum(costs)} tokens for {counted(len(costs), 'tool')} ({how})")


def _served(workspace: Any, inventory: Any) -> dict[str, Any] | None:
    """``--budget`` with ``server.catalog``: what a caller who may see every mounted tool, and has
    called none yet, is listed."""
    catalog = workspace.settings.server.catalog
    if catalog is None:
        return None
    fitted = fit([tool.spec for tool in inventory.tools if tool.mounted], catalog)
    return {
        "tools": [spec.name for spec in fitted.listed],
        "leftOut": [spec.name for spec in fitted.left_out],
        "contextTokens": fitted.tokens,
    }


def _print_served(served: dict[str, Any]) -> None:
    print(
        f"server.catalog lists a new caller {counted(len(served['tools']), 'tool')}, {served['contextTokens']} tokens:"
    )
    print(f"  {', '.join(served['tools'])}")
    if served["leftOut"]:
        print(f"  left out (found by lorenz_search_tools, or called by name): {', '.join(served['leftOut'])}")


def _permissions(workspace: Any) -> dict[str, Any]:
    """Each installed pack's permissions: what it declares, widened by ``tools.<pack>.permissions``."""
    from lorenz.isolation.plan import effective_permissions  # cattrs, asyncio: only with --all

    settings = workspace.settings
    return {pack.name: effective_permissions(pack, settings).to_dict() for pack in workspace.discovery.tools}


def run(args: argparse.Namespace) -> int:
    if args.server:
        return _run_remote(args)
    workspace = open_for_command(args, args.workflow, listing=args.all)
    with progress("waiting for packs still starting"):
        workspace = until_started(workspace)
    inventory = installed_tools(workspace.discovery, workspace.settings, workspace.mounted, unmounted=args.all)
    failures = [*workspace.mounted.failures, *workspace.mounted.dropped, *inventory.failures]
    code = 1 if workspace.mounted.failures else 0
    if args.json:
        path = workspace.settings.workflow_path
        extra = {"permissions": _permissions(workspace)} if args.all else {}
        listed: dict[str, Any] = {"tools": [tool.to_dict() for tool in inventory.tools]}
        if args.budget:
            listed = _with_costs(listed["tools"], [tool.spec.to_wire() for tool in inventory.tools])
            served = _served(workspace, inventory)
            if served is not None:
                listed["served"] = served
        print_json(
            json_object(
                workflow=None if path is None else str(path),
                **listed,
                failures=[failure.to_dict() for failure in failures],
                **extra,
            )
        )
        return code
    tools = inventory.tools
    if args.budget:
        _print_budget([(tool.name, f"[{tool.served_by}]") for tool in tools], [tool.spec.to_wire() for tool in tools])
        served = _served(workspace, inventory)
        if served is not None:
            _print_served(served)
        return code
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
    from lorenz.host.remote import remote_tools  # the MCP client: only with --server

    if args.all or args.workflow:
        raise UsageError("--server lists what the server serves: it takes no WORKFLOW and no --all")
    tools = remote(args, remote_tools)
    if args.json:
        listed = _with_costs(tools, tools) if args.budget else {"tools": tools}
        print_json(json_object(server=args.server, **listed, failures=[]))
        return 0
    if args.budget:
        _print_budget([(tool["name"], "") for tool in tools], tools)
        return 0
    width = max((len(tool["name"]) for tool in tools), default=0)
    for tool in tools:
        print(f"{tool['name'].ljust(width)}  {_summary(tool.get('description') or '')}")
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_workflow(parser)
    add_json(parser)
    parser.add_argument("--all", action="store_true", help="every installed tool, mounted or not")
    parser.add_argument(
        "--budget",
        action="store_true",
        help="each tool's estimated context cost in tokens (bytes of its tools/list JSON / 4), the total, "
        "and with server.catalog what a new caller is listed",
    )
    add_server(parser)


COMMAND = Command(
    name="tools",
    description="The tools the workflow mounts, each with its pack; --all adds every other installed tool, with its "
    "distribution and whether it is mounted; --budget shows what each tool's definition costs an agent's context, "
    "and the total; --server URL lists what a running lorenz serve serves (to --token).",
    examples=(
        "lorenz tools",
        "lorenz tools --all",
        "lorenz tools WORKFLOW.md --json",
        "lorenz tools --budget",
        "lorenz tools --server http://127.0.0.1:4040/mcp",
    ),
    env=(*WORKFLOW_ENV, *SERVER_ENV),
    arguments=_arguments,
    run=run,
    brief=True,
)
