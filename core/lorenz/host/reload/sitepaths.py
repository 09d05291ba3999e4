"""Making a running interpreter see what ``pip install -e`` added: the ``.pth`` files of its site
directories are read at start only, so an editable install made while serving would never import.

A ``.pth`` file new (or changed) since the last look is processed as ``site`` does at start (its
path lines added, its ``import`` lines run: setuptools' editable finders install themselves so);
of the others only the path lines missing from ``sys.path`` are added again (a spawned worker
starts with its parent's ``sys.path``, which predates them).
"""

from __future__ import annotations

import importlib
import os
import site
import sys

__all__ = ["SitePaths"]


def site_directories() -> list[str]:
    """The directories whose ``.pth`` files ``site`` reads, as far as this interpreter tells."""
    found: list[str] = []
    candidates = list(getattr(site, "getsitepackages", list)())
    if site.ENABLE_USER_SITE:
        candidates.append(site.getusersitepackages())
    # A directory added with site.addsitedir (a venv layered over another) is on sys.path only.
    candidates += [entry for entry in sys.path if os.path.basename(entry) in ("site-packages", "dist-packages")]
    for directory in candidates:
        if directory not in found and os.path.isdir(directory):
            found.append(directory)
    return found


def _pth_files(directory: str) -> dict[str, int]:
    try:
        names = os.listdir(directory)
    except OSError:
        return {}
    files: dict[str, int] = {}
    for name in names:
        if name.endswith(".pth") and not name.startswith("."):
            path = os.path.join(directory, name)
            try:
                files[path] = os.stat(path).st_mtime_ns
            except OSError:
                continue
    return files


def _path_lines(path: str) -> list[str]:
    """The directories a ``.pth`` file puts on ``sys.path`` (existing ones, as ``site`` keeps)."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    directory = os.path.dirname(path)
    entries = []
    for line in lines:
        line = line.rstrip()
        if not line or line.startswith(("#", "import ", "import\t")):
            continue
        entry = os.path.abspath(os.path.join(directory, line))
        if os.path.exists(entry):
            entries.append(entry)
    return entries


class SitePaths:
    """The ``.pth`` files seen so far; :meth:`refresh` brings ``sys.path`` up to date with them."""

    def __init__(self) -> None:
        #: Processed at interpreter start (or by an earlier refresh): ``{path: mtime}``.
        self._seen = {path: mtime for directory in site_directories() for path, mtime in _pth_files(directory).items()}

    def refresh(self) -> list[str]:
        """Process new and changed ``.pth`` files, re-add missing path lines, and drop the import
        system's caches; returns the entries added to ``sys.path``."""
        before = list(sys.path)
        current: dict[str, int] = {}
        for directory in site_directories():
            for path, mtime in sorted(_pth_files(directory).items()):
                current[path] = mtime
                if self._seen.get(path) != mtime:
                    known = {os.path.normcase(entry) for entry in sys.path}
                    # site's own reader: path lines, then `import` lines run as at start.
                    site.addpackage(directory, os.path.basename(path), known)
                for entry in _path_lines(path):
                    if entry not in sys.path:
                        sys.path.append(entry)
        self._seen = current
        importlib.invalidate_caches()
        return [entry for entry in sys.path if entry not in before]
