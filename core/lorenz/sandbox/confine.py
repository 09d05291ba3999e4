"""The sandboxed process's side: confine itself before importing its pack, and say which permission
a failed call lacked.

The kernel enforces (Landlock); Python's audit hooks only remember what each call reached for
(files opened, programs started, addresses connected to), so that a call that failed after a
refusal names the permission to add instead of a bare ``Permission denied``.
"""

from __future__ import annotations

import contextvars
import os
import sys
from typing import Any

from . import landlock
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
        address = args[1]
        if isinstance(address, tuple) and len(address) >= 2:
            _record("network", f"{address[0]}:{address[1]}")


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
        return next(
            (Denial(kind=kind, target=target) for kind, target in attempts if self._refused(kind, target)), None
        )

    def _refused(self, kind: str, target: str) -> bool:
        if kind == "subprocess":
            return not self.sandbox.permissions.subprocess
        if kind == "network":
            port = target.rpartition(":")[2]
            return self.sandbox.proxy_port is None or port != str(self.sandbox.proxy_port)
        path = os.path.realpath(target)
        roots = self._write if kind == "write" else self._read
        return not any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def confine(sandbox: Sandbox) -> Confinement:
    """Apply ``sandbox`` to this process (before its pack is imported, while it has one thread)."""
    landlock.restrict(ruleset_for(sandbox))
    # The import path is read-only here: a lazy import's bytecode write would be refused, and then
    # wrongly named as the reason a call failed.
    sys.dont_write_bytecode = True
    sys.addaudithook(_hook)
    return Confinement(sandbox)
