"""Confined survey reports kept on disk, so that a plugin is surveyed once per install, not per open.

A report is the survey child's output, kept under ``$XDG_CACHE_HOME/lorenz/surveys`` (else
``~/.cache/lorenz/surveys``) and keyed by what decides it: the core's version, the interpreter,
the import path, the strict policy's reason and workflow directory, the distribution's name,
version and entry point, and the size and modification time of its metadata (``RECORD``) and of
its package's files (an editable project's edits). Only reports of children confined to the strict
policy are kept: their environment is fixed, so the same key gives the same report. An entry that
cannot be read or parsed is ignored (and rewritten once surveyed afresh).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

from lorenz._version import __version__

__all__ = ["cache_key", "load", "store"]


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lorenz" / "surveys"


def _stat(path: str | os.PathLike[str]) -> list[int]:
    try:
        info = os.stat(path)
    except OSError:
        return [-1, -1]
    return [info.st_size, info.st_mtime_ns]


def _files_stat(paths: Sequence[str]) -> list[object]:
    """The size and time of the plugin's own files (an editable project changes without reinstalling)."""
    out: list[object] = []
    for root in paths:
        if not os.path.isdir(root):
            out.append([root, _stat(root)])
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            out.extend([os.path.join(folder, name), _stat(os.path.join(folder, name))] for name in sorted(files))
    return out


def cache_key(
    distribution_name: str,
    version: str | None,
    entry_point: str | None,
    *,
    reason: str,
    workflow_dir: str | None,
    plugin_files: Sequence[str],
) -> str | None:
    """The key of a confined survey of this plugin as installed now; ``None`` when its metadata
    cannot be found (nothing is cached then)."""
    try:
        dist = distribution(distribution_name)
    except (PackageNotFoundError, ValueError):
        return None
    where = getattr(dist, "_path", None)  # the .dist-info directory of a PathDistribution
    if where is None:
        return None
    parts = [
        __version__,
        sys.executable,
        list(sys.path),
        reason,
        workflow_dir,
        distribution_name,
        version,
        entry_point,
        str(where),
        _stat(where),
        _stat(Path(where) / "RECORD"),
        _files_stat(plugin_files),
    ]
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()


def load(key: str) -> bytes | None:
    """The report kept under ``key``, or ``None``."""
    try:
        return (_cache_dir() / key).read_bytes()
    except OSError:
        return None


def store(key: str, report: bytes) -> None:
    """Keep ``report`` under ``key``, replacing the entry whole; a cache that cannot be written is skipped."""
    folder = _cache_dir()
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(report)
            os.replace(temp, folder / key)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)
