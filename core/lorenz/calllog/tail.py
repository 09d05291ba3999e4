"""The lines appended to a rotating call log, in order, across its rotations (``lorenz calls --follow``).

When the file followed is rotated away, it is read to its end first (what was written to it before
the rename), then every file rotated in after it, oldest first, then the live one: a log that
rotated several times between two polls loses no line. The files are found and opened under the
writer's lock, so no rotation moves them meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

__all__ = ["tail_lines"]


def tail_lines(path: Path, *, stop: threading.Event, poll_seconds: float) -> Iterator[bytes]:
    """Each whole line appended to ``path`` from now on (its bytes, the newline included), until
    ``stop`` is set. Raises :class:`FileNotFoundError` when there is no log to follow."""
    current: BinaryIO = path.open("rb")
    current.seek(0, os.SEEK_END)
    queued: list[BinaryIO] = []  # the files rotated in after `current`, oldest first; the live one last
    partial = b""  # a line whose end the writer has not written yet
    try:
        while not stop.is_set():
            chunk = current.readline()
            if chunk:
                partial += chunk
                if partial.endswith(b"\n"):
                    yield partial
                    partial = b""
                continue
            if queued:  # `current` was rotated away before the files after it were opened: it is whole
                if partial:
                    yield partial  # a torn last line: the reader skips it
                    partial = b""
                current.close()
                current = queued.pop(0)
                continue
            queued = _rotated_in_after(path, current)
            if not queued:
                stop.wait(poll_seconds)
            # else: read `current` to its end again, since lines may have reached it before the rename
    finally:
        for handle in (current, *queued):
            handle.close()


def _rotated_in_after(path: Path, current: BinaryIO) -> list[BinaryIO]:
    """The files that came after ``current``, oldest first, opened: none while ``path`` is still it."""
    if not _moved(path, current):
        return []
    with _shared_lock(Path(f"{path}.lock")):
        opened = os.fstat(current.fileno())
        backups: list[Path] = []  # newest first: path.1, path.2, …
        while (backup := Path(f"{path}.{len(backups) + 1}")).exists():
            backups.append(backup)
        newer: list[Path] = []
        for backup in backups:
            stat = backup.stat()
            if (stat.st_dev, stat.st_ino) == (opened.st_dev, opened.st_ino):
                break
            newer.append(backup)
        # (when `current` is not among them it was rotated out: every backup came after it)
        handles: list[BinaryIO] = []
        for name in [*reversed(newer), path]:
            with contextlib.suppress(FileNotFoundError):
                handles.append(name.open("rb"))
        return handles


def _moved(path: Path, current: BinaryIO) -> bool:
    try:
        now = path.stat()
    except FileNotFoundError:  # between a rename and the new file (a writer without the lock)
        return False
    opened = os.fstat(current.fileno())
    return (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino)


@contextlib.contextmanager
def _shared_lock(lock_path: Path) -> Iterator[None]:
    """A shared ``flock`` on the writer's lock file while the block runs: no writer rotates the log
    meanwhile. Nothing when there is no lock file (a writer other than Lorenz's) or no ``flock``."""
    try:
        import fcntl

        fd = os.open(lock_path, os.O_RDONLY)
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)
