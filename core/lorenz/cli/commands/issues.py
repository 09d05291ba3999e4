"""``lorenz issues``: the candidate issues the dispatch tracker hands out now."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lorenz.cli.command import WORKFLOW_ENV, Command, add_json, add_workflow
from lorenz.cli.output import UsageError, json_object, print_json, progress
from lorenz.cli.workspace import open_for_command
from lorenz.http import DEFAULT_TIMEOUT
from lorenz.plugins.containment import call_plugin
from lorenz.redact import redact_text

__all__ = ["COMMAND"]


async def _candidates(workspace: Any) -> list[Any]:
    import httpx

    async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as http:
        client = workspace.tracker_client(http=http)
        return list(await client.fetch_candidate_issues())


def run(args: argparse.Namespace) -> int:
    workspace = open_for_command(args, args.workflow)
    kind = workspace.settings.tracker.kind
    if kind is None:
        where = workspace.settings.workflow_path
        raise UsageError(f"{where}: no tracker is configured (this workflow only serves its tools: packs)")
    try:
        with progress(f"fetching issues from {kind}"):
            import asyncio

            issues = call_plugin(f"tracker {kind}", "fetching issues", asyncio.run, _candidates(workspace))
    except Exception as exc:
        raise UsageError(redact_text(f"fetching candidate issues failed: {exc}", workspace.settings.secrets)) from exc
    project = workspace.project_url
    if args.json:
        print_json(json_object(tracker=kind, projectUrl=project, issues=[issue.to_record() for issue in issues]))
        return 0
    if project:
        print(f"project: {project}", file=sys.stderr)
    if not issues:
        print("no candidate issues")
    for issue in issues:
        print(f"{issue.identifier}\t{issue.state} ({issue.state_type})\t{issue.title}")
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_workflow(parser)
    add_json(parser)


COMMAND = Command(
    name="issues",
    description="Ask the workflow's dispatch tracker for the issues it would hand out now, and list them.",
    examples=("lorenz issues", "lorenz issues --json"),
    env=WORKFLOW_ENV,
    arguments=_arguments,
    run=run,
)
