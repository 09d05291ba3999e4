"""Board locks: one critical section per board, across threads *and* processes.

Every read-modify-write and id allocation runs under :func:`board_lock`: an in-process lock keyed
by the board directory, then an exclusive OS lock on ``<board>/.lorenz.lock`` (``fcntl.flock`` on
POSIX, ``filelock`` on Windows), which the kernel releases when its holder dies. The lock file is
hidden and not ``.md``, so listing never sees it; a symlink, FIFO or directory in its place is
refused (:class:`~.files.NotRegularFileError`).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .files import open_lock_file

__all__ = ["LOCK_FILE_NAME", "board_lock", "file_lock", "process_lock"]

LOCK_FILE_NAME = ".lorenz.lock"

_registry_guard = threading.Lock()


class _Entry:
    """An in-process lock and the number of threads holding or waiting for it."""

    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0


_locks: dict[str, _Entry] = {}  # idle keys are dropped


def _reset_after_fork() -> None:
    # A forked child inherits locks held by threads that no longer exist in it.
    global _registry_guard
    _registry_guard = threading.Lock()
    _locks.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


@contextmanager
def process_lock(key: str) -> Iterator[None]:
    """Serialise the threads of this process on ``key``. A failing holder never poisons it."""
    with _registry_guard:
        entry = _locks.get(key)
        if entry is None:
            entry = _locks[key] = _Entry()
        entry.users += 1
    try:
        with entry.lock:
            yield
    finally:
        with _registry_guard:
            entry.users -= 1
            if entry.users == 0 and _locks.get(key) is entry:
                del _locks[key]


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    from filelock import FileLock

    @contextmanager
    def file_lock(path: Path) -> Iterator[None]:
        with FileLock(path, poll_interval=0.001, thread_local=False):
            yield

else:
    import fcntl

    @contextmanager
    def file_lock(path: Path) -> Iterator[None]:
        """An exclusive ``flock`` on the regular file ``path`` (created if missing), held for the
        ``with`` body."""
        fd = open_lock_file(os.fspath(path))
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # blocks in the kernel; no polling
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


@contextmanager
def board_lock(board_dir: Path) -> Iterator[None]:
    """Hold the board's critical section. ``board_dir`` must exist."""
    with process_lock(os.fspath(board_dir)), file_lock(board_dir / LOCK_FILE_NAME):
        yield
