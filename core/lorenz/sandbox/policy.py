"""What a sandboxed pack's process may touch: the :class:`Sandbox` the host sends it, the Landlock
ruleset built from it, the environment it starts with, and how a denied access is explained.

Read-only: the Python installation, the import path (the pack's distribution among it), system
libraries, certificates and name-service files. Read-write: a private temporary directory and the
declared ``write`` paths. The network: only TCP to the host's egress proxy (:mod:`lorenz.sandbox.proxy`),
no other socket (:mod:`lorenz.sandbox.seccomp`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from attrs import frozen

from . import landlock
from .permissions import Permissions

__all__ = [
    "ALWAYS_PASSED_ENV",
    "Denial",
    "Sandbox",
    "denial_message",
    "private_dirs",
    "ruleset_for",
    "runtime_paths",
    "sandbox_env",
]

#: System locations every Python process reads (missing ones are skipped).
_SYSTEM_READ = (
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc/ssl",
    "/etc/pki",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
    "/etc/localtime",
    "/etc/mime.types",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/proc/self",
    "/dev/urandom",
    "/dev/random",
)
_SYSTEM_WRITE = ("/dev/null", "/dev/zero", "/dev/tty")

#: Variables a sandboxed process keeps besides the declared ones: none holds a credential.
ALWAYS_PASSED_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "PYTHONHOME", "MALLOC_ARENA_MAX")


@frozen(kw_only=True)
class Sandbox:
    """A sandboxed pack's policy, as the launch frame carries it (JSON data only)."""

    pack: str
    permissions: Permissions
    #: The private temporary directory (read-write; ``TMPDIR`` and ``HOME`` point at it).
    temp_dir: str
    #: The host's egress proxy port on loopback (``None``: no network at all).
    proxy_port: int | None = None
    #: Read-only roots beyond the system's: the interpreter, the import path.
    runtime_paths: tuple[str, ...] = ()


def runtime_paths(import_path: Sequence[str], forbidden: Sequence[str]) -> tuple[str, ...]:
    """The interpreter's prefixes and the import path, less any entry holding a ``forbidden``
    directory (the workflow's own: an import path of ``.`` must not expose its secrets), plus
    where the symbolic links directly in an import-path directory lead (a package installed as a
    link: the kernel checks the path it resolves to)."""
    private = [os.path.realpath(directory) for directory in forbidden]
    out: list[str] = []

    def add(path: str) -> bool:
        if path not in out and os.path.exists(path) and not any(_under(d, path) for d in private):
            out.append(path)
            return True
        return False

    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        add(os.path.realpath(prefix))
    for entry in import_path:
        path = os.path.realpath(entry or os.curdir)
        if add(path):
            for target in _link_targets(path):
                add(target)
    return tuple(out)


def private_dirs(workflow_dir: str | None) -> list[str]:
    """What no import-path entry may hold to be readable by a confined process: the workflow's
    directory, the current one (``python -m`` puts it on the path) and ``HOME``."""
    return [path for path in (workflow_dir, os.getcwd(), os.environ.get("HOME")) if path]


def _link_targets(directory: str) -> list[str]:
    try:
        with os.scandir(directory) as entries:
            return [os.path.realpath(entry.path) for entry in entries if entry.is_symlink()]
    except OSError:  # a zip file, or gone
        return []


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def ruleset_for(sandbox: Sandbox, *, execute_runtime: bool = False) -> landlock.Ruleset:
    """The Landlock ruleset of ``sandbox``: no right anywhere but what is granted here
    (``execute_runtime``: the system's and runtime's directories are executable in any case)."""
    permissions = sandbox.permissions
    execute = landlock.EXECUTE if permissions.subprocess else 0
    runtime = landlock.READ | (landlock.EXECUTE if execute_runtime else execute)
    paths: list[tuple[str, int]] = [(path, runtime) for path in _SYSTEM_READ]
    paths += [(path, runtime) for path in sandbox.runtime_paths]
    paths += [(path, landlock.READ_FILE | landlock.WRITE_FILE) for path in _SYSTEM_WRITE]
    paths += [(path, landlock.READ) for path in permissions.read_paths()]
    paths += [(path, landlock.ALL & ~landlock.EXECUTE | execute) for path in permissions.write_paths()]
    paths.append((sandbox.temp_dir, landlock.ALL & ~landlock.EXECUTE | execute))
    ports = (sandbox.proxy_port,) if sandbox.proxy_port is not None else ()
    return landlock.Ruleset(paths=tuple(paths), connect_ports=ports)


def sandbox_env(env: Mapping[str, str], sandbox: Sandbox) -> dict[str, str]:
    """The sandboxed process's environment: the declared variables, harmless ones, its temporary
    directory as ``TMPDIR`` and ``HOME``, and the egress proxy for every client that honours one."""
    keep = set(ALWAYS_PASSED_ENV) | set(sandbox.permissions.env)
    out = {name: value for name, value in env.items() if name in keep or name.startswith("LC_")}
    out["TMPDIR"] = sandbox.temp_dir
    out["PYTHONDONTWRITEBYTECODE"] = "1"  # the import path is read-only to it and its programs
    if "HOME" not in sandbox.permissions.env:  # a pack that resolves ``~`` declares it
        out["HOME"] = sandbox.temp_dir
    if sandbox.proxy_port is not None:
        proxy = f"http://127.0.0.1:{sandbox.proxy_port}"
        for name in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"):
            out[name] = out[name.lower()] = proxy
    for name in ("NO_PROXY", "no_proxy"):
        out.pop(name, None)
    return out


@frozen(kw_only=True)
class Denial:
    """One access the sandbox refused: ``kind`` is the permission to add (``network``, ``read``,
    ``write``, ``subprocess``) or what no permission grants (``socket``: other than TCP, ``resolve``:
    a name, ``listen``, ``signal``, ``ptrace``), ``target`` what was reached for."""

    kind: str
    target: str


#: What no permission grants a sandboxed pack: the remedy is not to sandbox it.
_UNSANDBOXED = "no permission grants it (only leaving the pack out of server.sandboxed_packs does)"


def denial_message(pack: str, denial: Denial) -> str:
    """``pack acme tried to connect to evil.example:443; add it to tools.acme.permissions.network``."""
    target = denial.target
    through_proxy = f"add the host to tools.{pack}.permissions.network and reach it over HTTP(S) through the proxy"
    if denial.kind == "subprocess":
        return f"pack {pack} tried to run {target}; set tools.{pack}.permissions.subprocess: true"
    if denial.kind == "socket":
        return (
            f"pack {pack} tried to open a {target} socket; a sandboxed pack has TCP to its proxy only: {through_proxy}"
        )
    if denial.kind == "resolve":
        return (
            f"pack {pack} tried to resolve {target}; a sandboxed pack resolves names through its proxy: {through_proxy}"
        )
    if denial.kind == "listen":
        return f"pack {pack} tried to listen on {target}; a sandboxed pack accepts no connections: {_UNSANDBOXED}"
    if denial.kind == "signal":
        return f"pack {pack} tried to signal {_process(int(target))} outside its sandbox; {_UNSANDBOXED}"
    if denial.kind == "ptrace":
        return f"pack {pack} tried to trace {target} (ptrace); {_UNSANDBOXED}"
    verb = {"network": "connect to", "read": "read", "write": "write to"}.get(denial.kind, "reach")
    return f"pack {pack} tried to {verb} {denial.target}; add it to tools.{pack}.permissions.{denial.kind}"


def _process(pid: int) -> str:
    """What ``kill(pid, ...)`` reaches, in words."""
    if pid > 0:
        return f"process {pid}"
    if pid == -1:
        return "every process"
    return f"process group {-pid}" if pid else "its process group"
