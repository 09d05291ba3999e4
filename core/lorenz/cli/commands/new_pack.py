"""``lorenz new-pack``: write a new tool pack project from a template."""

from __future__ import annotations

import argparse
from pathlib import Path

from lorenz.cli.output import UsageError

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    from lorenz.authoring.scaffold import new_pack

    try:
        written = new_pack(args.name, Path(args.dir) if args.dir else None, tracker=args.tracker)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from exc
    root = written[0].parent
    print(f"created {root} ({len(written)} files)")
    print(f"next: cd {root} && pip install -e '.[test]' && pytest && lorenz lint . && lorenz plugins")
    return 0
