"""``lorenz uninstall``: pip uninstall distributions from the interpreter that runs ``lorenz``, after
asking; never the core itself."""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from lorenz.cli.command import PIP_ENV, Command
from lorenz.cli.distributions import Installed, installed, run_pip
from lorenz.cli.output import UsageError
from lorenz.plugins.checks import normalize_distribution
from lorenz.plugins.discovery import discover
from lorenz.settings.errors import ConfigError
from lorenz.settings.suggest import quoted
from lorenz.settings.workflow import display_path, load_workflow, workflow_path

__all__ = ["COMMAND"]

CORE = "lorenz-core"


def run(args: argparse.Namespace) -> int:
    """pip uninstall from this interpreter, after a confirmation (unless ``-y``); never the core itself."""
    found = installed()
    chosen: list[Installed] = []
    for name in args.packages:
        key = normalize_distribution(name)
        if key == CORE:
            msg = (
                f"refusing to uninstall {CORE}: it is the lorenz command itself "
                f"(remove it with pip uninstall {CORE}, or pipx uninstall {CORE})"
            )
            raise UsageError(msg)
        if key not in found:
            plugins = [dist.name for dist in found.values() if dist.entry_points]
            raise UsageError(f"{name} is not installed{_near_miss(name, plugins)}")
        chosen.append(found[key])
    if not args.yes:
        print(f"about to uninstall: {', '.join(dist.label for dist in chosen)}")
        if not _confirmed():
            raise UsageError("nothing uninstalled (answer y, or pass -y)")
    packs = _packs_of(chosen) if any(dist.entry_points for dist in chosen) else []
    code = run_pip("uninstall", "-y", *[dist.name for dist in chosen], verbose=args.verbose)
    if code != 0:
        raise UsageError(f"pip uninstall failed (exit {code})")
    left = installed()
    kept = [dist.label for dist in chosen if normalize_distribution(dist.name) in left]
    if kept:  # pip leaves a distribution outside this environment alone, and says so above
        raise UsageError(f"still installed: {', '.join(kept)}")
    print(f"uninstalled {', '.join(dist.label for dist in chosen)}")
    mounted = _still_mounted(packs)
    if mounted:
        name, names = mounted
        print(
            f"{name} still mounts {', '.join(names)}: remove tools.{names[0]} from it "
            "(a running lorenz serve serves without it and reports it on /healthz)"
        )
    return 0


def _near_miss(name: str, candidates: list[str]) -> str:
    """A suggestion only for a name close to one installed: every pack's name starts with
    ``lorenz-``, which alone must not make ``lorenz-weather`` look like ``lorenz-local``."""

    def short(value: str) -> str:
        return normalize_distribution(value).removeprefix("lorenz-")

    by_short = {short(candidate): candidate for candidate in candidates}
    matches = difflib.get_close_matches(short(name), list(by_short), n=1, cutoff=0.6)
    return f" (did you mean {quoted(by_short[matches[0]])}?)" if matches else ""


def _packs_of(chosen: list[Installed]) -> list[str]:
    """The packs the chosen distributions register (before pip runs; a third-party plugin is
    surveyed in a confined child, never imported here)."""
    keys = {normalize_distribution(dist.name) for dist in chosen}
    discovery = discover(unimported=True)
    return [
        pack
        for info in discovery.plugins
        if normalize_distribution(info.distribution or "") in keys
        for pack in info.packs
    ]


def _still_mounted(packs: list[str]) -> tuple[str, list[str]] | None:
    """The workflow of this directory (``WORKFLOW.md`` or ``$LORENZ_WORKFLOW``) and the given packs
    it still mounts, if any."""
    if not packs:
        return None
    path = workflow_path(Path.cwd(), os.environ)
    if not path.exists():
        return None
    try:
        tools = load_workflow(path).config.get("tools")
    except ConfigError:
        return None  # a workflow that does not parse: lorenz check says why
    mounted = [pack for pack in packs if isinstance(tools, dict) and pack in tools]
    return (display_path(path), mounted) if mounted else None


def _confirmed() -> bool:
    print("Proceed? [y/N] ", end="", file=sys.stderr, flush=True)
    answer = sys.stdin.readline()
    if not sys.stdin.isatty():
        print(file=sys.stderr)  # the answer was not echoed: end the prompt's line
    return answer.strip().lower() in ("y", "yes")


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("packages", nargs="+", metavar="PACKAGE", help="an installed distribution name")
    parser.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")


COMMAND = Command(
    name="uninstall",
    description="pip uninstall distributions from the interpreter that runs lorenz, after asking (unless -y). "
    "lorenz-core itself is refused. Names the packs the workflow here still mounts.",
    examples=("lorenz uninstall lorenz-acme", "lorenz uninstall -y lorenz-acme lorenz-weather"),
    env=PIP_ENV,
    arguments=_arguments,
    run=run,
)
