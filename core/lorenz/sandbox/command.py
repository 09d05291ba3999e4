"""A program confined like a sandboxed pack's process: :func:`sandboxed_command` gives a plugin the
argv and environment that start it under Landlock and the socket filter, with an egress proxy of
its own, and says which permission a failed request lacked.

The argv runs :mod:`lorenz.sandbox.launch`, which applies the policy to itself and then ``exec``s
the program: Landlock and seccomp hold across ``exec``, so a program in any language is confined.
No audit hook follows it there, so a refusal is named from what the proxy refused or from the
path or address the program's own error message names.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Mapping, Sequence

from attrs import frozen

from . import landlock, seccomp
from .confine import Confinement
from .host import SandboxUnavailable
from .launch import CONVERTER
from .permissions import Permissions
from .policy import Denial, Sandbox, denial_message, private_dirs, sandbox_env
from .proxy import EgressProxy

__all__ = ["SandboxedCommand", "sandboxed_command"]

#: Words with which programs report a refused access (errno 13 and 1, in Python's and Node's terms).
_REFUSED = re.compile(r"EACCES|EPERM|EROFS|permission denied|operation not permitted|errno 13|errno 1\b", re.I)
_PATH = re.compile(r"""(?:^|[\s'"`(=:,])(/[^\s'"`),;]*)""")
_ADDRESS = re.compile(r"\b((?:\d{1,3}\.){3}\d{1,3}|\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+\.[A-Za-z]{2,}):(\d{1,5})\b")
_WRITING = re.compile(r"writ|creat|mkdir|rename|unlink|rmdir|EROFS|open\(.*['\"][wax]", re.I)


@frozen
class SandboxedCommand:
    """What to start (``argv``, with :meth:`env`) and how to explain what it was refused."""

    #: The tools key the policy is the operator's to widen (``tools.<name>.permissions``).
    name: str
    argv: tuple[str, ...]
    sandbox: Sandbox
    proxy: EgressProxy
    #: The name of what ``runtime`` grants (``node``, ``python``…), as ``lorenz check`` shows it.
    preset: str | None = None

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        """``env`` reduced to what the policy passes, with ``TMPDIR``/``HOME`` and the proxy set."""
        return sandbox_env(env, self.sandbox)

    def denial(self, text: str, since: float) -> str | None:
        """The permission a request that failed with ``text`` (started at ``since``, monotonic)
        lacked: a host the proxy refused, else a refused path or address ``text`` names."""
        refused = self.proxy.denials_since(since)
        if refused:
            return denial_message(self.name, Denial(kind="network", target=refused[0]))
        if not _REFUSED.search(text):
            return None
        confinement = Confinement(self.sandbox)
        for path in _PATH.findall(text):
            if confinement.refuses("read", path):
                kind = "write" if _WRITING.search(text) else "read"
                return denial_message(self.name, Denial(kind=kind, target=path))
            if confinement.refuses("write", path):
                return denial_message(self.name, Denial(kind="write", target=path))
        for host, port in _ADDRESS.findall(text):
            if int(port) != self.sandbox.proxy_port:
                return denial_message(self.name, Denial(kind="network", target=f"{host}:{port}"))
        return None


@contextlib.asynccontextmanager
async def sandboxed_command(
    name: str,
    command: Sequence[str],
    permissions: Permissions,
    *,
    runtime: Sequence[str] = (),
    preset: str | None = None,
    workflow_dir: str | None = None,
) -> AsyncIterator[SandboxedCommand]:
    """Confine ``command`` to ``permissions`` (``name``: its ``tools:`` key), its ``runtime``
    directories (what the program needs to start: an interpreter's prefix, a package cache)
    readable and executable (``preset``: their name, for ``lorenz check``). Runs an egress proxy
    on the current asyncio loop until the context ends. Raises :class:`SandboxUnavailable` (fail
    closed) where the kernel cannot confine it, and ``ValueError`` when a runtime directory holds
    the workflow's directory or ``HOME``."""
    missing = landlock.missing_feature(landlock.abi_version(), network=True) or seccomp.missing_feature()
    if missing is not None:
        msg = f"{name} is sandboxed but this kernel lacks {missing}; it was not started"
        raise SandboxUnavailable(msg)
    roots = _runtime_roots(name, runtime, workflow_dir)
    _make_write_dirs(permissions)
    proxy = EgressProxy(name, permissions)
    await proxy.start()
    temp_dir: str | None = None
    try:
        sandbox = _sandbox(name, permissions, roots, proxy.port)
        temp_dir = sandbox.temp_dir
        policy = json.dumps(_unstructure(sandbox))
        # -P: the working directory (the workflow's) is not put on the launcher's import path.
        argv = (sys.executable, "-P", "-m", "lorenz.sandbox.launch", policy, "--", *command)
        yield SandboxedCommand(name=name, argv=argv, sandbox=sandbox, proxy=proxy, preset=preset)
    finally:
        await proxy.aclose()
        if temp_dir is not None:
            shutil.rmtree(temp_dir, ignore_errors=True)


def _runtime_roots(name: str, runtime: Sequence[str], workflow_dir: str | None) -> tuple[str, ...]:
    """The existing ``runtime`` directories, resolved; ``ValueError`` if one holds a private one."""
    private = [os.path.realpath(path) for path in private_dirs(workflow_dir)]
    roots = tuple(dict.fromkeys(os.path.realpath(path) for path in runtime if os.path.exists(path)))
    for root in roots:
        held = next((p for p in private if p == root or p.startswith(root.rstrip(os.sep) + os.sep)), None)
        if held is not None:
            msg = f"{name}: the runtime directory {root} holds {held}; it cannot be granted to a sandboxed program"
            raise ValueError(msg)
    return roots


def _make_write_dirs(permissions: Permissions) -> None:
    """The kernel grants rights on what exists: a missing ``write`` path is made a directory."""
    for path in permissions.write_paths():
        os.makedirs(path, mode=0o700, exist_ok=True)


def _sandbox(name: str, permissions: Permissions, roots: tuple[str, ...], proxy_port: int) -> Sandbox:
    return Sandbox(
        pack=name,
        permissions=permissions.resolved(),
        temp_dir=os.path.realpath(tempfile.mkdtemp(prefix=f"lorenz-{name}-")),
        proxy_port=proxy_port,
        runtime_paths=roots,
    )


def _unstructure(sandbox: Sandbox) -> dict[str, object]:
    return CONVERTER.unstructure(sandbox)  # type: ignore[no-any-return]
