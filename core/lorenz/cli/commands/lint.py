"""``lorenz lint``: check tool packs against the pack contract."""

from __future__ import annotations

import argparse

from lorenz.authoring.lint import lint_discovery, lint_path
from lorenz.cli.command import PLUGINS_ENV, Command, add_json
from lorenz.cli.output import UsageError, counted, json_object, print_json
from lorenz.cli.workspace import load_plugin_modules
from lorenz.plugins.discovery import discover

__all__ = ["COMMAND"]


def run(args: argparse.Namespace) -> int:
    try:
        report = (
            lint_path(args.path)
            if args.path
            else lint_discovery(discover(plugins=load_plugin_modules(args), unimported=True))
        )
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
            f"lorenz lint: {counted(len(report.packs), 'pack')}, {counted(tools, 'tool')}: "
            f"{counted(len(report.errors), 'error')}, {counted(len(report.warnings), 'warning')}"
        )
    return 1 if report.errors else 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    add_json(parser)
    parser.add_argument(
        "path", nargs="?", help="a project or package folder, .py file, module or built wheel (default: installed)"
    )


COMMAND = Command(
    name="lint",
    description="Check the installed packs, or the one at PATH (a project directory, a package, a .py file, a "
    "module name or a built .whl), against the pack contract; exit 1 on an error.",
    examples=(
        "lorenz lint",
        "lorenz lint ./lorenz-acme",
        "lorenz lint lorenz_acme/plugin.py --json",
        "lorenz lint dist/lorenz_acme-0.1.0-py3-none-any.whl",
    ),
    env=PLUGINS_ENV,
    arguments=_arguments,
    run=run,
    brief=True,
)
