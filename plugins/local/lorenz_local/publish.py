"""Publishing board files: crash-safe, multi-process-safe writes into one board directory.

A file goes to an fsynced temp file, published by ``os.replace`` (:func:`replace_file`) or a
no-overwrite ``os.link`` (:func:`publish_new`), then the directory is fsynced: a reader sees the
old or the new file, never a torn one. Callers hold :func:`~.locks.board_lock`, so a temp file
seen by a sweep belongs to a writer that died. Every function is blocking file I/O.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import re
import string
import time
from collections.abc import Callable
from pathlib import Path

from . import files
from .files import remove_quietly

__all__ = [
    "MAX_CREATE_ATTEMPTS",
    "TEMP_SWEEP_INTERVAL",
    "ensure_directory",
    "publish_new",
    "replace_file",
    "sweep_if_due",
    "sweep_stale_temps",
]

MAX_CREATE_ATTEMPTS = 64
#: Least time between two stale-temp sweeps of one board by updates (a sweep lists the directory).
TEMP_SWEEP_INTERVAL = 60.0
_last_sweep: dict[str, float] = {}  # board directory -> time.monotonic() of its last sweep here
# What link(2) fails with on filesystems that have no hard links.
_NO_HARD_LINKS = frozenset(
    code
    for code in (
        errno.EPERM,
        getattr(errno, "ENOTSUP", None),
        getattr(errno, "EOPNOTSUPP", None),
        getattr(errno, "ENOSYS", None),
    )
    if code is not None
)
_BASE36 = string.digits + string.ascii_lowercase
# The temp files this module writes: `<id>.md.<pid>.<token>.tmp` and `.lorenz-create.<pid>.<token>.tmp`.
_TEMP_NAME = re.compile(r"(?:\.lorenz-create|[^/\\]+\.md)\.[0-9]+\.[0-9a-z]+\.tmp", re.ASCII)


def _random_token() -> str:
    return "".join(random.choices(_BASE36, k=8))


def sweep_if_due(directory: str) -> None:
    """:func:`sweep_stale_temps` at most every :data:`TEMP_SWEEP_INTERVAL` seconds per board."""
    last = _last_sweep.get(directory)
    if last is None or time.monotonic() - last >= TEMP_SWEEP_INTERVAL:
        with contextlib.suppress(OSError):  # housekeeping never fails an update
            sweep_stale_temps(directory)


def sweep_stale_temps(directory: str) -> None:
    """Remove temp files left by writers that died mid-write (e.g. SIGKILL).

    Only called under the board lock, and every writer holds that lock for as long as its
    temp file exists, so any temp file seen here belongs to a dead writer.
    """
    _last_sweep[directory] = time.monotonic()
    with os.scandir(directory) as entries:
        stale = [entry.path for entry in entries if _TEMP_NAME.fullmatch(entry.name)]
    for path in stale:
        remove_quietly(path)  # a symlink named like a temp file goes, never its target


def replace_file(directory: str, target: str, data: bytes) -> None:
    """Atomically replace ``target``: a symlink there is replaced itself, never written through."""
    temp = f"{target}.{os.getpid()}.{_random_token()}.tmp"
    try:
        files.write_new_file(temp, data)
        os.replace(temp, target)
        files.sync_dir(directory)
    except BaseException:
        remove_quietly(temp)
        raise


def publish_new(directory: str, data: bytes, allocate: Callable[[], tuple[str, str]]) -> str:
    """Publish ``data`` under the first free ``(id, path)`` that ``allocate`` names; the id."""
    sweep_stale_temps(directory)
    temp = os.path.join(directory, f".lorenz-create.{os.getpid()}.{_random_token()}.tmp")
    try:
        files.write_new_file(temp, data)
        for _ in range(MAX_CREATE_ATTEMPTS):
            issue_id, target = allocate()
            try:
                files.link_file(temp, target)
            except FileExistsError:
                continue  # someone outside the lock took it: recount
            except OSError as exc:
                if exc.errno not in _NO_HARD_LINKS:
                    raise
                # A filesystem without hard links (FAT, some FUSE mounts): every writer of
                # this board holds the board lock, so check-then-rename cannot race here.
                if os.path.lexists(target):
                    continue
                os.replace(temp, target)
            files.sync_dir(directory)
            return issue_id
        msg = f"failed to allocate a board id after {MAX_CREATE_ATTEMPTS} attempts"
        raise RuntimeError(msg)
    finally:
        remove_quietly(temp)


def ensure_directory(directory: Path) -> None:
    """``mkdir -p`` the board, then fsync every parent that gained an entry."""
    missing: list[Path] = []
    probe = directory
    while not probe.exists() and probe.parent != probe:
        missing.append(probe)
        probe = probe.parent
    if not missing:
        return
    os.makedirs(directory, exist_ok=True)
    stop = missing[-1].parent
    parent = directory.parent
    while True:
        files.sync_dir(os.fspath(parent))
        if parent == stop:
            break
        parent = parent.parent
