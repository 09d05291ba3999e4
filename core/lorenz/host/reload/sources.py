"""Noticing that a mounted pack's source was edited while ``lorenz serve`` runs.

An edit to an editable install (``pip install -e``, PEP 610's ``direct_url.json`` says
``editable``) runs no pip: neither ``sys.path`` nor the distribution's ``RECORD`` changes, so
:mod:`.installed` cannot tell. For each mounted pack of an editable distribution, the ``.py`` files
under the modules its entry points name are stat'ed, at most once per :data:`LOOK_EVERY_SECONDS`.
A plain install changes only through pip, which :mod:`.rediscover` already sees.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from lorenz.hookspecs import ENTRY_POINT_GROUP

__all__ = ["SourceWatch", "editable_roots"]

#: How often the watched source files are looked at, at most.
LOOK_EVERY_SECONDS = 1.0

#: ``(path, mtime_ns, size)`` of every source file of one pack.
Signature = tuple[tuple[str, int, int], ...]


def editable_roots(name: str) -> tuple[Path, ...]:
    """The package directories (or module files) of distribution ``name`` when it is an editable
    install, else ``()``: the top-level modules its ``lorenz.tool_packs`` entry points name."""
    try:
        dist = distribution(name)
    except (PackageNotFoundError, ValueError):
        return ()
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return ()
    if not (
        isinstance(direct, dict) and isinstance(direct.get("dir_info"), dict) and direct["dir_info"].get("editable")
    ):
        return ()
    roots: list[Path] = []
    for entry in dist.entry_points:
        if entry.group != ENTRY_POINT_GROUP:
            continue
        top = entry.value.split(":")[0].split(".")[0].strip()
        try:
            spec = importlib.util.find_spec(top)  # a top-level name: nothing is imported
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        if spec.submodule_search_locations:
            roots += (Path(location) for location in spec.submodule_search_locations)
        elif spec.origin:
            roots.append(Path(spec.origin))
    return tuple(dict.fromkeys(roots))


def _signature(roots: Iterable[Path]) -> Signature:
    files: list[tuple[str, int, int]] = []
    for root in roots:
        paths = [str(root)] if root.suffix == ".py" else _python_files(root)
        for path in paths:
            try:
                stat = os.stat(path)
            except OSError:
                continue  # removed since listed: its absence changes the signature
            files.append((path, stat.st_mtime_ns, stat.st_size))
    return tuple(sorted(files))


def _python_files(root: Path) -> list[str]:
    found: list[str] = []
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = [name for name in subdirectories if name != "__pycache__" and not name.startswith(".")]
        found += (os.path.join(directory, name) for name in names if name.endswith(".py"))
    return found


def _imported(roots: Iterable[Path]) -> tuple[int, ...]:
    """The identities of the modules loaded here from under ``roots``: another import (a reinstall
    rediscovery imported afresh) gives others."""
    prefixes = tuple(str(root) for root in roots)
    files = ((module, getattr(module, "__file__", None)) for module in list(sys.modules.values()))
    return tuple(sorted(id(module) for module, file in files if isinstance(file, str) and file.startswith(prefixes)))


class SourceWatch:
    """The source files of the watched packs, and which changed since they were last looked at."""

    def __init__(self, *, every: float = LOOK_EVERY_SECONDS) -> None:
        self._every = every
        self._next_look = time.monotonic() + every
        #: ``{pack: (roots, the modules imported from them, signature)}``; a pack no longer mounted
        #: stays, so an edit made while it was not is still seen when it is mounted again.
        self._known: dict[str, tuple[tuple[Path, ...], tuple[int, ...], Signature]] = {}
        self._watched: frozenset[str] = frozenset()

    def watch(self, roots: Mapping[str, tuple[Path, ...]]) -> None:
        """Look at these packs' sources (``{pack: roots}``) from now on; a pack seen before keeps
        the version it was last looked at."""
        for pack, paths in roots.items():
            known = self._known.get(pack)
            if known is None or known[0] != paths:
                self._known[pack] = (paths, _imported(paths), _signature(paths))
        self._watched = frozenset(roots)

    def due(self) -> bool:
        """Whether a look is due (one per :data:`LOOK_EVERY_SECONDS`); cheap, for every request."""
        if not self._watched or time.monotonic() < self._next_look:
            return False
        self._next_look = time.monotonic() + self._every
        return True

    def look(self) -> tuple[frozenset[str], frozenset[str]]:
        """``(edited, imported afresh)``: the watched packs whose sources changed since the last
        look, and those whose modules were imported again meanwhile (they serve their sources as
        they are now). Both are taken as seen."""
        edited, fresh = set(), set()
        for pack in self._watched:
            roots, modules, signature = self._known[pack]
            now_modules, now_signature = _imported(roots), _signature(roots)
            if now_modules != modules:
                fresh.add(pack)
            elif now_signature != signature:
                edited.add(pack)
            self._known[pack] = (roots, now_modules, now_signature)
        return frozenset(edited), frozenset(fresh)
