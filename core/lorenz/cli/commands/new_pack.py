"""``lorenz new-pack``: write a new tool pack project from a template."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lorenz.authoring.openapi import Selection, TooManyOperations, new_openapi_pack, update_openapi_pack
from lorenz.authoring.scaffold import new_pack
from lorenz.authoring.scaffold.wheelhouse import write_core_wheel
from lorenz.cli.command import Command
from lorenz.cli.output import UsageError, counted

__all__ = ["COMMAND"]


def run(args: argparse.Namespace) -> int:
    try:
        if args.from_openapi:
            return _from_openapi(args)
        if args.update:
            raise UsageError("--update regenerates a pack made with --from-openapi: give --from-openapi SPEC")
        written = new_pack(args.name, Path(args.dir) if args.dir else None, tracker=args.tracker)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from exc
    _created(written)
    return 0


def _created(written: list[Path]) -> None:
    root = written[0].parent
    wheel = write_core_wheel(root)  # the core devcheck installs, wherever it runs
    print(f"created {root} ({counted(len(written) + 1, 'file')}; {wheel.relative_to(root)}: this lorenz-core)")
    print(f"next: cd {root} && pip install -e '.[test]' && pytest && lorenz lint . && lorenz plugins")


def _from_openapi(args: argparse.Namespace) -> int:
    from attrs import evolve

    if args.tracker:
        raise UsageError("--tracker and --from-openapi do not go together")

    def listed(values: list[str] | None) -> list[str]:
        return [item.strip() for value in values or () for item in value.split(",") if item.strip()]

    selection = Selection(
        include=listed(args.include),
        exclude=listed(args.exclude),
        max_tools=args.max_tools,
        deprecated=args.deprecated,
    )
    directory = Path(args.dir) if args.dir else None
    if not args.update:
        try:
            written = new_openapi_pack(args.name, args.from_openapi, directory, selection)
        except TooManyOperations as exc:
            if not sys.stdin.isatty():  # a script gets the list and chooses with --include
                raise
            print(exc, file=sys.stderr)
            print("Operations to generate (ids, tags or /path/globs, comma-separated): ", end="", file=sys.stderr)
            chosen = listed([sys.stdin.readline()])
            if not chosen:
                raise UsageError("nothing chosen: nothing written") from None
            written = new_openapi_pack(args.name, args.from_openapi, directory, evolve(selection, include=chosen))
        _created(written)
        return 0
    update = update_openapi_pack(args.name, args.from_openapi, directory, selection)
    changes = [
        f"{label} {', '.join(tools)}"
        for label, tools in (("added", update.added), ("removed", update.removed), ("changed", update.changed))
        if tools
    ]
    print(f"updated {update.path}: {'; '.join(changes) if changes else 'no tool changed'}")
    return 0


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="pack name: a lowercase Python identifier; tools are prefixed NAME_")
    parser.add_argument("--dir", help="project directory (default: ./lorenz-NAME)")
    parser.add_argument("--tracker", action="store_true", help="also write a tracker that mounts the pack")
    openapi = parser.add_argument_group("from an OpenAPI document (needs lorenz-core[openapi])")
    openapi.add_argument(
        "--from-openapi", metavar="SPEC", help="generate the tools from an OpenAPI 3.0/3.1 file or URL"
    )
    openapi.add_argument("--include", action="append", metavar="IDS", help="operation ids, tags or /path/globs to keep")
    openapi.add_argument("--exclude", action="append", metavar="IDS", help="operation ids, tags or /path/globs to drop")
    openapi.add_argument("--max-tools", type=int, metavar="N", help="refuse a selection of more than N operations")
    openapi.add_argument("--deprecated", action="store_true", help="also generate deprecated operations")
    openapi.add_argument(
        "--update", action="store_true", help="regenerate generated.py of an existing project, keeping your files"
    )


COMMAND = Command(
    name="new-pack",
    description="Write a complete pack project, its own distribution: typed tools, tests, and the entry point that "
    "makes Lorenz find it once installed.",
    examples=(
        "lorenz new-pack acme",
        "lorenz new-pack acme_crm --dir ~/src/lorenz-acme-crm --tracker",
        "lorenz new-pack petstore --from-openapi petstore.yaml --include pets",
    ),
    arguments=_arguments,
    run=run,
    brief=True,
)
