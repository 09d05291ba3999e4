"""``lorenz new-pack``: write a new tool pack project from a template."""

from __future__ import annotations

import argparse
from pathlib import Path

from lorenz.cli.command import Command
from lorenz.cli.output import UsageError, counted

__all__ = ["COMMAND"]


def run(args: argparse.Namespace) -> int:
    from lorenz.authoring.scaffold import new_pack

    try:
        written = new_pack(args.name, Path(args.dir) if args.dir else None, tracker=args.tracker)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from exc
    root = written[0].parent
    print(f"created {root} ({counted(len(written), 'file')})")
    print(f"next: cd {root} && pip install -e '.[test]' && pytest && lorenz lint . && lorenz plugins")
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="pack name: a lowercase Python identifier; tools are prefixed NAME_")
    parser.add_argument("--dir", help="project directory (default: ./lorenz-NAME)")
    parser.add_argument("--tracker", action="store_true", help="also write a tracker that mounts the pack")


COMMAND = Command(
    name="new-pack",
    description="Write a complete pack project, its own distribution: typed tools, tests, and the entry point that "
    "makes Lorenz find it once installed.",
    examples=("lorenz new-pack acme", "lorenz new-pack acme_crm --dir ~/src/lorenz-acme-crm --tracker"),
    arguments=_arguments,
    run=run,
    brief=True,
)
