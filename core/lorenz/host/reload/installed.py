"""Noticing that the set of installed distributions changed (``pip install``/``uninstall`` while
``lorenz serve`` runs), cheaply enough to look often.

``pip`` adds or removes a ``*.dist-info`` directory in a ``sys.path`` directory, which changes that
directory's mtime: one ``stat`` per ``sys.path`` entry tells. Editable installs point at their
source tree, so a new entry point in an edited ``pyproject.toml`` only shows after a reinstall,
as with any entry-point host.
"""

from __future__ import annotations

import os
import sys
import time

__all__ = ["InstalledWatch"]

#: How often the environment is looked at, at most (each look is one stat per sys.path entry).
LOOK_EVERY_SECONDS = 1.0

Signature = tuple[tuple[str, int], ...]


def environment_signature() -> Signature:
    """``(directory, mtime)`` for every directory on ``sys.path`` but the working directory
    (``python -m`` puts it first): pip never installs there, and a call log or any other file
    written next to WORKFLOW.md changes its mtime."""
    entries = []
    try:
        cwd = os.getcwd()
    except OSError:  # the working directory was removed
        cwd = ""
    for entry in sys.path:
        if entry in ("", ".", cwd):
            continue
        try:
            stat = os.stat(entry or ".")
        except OSError:
            continue
        entries.append((entry, stat.st_mtime_ns))
    return tuple(entries)


class InstalledWatch:
    """Tells, at most once per :data:`LOOK_EVERY_SECONDS`, whether distributions were installed or
    removed since :meth:`mark`."""

    def __init__(self, *, every: float = LOOK_EVERY_SECONDS) -> None:
        self._every = every
        self._signature = environment_signature()
        self._next_look = time.monotonic() + every

    def changed(self) -> bool:
        now = time.monotonic()
        if now < self._next_look:
            return False
        self._next_look = now + self._every
        return environment_signature() != self._signature

    def mark(self) -> None:
        """The environment as it is now is the one discovery last saw."""
        self._signature = environment_signature()
