"""Knowing WORKFLOW.md is unchanged without a ``stat`` per request (Linux, inotify).

A request is served with WORKFLOW.md as it is when the request is sent. The kernel queues a change
event before the editor's write returns; each request asks how many bytes of events are queued (one
``ioctl``) and reads them first, then stats the file only when a change was reported (and at least
once a second anyway). Used only on a local filesystem, a path without symbolic links, and the loop
that reads the watch; anywhere else a request stats the file as before (:func:`file_signature`).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import fcntl
import logging
import os
import struct
import sys
import threading
import time
from pathlib import Path
from typing import NoReturn

__all__ = ["LOOK_ANYWAY_SECONDS", "Signature", "WorkflowWatch", "file_signature"]

logger = logging.getLogger("lorenz.host")

Signature = tuple[int, int, int, int]


def file_signature(path: Path | None) -> Signature | None:
    """What identifies one version of the file: an atomic replace changes the inode, an edit
    within one mtime tick that keeps the size still changes the ctime."""
    if path is None:
        return None
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


#: However quiet the kernel is, a request stats the file at least this often.
LOOK_ANYWAY_SECONDS = 1.0

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_UNMOUNT, _IN_Q_OVERFLOW, _IN_IGNORED = 0x400, 0x800, 0x2000, 0x4000, 0x8000
_IN_ONLYDIR, _IN_DONT_FOLLOW = 0x01000000, 0x02000000
_EVENTS = _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
_WATCH_MASK = _EVENTS | _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_ONLYDIR | _IN_DONT_FOLLOW
#: The directory itself went away (or the kernel dropped the watch): nothing more will be reported.
_GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_UNMOUNT | _IN_IGNORED
_HEADER = struct.Struct("iIII")  # struct inotify_event: wd, mask, cookie, len (then the name)

#: ``statfs`` magic numbers of the filesystems whose every change the local kernel sees.
_LOCAL_FILESYSTEMS = {
    0xEF53: "ext2/3/4",
    0x58465342: "xfs",
    0x9123683E: "btrfs",
    0x01021994: "tmpfs",
    0x858458F6: "ramfs",
    0x794C7630: "overlayfs",
    0x2FC12FC1: "zfs",
    0xF2F52010: "f2fs",
    0xCA451A4E: "bcachefs",
}


class WorkflowWatch:
    """The kernel's reports of changes to one file, read on one event loop."""

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop, path: str) -> None:
        self._fd = fd
        self._loop = loop
        self._path = path
        self._name = os.fsencode(os.path.basename(path))
        #: Something happened to the file since a look found it unchanged.
        self._touched = False
        self._gone = False
        self._look_by = time.monotonic() + LOOK_ANYWAY_SECONDS
        self._thread = threading.get_ident()  # the loop's: started from a coroutine running on it
        self._queued = bytearray(4)
        import termios  # Unix only, as this module's use: FIONREAD's value varies by architecture

        self._fionread = termios.FIONREAD
        loop.add_reader(fd, self._read)

    @classmethod
    def start(cls, path: Path, loop: asyncio.AbstractEventLoop) -> WorkflowWatch | None:
        """A watch of ``path`` read on ``loop`` (which must be running), or ``None`` where the
        kernel's reports cannot stand in for a look at the file (see the module's text)."""
        if not sys.platform.startswith("linux"):
            return None
        directory = os.path.abspath(path.parent)
        try:
            if os.path.realpath(directory) != directory or path.is_symlink():
                return None
            if _filesystem(directory) not in _LOCAL_FILESYSTEMS:
                return None
            fd = _inotify_watch(directory)
        except OSError as exc:  # no inotify here, or no instance or watch left (the user's limits)
            logger.debug("lorenz: not watching %s (%s); looking at it on every request", path, exc)
            return None
        return cls(fd, loop, os.path.join(directory, path.name))

    def vouches(self) -> bool:
        """Whether the file is known unchanged since the last look that found it so: no report
        of a change (queued by the kernel until now), a look within the last second, and the
        caller on the loop reading reports."""
        if self._touched or self._gone or time.monotonic() >= self._look_by:
            return False
        # One loop runs in a thread at a time: this thread's, if it is running. (Not
        # ``get_running_loop()``: on Python 3.11 that is a system call, the cost saved here.)
        if threading.get_ident() != self._thread or not self._loop.is_running():
            return False
        # A report the loop has not read yet (see the module's text): whatever is queued now.
        try:
            fcntl.ioctl(self._fd, self._fionread, self._queued, True)
        except OSError:
            self.close()
            return False
        if self._queued != b"\0\0\0\0":
            self._read()
        return not (self._touched or self._gone)

    def looked(self) -> None:
        """A look found the file unchanged: reports from now on are news. Only a look on the loop's
        thread counts (another thread's may predate a report the loop has just read)."""
        if threading.get_ident() != self._thread:
            return
        self._touched = False
        self._look_by = time.monotonic() + LOOK_ANYWAY_SECONDS

    def close(self) -> None:
        """Stop reading reports: from now on every look is a ``stat``."""
        if self._fd >= 0:
            self._loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = -1
        self._gone = True

    def _read(self) -> None:
        """Take what the kernel reported (the loop calls this when there is something)."""
        try:
            data = os.read(self._fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            self.close()
            return
        offset = 0
        while offset + _HEADER.size <= len(data):
            _, mask, _, size = _HEADER.unpack_from(data, offset)
            name = data[offset + _HEADER.size : offset + _HEADER.size + size].rstrip(b"\0")
            offset += _HEADER.size + size
            if mask & _IN_Q_OVERFLOW or name == self._name:
                self._touched = True
            if mask & _GONE:
                self.close()
        if self._touched and not self._gone and os.path.islink(self._path):
            self.close()  # a symbolic link now: changes to its target are reported elsewhere


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def _raise_errno(what: str) -> NoReturn:
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")


def _inotify_watch(directory: str) -> int:
    """A non-blocking inotify descriptor watching ``directory``'s entries."""
    libc = _libc()
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        _raise_errno("inotify_init1")
    if libc.inotify_add_watch(fd, os.fsencode(directory), _WATCH_MASK) < 0:
        os.close(fd)
        _raise_errno("inotify_add_watch")
    return int(fd)


def _filesystem(directory: str) -> int:
    """The ``statfs`` type of the filesystem holding ``directory``."""
    buffer = ctypes.create_string_buffer(256)  # struct statfs, f_type first (120 bytes on 64-bit)
    if _libc().statfs(os.fsencode(directory), buffer) != 0:
        _raise_errno("statfs")
    return ctypes.c_long.from_buffer(buffer).value & 0xFFFFFFFF
