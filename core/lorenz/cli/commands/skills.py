"""``lorenz skills``: the mounted packs' skills, listed or exported into a folder."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lorenz.cli.command import WORKFLOW_ENV, WORKFLOW_HELP, Command, add_json
from lorenz.cli.output import UsageError, counted, json_object, print_json
from lorenz.cli.workspace import open_for_command
from lorenz.mounting.skills import export_skills, mounted_skills

__all__ = ["COMMAND"]


def run(args: argparse.Namespace) -> int:
    action, folder, workflow = _split(args)
    workspace = open_for_command(args, workflow)
    skills = mounted_skills(workspace.packs())
    if action == "export":
        if not folder:
            raise UsageError("usage: lorenz skills export DIR [WORKFLOW] [--force]")
        report = export_skills(skills, Path(folder), force=args.force)
        print(
            f"{len(report.written)} written, {len(report.unchanged)} unchanged, {len(report.refused)} kept as changed"
        )
        for label in report.refused:
            print(f"kept {label}: it differs from the pack's copy (--force replaces it)", file=sys.stderr)
        return 1 if report.refused and not args.force else 0
    if args.json:
        print_json(
            json_object(
                skills=[
                    {
                        "name": skill.name,
                        "description": skill.description,
                        "directory": str(skill.directory),
                        "files": [f.relative for f in skill.files],
                    }
                    for skill in skills
                ]
            )
        )
        return 0
    if not skills:
        print("no skills: the mounted packs ship none")
    for skill in skills:
        print(f"{skill.name}  ({counted(len(skill.files), 'file')})  {skill.description}")
    return 0


def _split(args: argparse.Namespace) -> tuple[str | None, str | None, str | None]:
    """``[WORKFLOW]`` or ``export DIR [WORKFLOW]``; ``--workflow`` names the workflow too."""
    values = list(args.values)
    action = values.pop(0) if values and values[0] == "export" else None
    folder = values.pop(0) if action and values else None
    if len(values) > 1:
        raise UsageError("usage: lorenz skills [WORKFLOW] | lorenz skills export DIR [WORKFLOW] [--force]")
    workflow = values[0] if values else None
    if workflow is not None and args.workflow is not None and workflow != args.workflow:
        raise UsageError(f"two workflows named: {workflow} and --workflow {args.workflow}")
    return action, folder, workflow or args.workflow


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "%(prog)s [-h] [--force] [--json] [WORKFLOW] | export DIR [WORKFLOW]"
    parser.add_argument(
        "values",
        nargs="*",
        metavar="[export DIR] [WORKFLOW]",
        help="export: copy the skills into DIR (e.g. .claude/skills)",
    )
    parser.add_argument("--workflow", help=f"{WORKFLOW_HELP}; the same as the positional WORKFLOW")
    parser.add_argument("--force", action="store_true", help="replace files that differ from the pack's copy")
    add_json(parser)


COMMAND = Command(
    name="skills",
    description="List the skills (SKILL.md directories) the mounted packs ship, or copy them into DIR (e.g. "
    ".claude/skills), de-duplicated, never overwriting a changed file without --force.",
    examples=(
        "lorenz skills",
        "lorenz skills ops/WORKFLOW.md",
        "lorenz skills export .claude/skills",
        "lorenz skills export .claude/skills --force",
    ),
    env=WORKFLOW_ENV,
    arguments=_arguments,
    run=run,
    brief=True,
)
