"""``lorenz install``: pip install packs into the interpreter that runs ``lorenz`` (a pipx venv included),
as ``llm install`` and ``datasette install`` manage theirs, then say what each new plugin registered.

What a new distribution registered is read by a fresh ``lorenz plugins --json``: an editable install only
reaches ``sys.path`` through a ``.pth`` file, which this process never read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, NoReturn

from lorenz.cli.command import PIP_ENV, PLUGINS_ENV, Command
from lorenz.cli.distributions import Installed, installed, left_out, run_pip
from lorenz.cli.output import UsageError, progress
from lorenz.cli.workflow_edit import mounted_packs
from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.mounting.inventory import mount_instruction
from lorenz.plugins.checks import normalize_distribution
from lorenz.words import plural
from lorenz.workspace import find_workflow

from .plugins import describe_declared

__all__ = ["COMMAND"]


def _plugin_report() -> dict[str, Any]:
    """``lorenz plugins --json`` of a fresh interpreter (exit 1 only means some plugin failed)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "lorenz", "plugins", "--json"], capture_output=True, text=True, timeout=300, check=False
    )
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        return {}
    return report


def _of(entries: Any, key: str) -> list[dict[str, Any]]:
    return [entry for entry in entries or () if normalize_distribution(entry.get("distribution") or "") == key]


def _registered(dist: Installed, report: dict[str, Any]) -> tuple[str, list[str]]:
    """What ``dist`` registered, as one line, and its pack names."""
    key = normalize_distribution(dist.name)
    mine = _of(report.get("plugins"), key)
    packs = [name for plugin in mine for name in plugin.get("packs", ())]
    trackers = [kind for plugin in mine for kind in plugin.get("trackers", ())]
    parts = [f"{plural(len(packs), 'pack')} {', '.join(packs)}"] if packs else []
    parts += [f"{plural(len(trackers), 'tracker')} {', '.join(trackers)}"] if trackers else []
    parts += [f"FAILED {' '.join(str(f.get('error')).split())}" for f in _of(report.get("failures"), key)]
    if not parts:
        reason = left_out(key)
        parts.append(f"not loaded ({reason})" if reason else "registered nothing")
    return f"installed {dist.label}: {'; '.join(parts)}", packs


def _not_a_pack(changed: list[Installed], before: dict[str, Installed], *, verbose: bool) -> NoReturn:
    """Nothing installed is a Lorenz pack: what pip newly installed is uninstalled again, and the
    command fails (a library a pack needs comes with that pack, or from pip itself)."""
    new = [dist for dist in changed if normalize_distribution(dist.name) not in before]
    if new:
        run_pip("uninstall", "-y", *[dist.name for dist in new], verbose=verbose)
    labels = ", ".join(dist.label for dist in changed)
    undone = f"; uninstalled {', '.join(dist.label for dist in new)} again" if new else ""
    msg = (
        f"{labels}: not a Lorenz pack (no {ENTRY_POINT_GROUP} entry point){undone} "
        "(pip install it to install a library)"
    )
    raise UsageError(msg)


def run(args: argparse.Namespace) -> int:
    """pip install into this interpreter, then say what each new or changed plugin registered."""
    if not args.packages and not args.editable:
        msg = "name at least one PACKAGE (a name, a path, a wheel) or -e PATH"
        raise UsageError(msg)
    before = installed()
    options = ["--upgrade"] if args.upgrade else []
    editable = [arg for path in args.editable for arg in ("-e", path)]
    code = run_pip("install", *options, *editable, *args.packages, verbose=args.verbose)
    if code != 0:
        raise UsageError(f"pip install failed (exit {code}); nothing else was changed by lorenz")
    after = installed()
    changed = [dist for key, dist in after.items() if before.get(key) != dist]
    plugins = [dist for dist in changed if dist.entry_points]
    if not changed:
        print("nothing new installed")
        return 0
    if not plugins:
        _not_a_pack(changed, before, verbose=args.verbose)
    with progress("reading what the new plugins registered"):
        report = _plugin_report()
    packs: list[str] = []
    for dist in plugins:
        line, new_packs = _registered(dist, report)
        was = before.get(normalize_distribution(dist.name))
        print(line.replace(dist.label, f"{dist.label} ({_change(was, dist)})", 1) if was else line)
        packs += new_packs
    if packs and not _consented(packs, report, args):
        names = [dist.name for dist in plugins]
        run_pip("uninstall", "-y", *names)
        print(f"uninstalled {', '.join(names)}: their permissions were not accepted")
        return 1
    if packs:
        _mount_step(packs)
    return 0


def _change(was: Installed, now: Installed) -> str:
    """``was 0.1.0``, or what changed when the version did not (``now editable``)."""
    if was.version != now.version or was.editable == now.editable:
        return f"was {was.version}"
    return "now editable" if now.editable else "no longer editable"


def _mount_step(packs: list[str]) -> None:
    """How to mount the new packs, or that the workflow mounts them already (an upgrade)."""
    from pathlib import Path

    workflow = find_workflow(None, cwd=Path.cwd(), env=os.environ)
    mounted = mounted_packs(workflow) if workflow is not None else set()
    unmounted = [pack for pack in packs if pack not in mounted]
    if workflow is not None and len(unmounted) < len(packs):
        already = [pack for pack in packs if pack in mounted]
        print(f"{workflow.name} mounts {', '.join(already)} already")
    if unmounted:
        print(
            f"to mount {'it' if len(unmounted) == 1 else 'one'}, {mount_instruction(unmounted[0], workflow)} "
            "(lorenz tools --all lists every tool)"
        )


def _consented(packs: list[str], report: dict[str, Any], args: argparse.Namespace) -> bool:
    """Print what each new pack asks for when sandboxed; on a terminal without ``--yes``, ask. A
    script (no terminal) proceeds: permissions bind when ``server.sandboxed_packs`` runs the pack,
    not at install, and an unanswerable question would only break it."""
    declared = report.get("permissions") or {}
    for pack in packs:
        print(f"  {pack} requests (when sandboxed): {describe_declared(declared.get(pack))}")
    if args.yes or not sys.stdin.isatty():
        return True
    print(f"Keep {', '.join(packs)} with these permissions? [y/N] ", end="", file=sys.stderr, flush=True)
    return sys.stdin.readline().strip().lower() in ("y", "yes")


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("packages", nargs="*", metavar="PACKAGE", help="a distribution name, a path or a wheel")
    parser.add_argument("-e", "--editable", action="append", default=[], metavar="PATH", help="install PATH editable")
    parser.add_argument("-U", "--upgrade", action="store_true", help="upgrade to the newest version")
    parser.add_argument(
        "-y", "--yes", action="store_true", help="accept the new packs' requested permissions without asking"
    )


COMMAND = Command(
    name="install",
    description="pip install packages (names, paths, wheels, -e PATH) into the interpreter that runs lorenz (a pipx "
    "venv included), then list what each new plugin registered (one line each; pip's own output with -v). A "
    "distribution that is no Lorenz pack is uninstalled again. A running lorenz serve picks the change up.",
    examples=(
        "lorenz install lorenz-acme",
        "lorenz install dist/lorenz_acme-0.1.0-py3-none-any.whl",
        "lorenz install -e .",
        "lorenz install --yes lorenz-acme",
    ),
    env=(*PIP_ENV, *PLUGINS_ENV),
    arguments=_arguments,
    run=run,
)
