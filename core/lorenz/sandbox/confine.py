"""The sandboxed process's side: confine itself before importing its pack, and say which permission
a failed call lacked.

The kernel enforces (Landlock, and a seccomp filter for the sockets Landlock does not govern);
Python's audit hooks only remember what each call reached for (files opened, programs started,
addresses connected to, bound or listened on, sockets opened, names resolved, processes signalled
or traced; ``listen``, which has no audit event, through a wrapper), so that a call that failed
after a refusal names the permission to add instead of a bare ``Permission denied``.
"""

from __future__ import annotations

import contextvars
import ipaddress
import os
import socket
import sys
from typing import Any

from . import landlock, seccomp
from .policy import _SYSTEM_READ, _SYSTEM_WRITE, Denial, Sandbox, ruleset_for

__all__ = ["Confinement", "confine"]

#: The accesses one call made (``None`` outside a call): bounded, the first denials matter.
_attempts: contextvars.ContextVar[list[tuple[str, str]] | None] = contextvars.ContextVar(
    "lorenz_sandbox_attempts", default=None
)
_MAX_ATTEMPTS = 256
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_WRITE_EVENTS = frozenset({"os.mkdir", "os.remove", "os.rmdir", "os.rename", "os.truncate", "os.symlink", "os.link"})
_EXEC_EVENTS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.exec", "os.spawn"})
_RESOLVE_EVENTS = frozenset({"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex"})
#: Decided when recorded: the kernel refuses each of these whatever the target.
_ALWAYS_REFUSED = frozenset({"socket", "listen", "ptrace"})
_SOCKET_INIT = socket.socket.__init__.__code__
_INET = (socket.AF_INET, socket.AF_INET6)
_FAMILY_WORDS: dict[int, str] = {socket.AF_UNIX: "Unix", socket.AF_NETLINK: "netlink", socket.AF_PACKET: "packet"}
_INET_KIND_WORDS: dict[int, str] = {socket.SOCK_DGRAM: "UDP", socket.SOCK_RAW: "raw"}


def _record(kind: str, target: Any) -> None:
    attempts = _attempts.get()
    if attempts is not None and len(attempts) < _MAX_ATTEMPTS:
        attempts.append((kind, os.fsdecode(target) if isinstance(target, str | bytes) else str(target)))


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _attempts.get() is None:
        return
    if event == "open":
        path, mode, flags = args
        if isinstance(path, int):
            return
        writes = any(c in (mode or "") for c in "wax+") or (mode is None and bool((flags or 0) & _WRITE_FLAGS))
        _record("write" if writes else "read", path)
    elif event in ("os.listdir", "os.scandir") and isinstance(args[0], str | bytes):
        _record("read", args[0])
    elif event in _WRITE_EVENTS and isinstance(args[0], str | bytes):
        _record("write", args[0])
    elif event in _EXEC_EVENTS:
        target = args[0] if args[0] is not None else (args[1][0] if args[1] else "?")
        _record("subprocess", target)
    elif event == "socket.connect":
        _record_address("network", args[1])
    elif event == "socket.bind" and getattr(args[0], "family", None) in _INET:
        _record_address("listen", args[1])  # Landlock refuses every TCP bind (a Unix pair's is its own)
    elif event == "socket.__new__":
        _socket_created(*args)
    elif event in _RESOLVE_EVENTS and isinstance(args[0], str | bytes):
        _record("resolve", args[0])
    elif event in ("os.kill", "os.killpg"):
        pid = args[0] if event == "os.kill" else -args[0]
        _record("signal", str(pid))
    elif event == "ctypes.dlsym" and args[-1] == "ptrace":
        _record("ptrace", "another process")


def _record_address(kind: str, address: Any) -> None:
    if isinstance(address, tuple) and len(address) >= 2:
        _record(kind, f"{address[0]}:{address[1]}")


def _socket_created(sock: object, family: int, kind: int, proto: int) -> None:
    # socket.socket() wrapping an existing descriptor (socketpair(), fromfd()) creates nothing:
    # its own frame, which called into C and so raised this event, holds the descriptor.
    caller = sys._getframe(1).f_back  # past _hook
    if caller is not None and caller.f_code is _SOCKET_INIT and caller.f_locals.get("fileno") is not None:
        return
    family = socket.AF_INET if family == -1 else family
    kind = socket.SOCK_STREAM if kind == -1 else kind
    proto = 0 if proto == -1 else proto
    if seccomp.socket_refused(family, kind, proto):
        _record("socket", _describe_socket(family, kind, proto))


def _describe_socket(family: int, kind: int, proto: int) -> str:
    """``UDP (AF_INET, SOCK_DGRAM)``, ``Unix (AF_UNIX, SOCK_STREAM)``, ``raw (AF_PACKET, SOCK_RAW)``."""
    family_name = _name(socket.AddressFamily, family)
    kind_name = _name(socket.SocketKind, kind & 0xF)
    if family not in _INET:
        what = _FAMILY_WORDS.get(family, family_name)
    elif kind & 0xF == socket.SOCK_STREAM:
        what = f"protocol {proto}"
    else:
        what = _INET_KIND_WORDS.get(kind & 0xF, kind_name)
    return f"{what} ({family_name}, {kind_name})"


def _name(enum: Any, value: int) -> str:
    try:
        return str(enum(value).name)
    except ValueError:
        return str(value)


class Confinement:
    """The policy this process runs under, mirrored in Python to explain a refusal."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        permissions = sandbox.permissions
        writable = (*permissions.write_paths(), sandbox.temp_dir, *_SYSTEM_WRITE)
        self._write = tuple(os.path.realpath(path) for path in writable)
        readable = (*_SYSTEM_READ, *sandbox.runtime_paths, *permissions.read_paths())
        self._read = self._write + tuple(os.path.realpath(path) for path in readable)

    def begin(self) -> contextvars.Token[list[tuple[str, str]] | None]:
        """Start remembering the accesses of the call running in this context."""
        return _attempts.set([])

    def end(self, token: contextvars.Token[list[tuple[str, str]] | None]) -> Denial | None:
        """Stop remembering; the first access the policy refused, if any."""
        attempts = _attempts.get() or []
        _attempts.reset(token)
        return next((Denial(kind=kind, target=target) for kind, target in attempts if self.refuses(kind, target)), None)

    def refuses(self, kind: str, target: str) -> bool:
        """Whether the policy refuses ``kind`` of access to ``target``."""
        # Called after the call, its hook off: the checks below reach for nothing it records.
        if kind in _ALWAYS_REFUSED:
            return True
        if kind == "signal":
            return _signal_refused(int(target))
        if kind == "resolve":
            return _resolve_refused(target)
        if kind == "subprocess":
            return not self.sandbox.permissions.subprocess
        if kind == "network":
            port = target.rpartition(":")[2]
            return self.sandbox.proxy_port is None or port != str(self.sandbox.proxy_port)
        path = os.path.realpath(target)
        roots = self._write if kind == "write" else self._read
        return not any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _signal_refused(pid: int) -> bool:
    """Whether the kernel refuses this process a signal to ``pid`` (Landlock: outside its sandbox)."""
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True
    except OSError:  # gone, or no such group
        pass
    return False


def _resolve_refused(host: str) -> bool:
    """Whether ``host`` cannot be resolved here: the DNS is out of reach (no UDP), only files remain."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return False
    try:
        socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return True
    return False


_socket_listen = socket.socket.listen


def _listen(self: socket.socket, *args: Any) -> None:
    """``listen()``, which Python reports no audit event for: the filter refuses it."""
    if self.family in _INET:
        _record("listen", "{}:{}".format(*self.getsockname()[:2]))
    _socket_listen(self, *args)


def confine(sandbox: Sandbox) -> Confinement:
    """Apply ``sandbox`` to this process (before its pack is imported, while it has one thread)."""
    seccomp.restrict()
    landlock.restrict(ruleset_for(sandbox))
    # The import path is read-only here: a lazy import's bytecode write would be refused, and then
    # wrongly named as the reason a call failed.
    sys.dont_write_bytecode = True
    sys.addaudithook(_hook)
    socket.socket.listen = _listen  # type: ignore[method-assign,assignment]
    return Confinement(sandbox)
