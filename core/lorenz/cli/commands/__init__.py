"""The ``lorenz`` commands: thin functions over the library, one per subcommand (:data:`COMMANDS`).

:mod:`lorenz.cli` parses the command line and runs them. Output manners live in :mod:`lorenz.cli_output`,
the parser and help texts in :mod:`lorenz.cli_parser`, ``-p`` and the workspace in
:mod:`lorenz.cli_workspace`, ``install``/``uninstall``/``--version`` in :mod:`lorenz.cli_install`,
``calls``/``skills`` in :mod:`lorenz.cli_extras`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lorenz.cli.output import UsageError, did_you_mean, json_object, print_json, progress
from lorenz.cli.workspace import allow_list_note, load_plugin_modules, show_traceback, warn
from lorenz.cli.workspace import open_for_command as _workspace

from .calls import cmd_calls, cmd_skills
from .install import cmd_install, cmd_uninstall

__all__ = ["COMMANDS"]


# -- commands ---------------------------------------------------------------


def cmd_plugins(args: argparse.Namespace) -> int:
    from lorenz.plugins import discover

    discovery = discover(plugins=load_plugin_modules(args))
    code = 1 if discovery.failures else 0
    if args.json:
        print_json(
            json_object(
                plugins=[info.to_dict() for info in discovery.plugins],
                failures=[failure.to_dict() for failure in discovery.failures],
                disabled=list(discovery.disabled),
            )
        )
        return code
    if not discovery.plugins and not discovery.failures:
        note = allow_list_note()
        print(f"no plugins loaded{note}" if note else "no plugins installed (lorenz install a lorenz-* distribution)")
    for info in discovery.plugins:
        origin = f"{info.distribution} {info.version}" if info.distribution else "in-process"
        print(
            f"{info.name} ({origin}): trackers: {', '.join(info.trackers) or '-'}; "
            f"packs: {', '.join(info.packs) or '-'}"
        )
    for name in discovery.disabled:
        print(f"disabled {name} (LORENZ_DISABLE_PLUGINS)")
    for failure in discovery.failures:
        print(f"FAILED {failure.name} ({failure.origin}): {' '.join(failure.error.split())}")
        show_traceback(args, failure.traceback, sys.stdout)
    if discovery.failures and not args.verbose:
        print("(lorenz plugins -v shows each failure's traceback)", file=sys.stderr)
    return code


def _check_object(workspace: Any) -> dict[str, Any]:
    """``check --json``: what the workflow mounts, once it validated."""
    path = workspace.settings.workflow_path
    return json_object(
        workflow=None if path is None else str(path),
        embeddedDefault=workspace.embedded_default,
        tracker=workspace.settings.tracker.kind,
        packs=workspace.pack_names(),
        tools=[spec.name for spec in workspace.tool_specs()],
    )


def cmd_check(args: argparse.Namespace) -> int:
    from lorenz.redact import redact_text
    from lorenz.settings import check_pack_settings

    workspace = _workspace(args, args.workflow)
    settings = workspace.settings
    where = settings.workflow_path or "embedded default"
    specs = workspace.tool_specs()
    if workspace.mounted.failures:
        broken = ", ".join(failure.pack for failure in workspace.mounted.failures)
        raise UsageError(f"{where}: the workflow mounts broken packs: {broken}")
    problems = check_pack_settings(settings, workspace.packs())
    if problems:
        raise UsageError(redact_text(f"{where}: {'; '.join(problems)}", settings.secrets))
    if args.json:
        print_json(_check_object(workspace))
        return 0
    print(
        f"ok: {where}: tracker {settings.tracker.kind or '-'}, packs {', '.join(workspace.pack_names()) or '-'} "
        f"({len(specs)} tools)"
    )
    return 0


def _summary(description: str) -> str:
    return description.strip().splitlines()[0] if description.strip() else ""


def cmd_tools(args: argparse.Namespace) -> int:
    from lorenz.inventory import installed_tools, mount_instruction

    workspace = _workspace(args, args.workflow)
    inventory = installed_tools(workspace.discovery, workspace.settings, workspace.mounted, unmounted=args.all)
    failures = [*workspace.mounted.failures, *inventory.failures]
    code = 1 if workspace.mounted.failures else 0
    if args.json:
        path = workspace.settings.workflow_path
        print_json(
            json_object(
                workflow=None if path is None else str(path),
                tools=[tool.to_dict() for tool in inventory.tools],
                failures=[failure.to_dict() for failure in failures],
            )
        )
        return code
    tools = inventory.tools
    width = max((len(tool.name) for tool in tools), default=0)
    if not args.all:
        for tool in tools:
            print(f"{tool.name.ljust(width)}  [{tool.pack}]  {_summary(tool.spec.description)}")
        return code
    rows = [(tool.name, tool.pack, tool.origin, "mounted" if tool.mounted else "-") for tool in tools]
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


def _split_call_args(values: Sequence[str]) -> tuple[str | None, str, str | None]:
    """``[WORKFLOW] TOOL [JSON-ARGS]``: a first value that names a file is the workflow."""
    if len(values) == 3:
        return values[0], values[1], values[2]
    if len(values) == 2:
        first = values[0]
        if first.endswith(".md") or os.path.isfile(first):
            return first, values[1], None
        return None, first, values[1]
    if len(values) == 1:
        return None, values[0], None
    msg = "usage: lorenz call [WORKFLOW] TOOL [JSON-ARGS]"
    raise UsageError(msg)


def _parse_arguments(text: str | None) -> Any:
    import json

    if text is None:
        return {}
    if text == "-":
        text = sys.stdin.read()
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"JSON-ARGS is not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        raise UsageError(msg) from exc
    if not isinstance(value, dict):
        msg = f"JSON-ARGS must be a JSON object, got {type(value).__name__}"
        raise UsageError(msg)
    return value


async def _call(workspace: Any, tool: str, arguments: Any) -> Any:
    import httpx

    from lorenz.http import DEFAULT_TIMEOUT

    async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as http:
        return await workspace.call(tool, arguments, http)


def cmd_call(args: argparse.Namespace) -> int:
    workflow, tool, raw = _split_call_args(args.values)
    arguments = _parse_arguments(raw)
    workspace = _workspace(args, workflow)
    with progress(f"running {tool}"):
        import asyncio  # ~20 ms: only the commands that run async work pay for it

        result = asyncio.run(_call(workspace, tool, arguments))
    print_json(result.to_dict())
    if not result.success and workspace.mounted.pack_of(tool.strip()) is None:
        _unknown_tool(workspace, tool.strip())
    return 0 if result.success else 1


def _unknown_tool(workspace: Any, tool: str) -> None:
    """Why ``tool`` is not there: its pack is installed but not mounted (and how to mount it), or the
    closest tool name."""
    from lorenz.inventory import mount_hint

    inventory = workspace.inventory
    found = inventory.find(tool)
    if found is not None:
        warn(mount_hint(found, workspace.settings.workflow_path))
        return
    warn(f"no installed pack declares {tool}{did_you_mean(tool, [t.name for t in inventory.tools])}")


async def _candidates(workspace: Any) -> list[Any]:
    import httpx

    from lorenz.http import DEFAULT_TIMEOUT

    async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as http:
        client = workspace.tracker_client(http=http)
        return list(await client.fetch_candidate_issues())


def cmd_issues(args: argparse.Namespace) -> int:
    from lorenz.containment import call_plugin
    from lorenz.redact import redact_text

    workspace = _workspace(args, args.workflow)
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


def cmd_serve(args: argparse.Namespace) -> int:
    import contextlib

    from lorenz.host import serve
    from lorenz.host.command import stdout_to_stderr

    if args.stdio and args.workers is not None:
        raise UsageError("--workers serves HTTP; --stdio is one process")
    # Over --stdio, stdout is the protocol stream: a plugin printing at import must not reach it.
    with stdout_to_stderr() if args.stdio else contextlib.nullcontext():
        plugins = load_plugin_modules(args)
    return serve(
        workflow=args.workflow,
        host=args.host,
        port=args.port,
        stdio=args.stdio,
        plugins=plugins,
        reload=not args.no_reload,
        workers=args.workers,
        allow_no_token=args.allow_no_token,
    )


def cmd_new_pack(args: argparse.Namespace) -> int:
    from lorenz.authoring.scaffold import new_pack

    try:
        written = new_pack(args.name, Path(args.dir) if args.dir else None, tracker=args.tracker)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from exc
    root = written[0].parent
    print(f"created {root} ({len(written)} files)")
    print(f"next: cd {root} && pip install -e '.[test]' && pytest && lorenz lint . && lorenz plugins")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from lorenz.authoring.lint import lint_discovery, lint_path
    from lorenz.plugins import discover

    try:
        report = lint_path(args.path) if args.path else lint_discovery(discover(plugins=load_plugin_modules(args)))
    except (ValueError, OSError, ImportError) as exc:
        raise UsageError(f"cannot lint {args.path or 'the installed packs'}: {exc}") from exc
    if args.path and not report.packs and not report.errors:
        msg = f"{args.path} registers no tool pack (is there a `lorenz_register_tool_packs` hookimpl?)"
        raise UsageError(msg)
    if args.json:
        print_json(json_object(**report.to_dict()))
    else:
        for diagnostic in report.diagnostics:
            print(diagnostic)
        tools = sum(len(pack["tools"]) + len(pack["disabled"]) for pack in report.packs)
        print(
            f"lorenz lint: {len(report.packs)} packs, {tools} tools: "
            f"{len(report.errors)} errors, {len(report.warnings)} warnings"
        )
    return 1 if report.errors else 0


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "plugins": cmd_plugins,
    "check": cmd_check,
    "tools": cmd_tools,
    "call": cmd_call,
    "issues": cmd_issues,
    "serve": cmd_serve,
    "new-pack": cmd_new_pack,
    "lint": cmd_lint,
    "install": cmd_install,
    "uninstall": cmd_uninstall,
    "calls": cmd_calls,
    "skills": cmd_skills,
}
