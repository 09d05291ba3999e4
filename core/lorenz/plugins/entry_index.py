"""The installed plugins' entry points and what discovery reads of their distributions, remembered
between commands.

Reading them through :mod:`importlib.metadata` costs every command ~40 ms: importing it loads
``email``, ``zipfile``, ``csv`` and ``importlib.resources``, then every distribution's
``entry_points.txt`` is read and each plugin's ``METADATA`` parsed. What it found is kept under
``$XDG_CACHE_HOME/lorenz/entry-points`` (else ``~/.cache/lorenz/entry-points``) with what decides it:
the core's version, the interpreter, the import path, and the modification time of each directory on
it, of each ``*.dist-info``/``*.egg-info`` in them, and the time and size of their ``entry_points.txt``
and ``METADATA``
(installing, upgrading, removing or editing a distribution changes one of them). An import path
holding anything but directories (a zip), or an import hook that finds distributions of its own, is
read afresh every time; so is an entry that cannot be read or does not match.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import re
import stat
import sys
import zlib
from pathlib import Path
from typing import Any

from attrs import asdict, frozen

from lorenz._version import __version__

__all__ = ["PluginEntryPoint", "location", "normalize_distribution", "plugin_entry_points"]

#: The files of a distribution's metadata whose edits change what discovery reads.
_METADATA_FILES = ("entry_points.txt", "METADATA", "PKG-INFO")


@frozen
class PluginEntryPoint:
    """One entry point of ``group``, with what discovery needs of its distribution (``None`` when it
    has none); :meth:`load` imports it as :meth:`importlib.metadata.EntryPoint.load` does."""

    name: str
    module: str
    attr: str | None
    group: str
    distribution: str | None = None
    version: str | None = None
    requires: tuple[str, ...] | None = None

    def load(self) -> object:
        """The object the entry point names: its module imported, then each attribute looked up."""
        module = importlib.import_module(self.module)
        return functools.reduce(getattr, filter(None, (self.attr or "").split(".")), module)


def plugin_entry_points(group: str) -> list[PluginEntryPoint]:
    """Every entry point of ``group`` installed on the import path, as :mod:`importlib.metadata`
    finds them (one distribution per name, the first on the path)."""
    return [
        PluginEntryPoint(**{**entry, "requires": None if entry["requires"] is None else tuple(entry["requires"])})
        for entry in _index(group)["entries"]
    ]


def location(distribution: str) -> str | None:
    """The real path of the directory holding ``distribution``'s metadata, ``None`` if it is not
    installed. Remembered with the index for the core and each plugin's distribution: the index this
    process last read (discovery reads it just before it asks), else the index as it is now."""
    known = (_LAST.get(_GROUP) or _index(_GROUP))["locations"]
    if distribution in known:
        found: str | None = known[distribution]
        return found
    return _read_location(distribution)


_GROUP = "lorenz.tool_packs"
_CORE = "lorenz-core"


#: The last index each group was read as, in this process: ``{group: {"key": ..., **index}}``.
_LAST: dict[str, dict[str, Any]] = {}


def _index(group: str) -> dict[str, Any]:
    key = _fingerprint()
    last = _LAST.get(group)
    if key is not None and last is not None and last["key"] == key:
        return last
    path = None if key is None else _cache_dir() / f"{group}-{zlib.crc32(json.dumps(key[:3]).encode()):08x}.json"
    if path is not None:
        with contextlib.suppress(OSError, ValueError):
            kept = json.loads(path.read_bytes())
            if isinstance(kept, dict) and kept.get("key") == key:
                _LAST[group] = kept
                return kept
    index = {"key": key, **_read(group)}
    if path is not None:
        _store(path, index)
        _LAST[group] = json.loads(json.dumps(index))  # as a later read finds it: lists, not tuples
    return index


def _read(group: str) -> dict[str, Any]:
    """The index read through :mod:`importlib.metadata`."""
    from importlib.metadata import entry_points

    found = []
    for ep in entry_points(group=group):
        dist = ep.dist
        # Parsed anew on every access: one parse. An email Message, whose .get the protocol omits.
        meta: Any = None if dist is None else dist.metadata
        requires = None if dist is None or meta is None else meta.get_all("Requires-Dist") or dist.requires
        found.append(
            PluginEntryPoint(
                name=ep.name,
                module=ep.module,
                attr=ep.attr,
                group=group,
                distribution=None if meta is None else meta.get("Name"),
                version=None if meta is None else meta.get("Version"),
                requires=None if requires is None else tuple(requires),
            )
        )
    names = {_CORE, *(normalize_distribution(ep.distribution) for ep in found if ep.distribution)}
    locations = {name: _read_location(name) for name in sorted(names)}
    return {"entries": [asdict(ep) for ep in found], "locations": locations}


def _read_location(distribution: str) -> str | None:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import distribution as find

    try:
        return os.path.realpath(str(find(distribution).locate_file("")))
    except PackageNotFoundError:
        return None


def normalize_distribution(name: str) -> str:
    """A distribution name as pip compares them (PEP 503): ``Lorenz_Acme`` → ``lorenz-acme``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _fingerprint() -> list[Any] | None:
    """What decides the index (see the module's docstring), or ``None`` when it cannot be known."""
    from importlib.machinery import PathFinder

    if any(finder is not PathFinder and hasattr(finder, "find_distributions") for finder in sys.meta_path):
        return None
    paths: list[Any] = []
    for entry in sys.path:
        folder = entry or os.getcwd()
        try:
            info = os.stat(folder)
        except OSError:
            paths.append([entry, None])
            continue
        if not stat.S_ISDIR(info.st_mode):
            return None
        paths.append([entry, info.st_mtime_ns, _metadata_times(folder)])
    return [__version__, sys.executable, list(sys.path), paths]


def _metadata_times(folder: str) -> list[Any]:
    times: list[Any] = []
    with contextlib.suppress(OSError):
        for name in sorted(os.listdir(folder)):
            if name.endswith((".dist-info", ".egg-info")):
                times.append([name, *(_stat(os.path.join(folder, name, file)) for file in ("", *_METADATA_FILES))])
    return times


def _stat(path: str) -> list[int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_mtime_ns, info.st_size]  # a list, as the key reads back from JSON


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lorenz" / "entry-points"


def _store(path: Path, index: dict[str, Any]) -> None:
    """Replace the entry whole; a cache that cannot be written is skipped."""
    import tempfile

    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                json.dump(index, file)
            os.replace(temp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)
