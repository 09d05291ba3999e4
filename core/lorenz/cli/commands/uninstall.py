"""``lorenz uninstall``: pip uninstall distributions from the interpreter that runs ``lorenz``, after
asking; never the core itself."""

from __future__ import annotations

import argparse
import sys

from lorenz.cli.command import PIP_ENV, Command
from lorenz.cli.distributions import Installed, installed, run_pip
from lorenz.cli.output import UsageError
from lorenz.plugins.checks import normalize_distribution
from lorenz.settings.suggest import did_you_mean

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
            raise UsageError(f"{name} is not installed{did_you_mean(name, plugins)}")
        chosen.append(found[key])
    print(f"about to uninstall: {', '.join(dist.label for dist in chosen)}")
    if not args.yes and not _confirmed():
        raise UsageError("nothing uninstalled (answer y, or pass -y)")
    code = run_pip("uninstall", "-y", *[dist.name for dist in chosen])
    if code != 0:
        raise UsageError(f"pip uninstall failed (exit {code})")
    left = installed()
    kept = [dist.label for dist in chosen if normalize_distribution(dist.name) in left]
    if kept:  # pip leaves a distribution outside this environment alone, and says so above
        raise UsageError(f"still installed: {', '.join(kept)}")
    print(f"uninstalled {', '.join(dist.label for dist in chosen)}")
    return 0


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
    help="pip uninstall packs from the environment that runs lorenz (asks first)",
    description="pip uninstall distributions from the interpreter that runs lorenz, after asking (unless -y). "
    "lorenz-core itself is refused.",
    examples=("lorenz uninstall lorenz-acme", "lorenz uninstall -y lorenz-acme lorenz-weather"),
    env=PIP_ENV,
    arguments=_arguments,
    run=run,
)
