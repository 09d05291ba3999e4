"""What the ``lorenz`` commands stand on: plugins named on the command line (``-p``, ``--plugins-dir``),
the workspace of a workflow, and redacted warnings."""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lorenz.plugins.discovery import DISABLE_PLUGINS_ENV, LOAD_PLUGINS_ENV
from lorenz.plugins.paths import PluginImportError, import_plugins_dir
from lorenz.plugins.paths import import_plugin as import_module
from lorenz.redact import redact_text
from lorenz.results import error_message
from lorenz.settings.suggest import did_you_mean
from lorenz.workspace import open_workspace

from .output import UsageError, paint

__all__ = [
    "STARTING_WAIT_SECONDS",
    "allow_list_note",
    "known_pack_hint",
    "load_plugin_modules",
    "open_for_command",
    "show_traceback",
    "until_started",
    "warn",
]


def import_plugin(name: str) -> object:
    """``-p NAME``: a module name, or the path of a ``.py`` file or package directory."""
    try:
        return import_module(name)
    except PluginImportError as exc:
        raise UsageError(str(exc)) from exc


def load_plugin_modules(args: argparse.Namespace) -> list[object]:
    """The ``-p`` modules and every ``.py`` file of each ``--plugins-dir``, noting a ``-p`` module that
    is an installed plugin already (discovery takes that one once, from its distribution)."""
    plugins = [import_plugin(name) for name in args.plugin]
    if plugins:
        from .distributions import plugin_owner  # reads every distribution's metadata: only for -p

        for name, module in zip(args.plugin, plugins, strict=True):
            owner = plugin_owner(getattr(module, "__name__", ""))
            if owner is not None:
                warn(f"-p {name}: already installed ({owner.label}); using the installed plugin")
    for folder in args.plugins_dir:
        try:
            plugins += import_plugins_dir(Path(folder))
        except Exception as exc:
            raise UsageError(f"--plugins-dir: {exc}") from exc
    return plugins


def allow_list_note() -> str:
    """Why a plugin may seem missing: ``LORENZ_LOAD_PLUGINS`` limits which distributions load."""
    notes = []
    value = os.environ.get(LOAD_PLUGINS_ENV)
    if value is not None:
        notes.append(f" ({LOAD_PLUGINS_ENV}={value!r} limits which plugins load)")
    denied = os.environ.get(DISABLE_PLUGINS_ENV)
    if denied:
        notes.append(f" ({DISABLE_PLUGINS_ENV}={denied!r} leaves those distributions out)")
    return "".join(notes)


def known_pack_hint(pack: str, discovery: Any) -> str:
    """After ``no installed pack is named X``: the closest pack name, the installed ones, and why one
    may be missing (a plugin that failed, ``LORENZ_LOAD_PLUGINS`` / ``LORENZ_DISABLE_PLUGINS``)."""
    names = discovery.tools.names()
    failure = discovery.failure_for_pack(pack)
    if failure is not None:
        return f": plugin {failure.name} ({failure.origin}) failed to load: {failure.error}"
    installed = f" (installed packs: {', '.join(names) or 'none'})"
    return f"{did_you_mean(pack, names)}{installed}{allow_list_note()}"


def open_for_command(args: argparse.Namespace, workflow: str | None, *, listing: bool = False) -> Any:
    plugins = load_plugin_modules(args)
    try:
        workspace = open_workspace(workflow, plugins=plugins, listing=listing)
    except Exception as exc:  # ConfigError, RegistryError, MountError, and whatever a pack raises
        text = str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {error_message(exc)}"
        text = " ".join(redact_text(text).split())
        if any(hint in text for hint in ("unsupported tracker.kind", "unsupported tool pack", "embedded default")):
            text += allow_list_note()
        raise UsageError(text) from exc
    # The pool's own exit hook holds it weakly: a command's workspace is gone by then, and a
    # sandboxed pack's temporary directory would outlive it.
    atexit.register(workspace.close)
    for failure in workspace.discovery.failures:
        warn(f"warning: plugin {failure.name} ({failure.origin}) failed to load: {failure.error}")
        show_traceback(args, failure.traceback)
    for warning in workspace.settings.warnings:
        warn(f"warning: {warning}")
    for pack_failure in workspace.mounted.failures:
        warn(pack_failure.error)
        show_traceback(args, pack_failure.traceback)
    if workspace.embedded_default:
        print(
            f"lorenz: no WORKFLOW.md in {Path.cwd()}; using the embedded default (local board at .lorenz/local)",
            file=sys.stderr,
        )
    return workspace


#: How long a command waits, beyond mounting's own wait, for packs still starting (an MCP server
#: that has neither listed its tools nor failed yet) before it answers with what is mounted.
STARTING_WAIT_SECONDS = 30.0


def until_started(workspace: Any, enough: Callable[[Any], bool] = lambda workspace: False) -> Any:
    """``workspace``, mounted again as its packs still starting start or fail, until none is (or
    :data:`STARTING_WAIT_SECONDS` passed, or ``enough`` of the remounted workspace is true): a server
    slower to start than mounting waits for (a cold ``npx``, a loaded machine) is not one without
    tools. The packs are left attached: detaching the last claim on a server stops it, and the
    command is about to use it."""
    settings, packs = workspace.settings, workspace.packs()
    if not any(callable(getattr(pack, "starting", None)) for pack in packs):
        return workspace  # none can be starting: the mount is final
    import threading
    import time

    from attrs import evolve

    from lorenz.mounting.lifecycle import attach_packs, packs_starting

    changed = threading.Event()  # a pack's tools changed since the mount, or its start ended
    # Attached before anything is asked: a pack whose tools changed since the mount says so at
    # once, so a listing that lands just as the packs are asked is not missed.
    attach_packs(packs, settings, changed.set)
    deadline = time.monotonic() + STARTING_WAIT_SECONDS
    # Asked in this order: a pack that says it has started has told of its new tools by then.
    while packs_starting(packs, settings) or changed.is_set():
        if not changed.wait(max(0.0, deadline - time.monotonic())):
            break
        changed.clear()
        workspace = evolve(workspace)  # the same packs (their servers kept), mounted afresh
        if enough(workspace):
            break
    return workspace


def warn(message: str) -> None:
    """One redacted line on stderr (a plugin's message may span lines or quote a secret)."""
    print(f"{paint('lorenz:', 'yellow', sys.stderr)} {' '.join(redact_text(message).split())}", file=sys.stderr)


def show_traceback(args: argparse.Namespace, text: str | None, stream: Any = None) -> None:
    """With ``-v``, an (already redacted) traceback, indented under the line it explains."""
    if args.verbose and text:
        print(textwrap.indent(text.rstrip(), "    "), file=sys.stderr if stream is None else stream)
