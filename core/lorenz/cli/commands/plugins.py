"""``lorenz plugins``: every discovered plugin, what it registered, and the ones that failed to load."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from lorenz.cli.command import PLUGINS_ENV, Command, add_json
from lorenz.cli.output import json_object, print_json
from lorenz.cli.workspace import allow_list_note, load_plugin_modules, show_traceback
from lorenz.plugins.declared import depends_on_settings, permissions_of
from lorenz.plugins.discovery import discover
from lorenz.sandbox.permissions import parse_permissions

__all__ = ["COMMAND", "describe_declared"]


def _declared(pack: object) -> dict[str, Any] | None:
    """What ``pack`` declares as JSON: the permissions, ``{"dependsOnSettings": true}`` when they
    are a function of its settings, ``None`` when it declares none."""
    if depends_on_settings(pack) or getattr(pack, "permissions_depend_on_settings", False):
        return {"dependsOnSettings": True}
    declared = permissions_of(pack)
    return declared.to_dict() if declared is not None else None


def describe_declared(declared: Mapping[str, Any] | None) -> str:
    """One line for people of what :func:`_declared` gives."""
    if declared is None:
        return "none declared (sandboxed, it may reach nothing)"
    if declared.get("dependsOnSettings"):
        return "computed from its settings when it starts (lorenz check shows them)"
    return parse_permissions(declared, "permissions").describe()


def run(args: argparse.Namespace) -> int:
    discovery = discover(plugins=load_plugin_modules(args), unimported=True)
    code = 1 if discovery.failures else 0
    if args.json:
        print_json(
            json_object(
                plugins=[info.to_dict() for info in discovery.plugins],
                failures=[failure.to_dict() for failure in discovery.failures],
                disabled=list(discovery.disabled),
                permissions={pack.name: _declared(pack) for pack in discovery.tools},
            )
        )
        return code
    if not discovery.plugins and not discovery.failures:
        note = allow_list_note()
        print(f"no plugins loaded{note}" if note else "no plugins installed (lorenz install a lorenz-* distribution)")
    for info in discovery.plugins:
        origin = f"{info.distribution} {info.version}" if info.distribution else "in-process"
        more = "".join(
            f"; {label}: {', '.join(names)}"
            for label, names in (
                ("middleware", info.middleware),
                ("catalog shapers", info.catalog),
                ("call-record sinks", info.sinks),
                ("commands", info.commands),
            )
            if names
        )
        print(
            f"{info.name} ({origin}): trackers: {', '.join(info.trackers) or '-'}; "
            f"packs: {', '.join(info.packs) or '-'}{more}"
        )
        if args.verbose:
            for pack in info.packs:
                print(f"  {pack} permissions: {describe_declared(_declared(discovery.tools.get(pack)))}")
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
