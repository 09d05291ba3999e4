"""Filesystem primitives of the board, and the wording of their failures.

Nothing here follows a symbolic link at the final path component or blocks on a FIFO: a board
entry can be anything someone put there, and a query must neither hang on it nor read or write
through it. Errors an agent may see name board files by their board-relative name, never by
absolute path or ``[Errno N]`` (:class:`BoardIOError`, :func:`os_error_text`). ``sync_file``,
``sync_dir`` and ``link_file`` are seams that tests replace on this module.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator

__all__ = [
    "BoardIOError",
    "IssueNotFoundError",
    "NotRegularFileError",
    "file_kind",
    "io_error",
    "link_file",
    "open_lock_file",
    "os_error_text",
    "read_error",
    "read_regular",
    "remove_quietly",
    "sync_dir",
    "sync_file",
    "worded",
    "write_new_file",
]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation
# O_NOFOLLOW: a symlink at the path fails the open; O_NONBLOCK: a FIFO opens without a writer;
# O_NOCTTY: a terminal swapped in after the lstat never becomes the controlling terminal.
_SAFE = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | _CLOEXEC | _BINARY
_READ_FLAGS = os.O_RDONLY | _SAFE
_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | _SAFE
# What open(2) with O_NOFOLLOW fails with on a symlink: Linux ELOOP, FreeBSD EMLINK, NetBSD EFTYPE.
_SYMLINK_ERRNOS = frozenset(
    code for code in (errno.ELOOP, errno.EMLINK, getattr(errno, "EFTYPE", None)) if code is not None
)
_IGNORED_DIR_SYNC_ERRORS = frozenset(
    code
    for code in (
        errno.EINVAL,
        errno.EISDIR,
        errno.EPERM,
        errno.EBADF,
        getattr(errno, "ENOTSUP", None),
        getattr(errno, "EOPNOTSUPP", None),
        errno.EACCES,
    )
    if code is not None
)
_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class BoardIOError(OSError):
    """A filesystem failure of the board, worded without absolute paths or errno numbers."""

    def __init__(self, message: str) -> None:
        super().__init__(message)


class IssueNotFoundError(BoardIOError, FileNotFoundError):
    """The issue file (or the whole board) does not exist."""


class NotRegularFileError(BoardIOError):
    """A board entry that is a symlink, FIFO, directory, device or socket: never opened for content."""

    def __init__(self, name: str, kind: str) -> None:
        super().__init__(f"{name} is {kind}, not a regular file")
        self.kind = kind


def file_kind(mode: int) -> str:
    """``"a FIFO"``, ``"a symbolic link"``, ... for a non-regular ``st_mode``."""
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def os_error_text(exc: OSError) -> str:
    """The OS's reason (``No such file or directory``) without the ``[Errno N]`` or the path."""
    if exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def io_error(action: str, exc: OSError) -> BoardIOError:
    """``exc`` worded for an agent: ``<action>: <reason>``; already-worded errors pass through."""
    if isinstance(exc, BoardIOError) and not isinstance(exc, NotRegularFileError):
        return exc
    return BoardIOError(f"{action}: {os_error_text(exc)}")


def read_error(issue_id: str, exc: OSError) -> BoardIOError:
    """``exc`` worded for a read of ``issue_id``; a missing file is :class:`IssueNotFoundError`."""
    if isinstance(exc, FileNotFoundError):
        return IssueNotFoundError(f"local board issue not found: {issue_id}")
    return io_error(f"failed to read board issue {issue_id}", exc)


@contextlib.contextmanager
def worded(action: str) -> Iterator[None]:
    """Re-raise an ``OSError`` from the block worded by :func:`io_error`."""
    try:
        yield
    except OSError as exc:
        error = io_error(action, exc)
        if error is exc:
            raise
        raise error from exc


def _not_regular(path: str, st: os.stat_result) -> NotRegularFileError:
    return NotRegularFileError(os.path.basename(path), file_kind(st.st_mode))


def _open_no_follow(path: str, flags: int, mode: int = 0o666) -> int:
    try:
        return os.open(path, flags, mode)
    except OSError as exc:
        if exc.errno in _SYMLINK_ERRNOS:
            raise NotRegularFileError(os.path.basename(path), "a symbolic link") from exc
        raise


def read_regular(path: str) -> tuple[os.stat_result, bytes]:
    """The ``fstat`` and whole content of the regular file at ``path``.

    Raises :class:`NotRegularFileError` for anything else (checked on the open descriptor, so an
    entry swapped after a caller's ``lstat`` is caught too), else the ``OSError`` of the failure.
    """
    fd = _open_no_follow(path, _READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, st)
        # Until EOF: a short read is not proof of it (FUSE, NFS), and a write rewrites what was read.
        chunks = [os.read(fd, st.st_size + 1)]
        while chunks[-1]:
            chunks.append(os.read(fd, 1 << 16))
        return st, b"".join(chunks)
    finally:
        os.close(fd)


def open_lock_file(path: str) -> int:
    """An open read-write descriptor of the regular lock file at ``path`` (created if missing).

    Raises :class:`NotRegularFileError` if something else sits there: replacing it would break
    the mutual exclusion of writers that already hold it, so the operator must remove it.
    """
    with contextlib.suppress(FileNotFoundError):
        st = os.lstat(path)
        if not stat.S_ISREG(st.st_mode):  # never even open a device
            raise _not_regular(path, st)
    try:
        fd = _open_no_follow(path, _LOCK_FLAGS)
    except IsADirectoryError as exc:
        raise NotRegularFileError(os.path.basename(path), "a directory") from exc
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise _not_regular(path, st)
    return fd


def sync_file(fd: int, path: str) -> None:
    """fsync an open file; ``path`` names it (for observers)."""
    os.fsync(fd)


def sync_dir(path: str) -> None:
    """fsync a directory, ignoring platforms that cannot (Windows, some network filesystems)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    except OSError as exc:
        if exc.errno in _IGNORED_DIR_SYNC_ERRORS:
            return
        raise
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _IGNORED_DIR_SYNC_ERRORS:
            raise
    finally:
        os.close(fd)


def link_file(source: str, target: str) -> None:
    """Publish ``source`` as ``target``; raises ``FileExistsError`` rather than overwrite (also a
    symlink at ``target``, which ``link(2)`` never follows)."""
    os.link(source, target)


def write_new_file(path: str, data: bytes) -> None:
    """Create ``path`` (it must not exist, not even as a dangling symlink), write ``data``, fsync."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _SAFE, 0o666)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        sync_file(fd, path)
    finally:
        os.close(fd)


def remove_quietly(path: str) -> None:
    """Unlink ``path`` (a symlink itself, never its target), ignoring every failure."""
    with contextlib.suppress(OSError):
        os.unlink(path)
