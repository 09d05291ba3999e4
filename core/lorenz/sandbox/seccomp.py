"""The sockets a sandboxed process may create, enforced by a seccomp filter that libseccomp (the
system's ``libseccomp.so.2``, Debian's ``libseccomp2``) builds, through ctypes.

Landlock governs TCP only; this filter closes the rest of the network. ``socket()`` may create TCP
over IPv4 or IPv6 and nothing else (UDP, and so DNS, raw, packet, netlink and Unix-domain sockets
are refused), ``socketpair()`` only a Unix stream pair (asyncio's self-pipe: connected, it reaches
no one else), and ``listen()`` nothing (on an unbound TCP socket it would take a port, which
Landlock does not see). ``ptrace`` is refused, and io_uring, which can create sockets without the
``socket`` system call, reports itself missing. A system call through another ABI (i386's
``int 0x80``, its ``socketcall``) kills the thread: libseccomp's rule for a foreign architecture.
The filter holds for good, across ``execve``.
"""

from __future__ import annotations

import ctypes
import errno
import os
import socket
import sys

__all__ = ["SeccompError", "missing_feature", "restrict", "socket_refused"]


class SeccompError(OSError):
    """libseccomp or the kernel refused to build or load the filter."""


_ACT_ALLOW = 0x7FFF0000
_ACT_ERRNO = 0x00050000
_CMP_NE, _CMP_LT, _CMP_EQ, _CMP_GT, _CMP_MASKED_EQ = 1, 2, 4, 6, 7
_ATTR_TSYNC = 4
#: The kinds of socket ``socket()`` may create: TCP (protocol 0 or ``IPPROTO_TCP``), no other.
_FAMILIES = (socket.AF_INET, socket.AF_INET6)
_PROTOCOLS = (0, socket.IPPROTO_TCP)
_TYPE_MASK = 0xF  # SOCK_NONBLOCK and SOCK_CLOEXEC are flags above it


class _ArgCmp(ctypes.Structure):
    _fields_ = (
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    )


def _library() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        lib = ctypes.CDLL("libseccomp.so.2", use_errno=True)
    except OSError:
        return None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = (ctypes.c_uint32,)
    lib.seccomp_release.argtypes = (ctypes.c_void_p,)
    lib.seccomp_attr_set.argtypes = (ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32)
    lib.seccomp_rule_add_array.argtypes = (
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    )
    lib.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)
    lib.seccomp_load.argtypes = (ctypes.c_void_p,)
    lib.seccomp_api_get.restype = ctypes.c_uint
    return lib


def missing_feature() -> str | None:
    """What this system lacks to confine sockets (``None``: nothing)."""
    lib = _library()
    if lib is None:
        return "libseccomp (libseccomp.so.2; Debian: apt-get install libseccomp2)"
    if lib.seccomp_api_get() < 2:  # 2: the kernel filters system calls and syncs threads
        return "seccomp filters (CONFIG_SECCOMP_FILTER)"
    return None


def socket_refused(family: int, kind: int, protocol: int) -> bool:
    """Whether the filter refuses ``socket(family, kind, protocol)``."""
    return family not in _FAMILIES or kind & _TYPE_MASK != socket.SOCK_STREAM or protocol not in _PROTOCOLS


def _cmp(arg: int, op: int, a: int, b: int = 0) -> _ArgCmp:
    return _ArgCmp(arg=arg, op=op, datum_a=a, datum_b=b)


def _rules() -> list[tuple[str, int, tuple[_ArgCmp, ...]]]:
    """``(syscall, errno, comparisons)``: each refuses the call when all its comparisons hold.

    Written as refusals, each a conjunction, because libseccomp takes one comparison per argument
    in a rule; the comparisons are on 64 bits while the kernel reads an ``int``, so any value with
    high bits set is refused by an ``LT``/``GT``/``NE`` rule rather than matching an allowed one."""
    eacces = errno.EACCES
    out: list[tuple[str, int, tuple[_ArgCmp, ...]]] = []
    low, high = min(_FAMILIES), max(_FAMILIES)
    out.append(("socket", eacces, (_cmp(0, _CMP_LT, low),)))
    out.append(("socket", eacces, (_cmp(0, _CMP_GT, high),)))
    out += [("socket", eacces, (_cmp(0, _CMP_EQ, family),)) for family in range(low, high) if family not in _FAMILIES]
    out.append(("socket", eacces, (_cmp(2, _CMP_GT, max(_PROTOCOLS)),)))
    out += [
        ("socket", eacces, (_cmp(2, _CMP_EQ, proto),)) for proto in range(max(_PROTOCOLS)) if proto not in _PROTOCOLS
    ]
    out.append(("socketpair", eacces, (_cmp(0, _CMP_NE, socket.AF_UNIX),)))
    for call in ("socket", "socketpair"):
        # The type (argument 1) is SOCK_STREAM, 1, in the low four bits: bit 0 set, bits 1-3 clear.
        out.append((call, eacces, (_cmp(1, _CMP_MASKED_EQ, 1, 0),)))
        out += [(call, eacces, (_cmp(1, _CMP_MASKED_EQ, bit, bit),)) for bit in (2, 4, 8)]
    out.append(("listen", eacces, ()))
    out.append(("ptrace", errno.EPERM, ()))
    out += [(call, errno.ENOSYS, ()) for call in ("io_uring_setup", "io_uring_enter", "io_uring_register")]
    return out


def restrict() -> None:
    """Load the filter into this process (every thread) and all it later starts, for good.
    Raises :class:`SeccompError`."""
    lib = _library()
    if lib is None:
        raise SeccompError(errno.ENOSYS, "libseccomp.so.2 is not installed")
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise SeccompError(errno.ENOMEM, "seccomp_init failed")
    try:
        _check(lib.seccomp_attr_set(ctx, _ATTR_TSYNC, 1))
        for name, code, comparisons in _rules():
            number = lib.seccomp_syscall_resolve_name(name.encode())
            if number < 0:
                raise SeccompError(errno.ENOSYS, f"libseccomp does not know the {name} system call (too old)")
            array = (_ArgCmp * len(comparisons))(*comparisons)
            _check(lib.seccomp_rule_add_array(ctx, _ACT_ERRNO | code, number, len(comparisons), array))
        _check(lib.seccomp_load(ctx))
    finally:
        lib.seccomp_release(ctx)


def _check(result: int) -> None:
    if result < 0:  # libseccomp returns -errno
        raise SeccompError(-result, os.strerror(-result))
