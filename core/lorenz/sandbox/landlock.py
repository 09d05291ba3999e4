"""Landlock, the Linux security module an unprivileged process confines itself with, through ctypes.

:func:`abi_version` says what the kernel supports (0: none); :func:`restrict` applies a
:class:`Ruleset` to the calling thread and everything it later starts, for good. The syscall
numbers are the same on every architecture (they were added after the tables were unified).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import sys
from collections.abc import Sequence

from attrs import frozen

from . import seccomp

__all__ = ["LandlockError", "Ruleset", "abi_version", "missing_feature", "restrict"]

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_RULE_NET_PORT = 2
_PR_SET_NO_NEW_PRIVS = 38

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
_WRITE_DIR = sum(1 << bit for bit in range(4, 13))  # remove, make char/dir/reg/sock/fifo/block/sym
REFER = 1 << 13
TRUNCATE = 1 << 14
IOCTL_DEV = 1 << 15
#: What a rule on a file (not a directory) may grant.
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ = READ_FILE | READ_DIR
CONNECT_TCP = 1 << 1
BIND_TCP = 1 << 0
_SCOPE_ABSTRACT_UNIX = 1 << 0
_SCOPE_SIGNAL = 1 << 1

#: The ABI that first has TCP rules, and the one that first has scopes.
NETWORK_ABI = 4
_SCOPE_ABI = 6


class LandlockError(OSError):
    """The kernel refused to set up or apply a ruleset."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _NetPort(ctypes.Structure):
    _fields_ = (("allowed", ctypes.c_uint64), ("port", ctypes.c_uint64))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when it has none (not Linux, too old, or disabled)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = _libc()
    except OSError:
        return 0
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def missing_feature(abi: int, *, network: bool) -> str | None:
    """What the kernel lacks for a sandbox (``None``: nothing); with ``network``, to confine the
    network too: Landlock's TCP rules, and the seccomp filter refusing every other socket."""
    if abi <= 0:
        return "Landlock (Linux 5.13+, enabled with lsm=landlock)"
    if network and abi < NETWORK_ABI:
        return f"Landlock TCP rules (ABI {NETWORK_ABI}, Linux 6.7+; this kernel has ABI {abi})"
    return seccomp.missing_feature() if network else None


def _fs_rights(abi: int) -> int:
    rights = EXECUTE | WRITE_FILE | READ | _WRITE_DIR
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


@frozen(kw_only=True)
class Ruleset:
    """A filesystem and network policy: everything not granted here is denied."""

    #: ``(path, rights)``: ``rights`` (bits above, or ``ALL``) on ``path`` and what is under it.
    paths: Sequence[tuple[str, int]] = ()
    #: TCP ports it may connect to (``None``: the network is not restricted).
    connect_ports: Sequence[int] | None = None


#: Every right on a path (masked to what the kernel knows).
ALL = -1


def restrict(ruleset: Ruleset, abi: int | None = None) -> None:
    """Confine this thread (and all it starts) to ``ruleset``. Call before starting threads: the
    others stay unconfined. Paths that do not exist are skipped. Raises :class:`LandlockError`."""
    abi = abi_version() if abi is None else abi
    if abi <= 0:
        raise LandlockError(errno.ENOSYS, "this kernel has no Landlock")
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    handled = _fs_rights(abi)
    attr = _RulesetAttr(fs=handled, net=0, scoped=0)
    size = 8
    if ruleset.connect_ports is not None:
        if abi < NETWORK_ABI:
            raise LandlockError(errno.ENOSYS, "this kernel has no Landlock TCP rules")
        attr.net, size = BIND_TCP | CONNECT_TCP, 16
    if abi >= _SCOPE_ABI:
        attr.scoped, size = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL, 24
    fd = _check(libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)))
    try:
        for path, rights in ruleset.paths:
            _add_path(libc, fd, path, rights & handled)
        for port in ruleset.connect_ports or ():
            rule = _NetPort(allowed=CONNECT_TCP, port=port)
            _check(libc.syscall(_SYS_ADD_RULE, fd, _RULE_NET_PORT, ctypes.byref(rule), ctypes.c_uint32(0)))
        _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        _check(libc.syscall(_SYS_RESTRICT_SELF, fd, ctypes.c_uint32(0)))
    finally:
        os.close(fd)


def _add_path(libc: ctypes.CDLL, fd: int, path: str, rights: int) -> None:
    try:
        parent = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return
    try:
        if not os.path.isdir(path):
            rights &= FILE_RIGHTS
        if rights:
            rule = _PathBeneath(allowed=rights, parent_fd=parent)
            _check(libc.syscall(_SYS_ADD_RULE, fd, _RULE_PATH_BENEATH, ctypes.byref(rule), ctypes.c_uint32(0)))
    finally:
        os.close(parent)


def _check(result: int) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise LandlockError(code, os.strerror(code))
    return result
