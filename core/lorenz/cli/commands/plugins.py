"""``lorenz plugins``: every discovered plugin, what it registered, and the ones that failed to load."""

from __future__ import annotations

import argparse
import sys

from lorenz.cli.command import PLUGINS_ENV, Command, add_json
from lorenz.cli.output import json_object, print_json
from lorenz.cli.workspace import allow_list_note, load_plugin_modules, show_traceback

__all__ = ["COMMAND"]


def run(args: argparse.Namespace) -> int:
    from lorenz.plugins.discovery import discover
    from lorenz.sandbox.permissions import permissions_of

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
        if args.verbose:
            for pack in info.packs:
                declared = permissions_of(discovery.tools.get(pack))
                print(f"  {pack} permissions: {declared.describe() if declared else 'none declared'}")
    for name in discovery.disabled:
        print(f"disabled {name} (LORENZ_DISABLE_PLUGINS)")
    for failure in discovery.failures:
        print(f"FAILED {failure.name} ({failure.origin}): {' '.join(failure.error.split())}")
        show_traceback(args, failure.traceback, sys.stdout)
    if discovery.failures and not args.verbose:
        print("(lorenz plugins -v shows each failure's traceback)", file=sys.stderr)
    return code


COMMAND = Command(
    name="plugins",
    help="list discovered plugins, what they register, and failures (exit 1 if any)",
    description="Every discovered plugin distribution, its version and the packs and tracker kinds it registered, "
    "and every plugin that failed to load (exit 1 if one did).",
    examples=(
        "lorenz plugins",
        "lorenz plugins -v            # with each failure's traceback",
        "lorenz plugins --json",
    ),
    env=PLUGINS_ENV,
    arguments=add_json,
    run=run,
    brief=True,
)
