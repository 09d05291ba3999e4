"""``lorenz unmount``: take a pack out of the workflow's ``tools:`` map."""

from __future__ import annotations

import argparse

from lorenz.cli.command import WORKFLOW_ENV, Command, add_workflow
from lorenz.cli.output import UsageError
from lorenz.cli.workflow_edit import edit_tools, named_packs
from lorenz.settings.suggest import did_you_mean

__all__ = ["COMMAND"]


def run(args: argparse.Namespace) -> int:
    path, tools = edit_tools(args, args.pack, None)
    if tools is None:
        named = named_packs(path)
        hint = did_you_mean(args.pack, named) or f" (it names: {', '.join(named) or 'none'})"
        raise UsageError(f"{path.name}: tools: does not name {args.pack}{hint}")
    still = f" (still mounted by default: {', '.join(tools)})" if tools else ""
    print(f"unmounted {args.pack} from {path.name}{still}")
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pack", metavar="PACK", help="the pack's name in tools:")
    add_workflow(parser)


COMMAND = Command(
    name="unmount",
    description="Remove PACK from WORKFLOW.md's tools: map, keeping the file's comments, layout and body; the "
    "edited workflow is validated as lorenz check does before it replaces the file.",
    examples=("lorenz unmount weather", "lorenz unmount jira ops/WORKFLOW.md"),
    env=WORKFLOW_ENV,
    arguments=_arguments,
    run=run,
    brief=True,
)
