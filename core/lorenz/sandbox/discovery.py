"""The strict policy of the short-lived children that import a plugin before any of its packs runs:
the discovery survey and the computing of permissions from settings.

They read the Python installation, the import path and the system's libraries, write a private
temporary directory, and nothing else: no declared paths, no network (no TCP connect or bind, no
proxy), no programs, a minimal environment. Fail closed like a pack's sandbox
(``server.sandbox_fallback``).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence

from . import landlock
from .host import SandboxUnavailable
from .permissions import Permissions
from .policy import Sandbox, private_dirs, runtime_paths, sandbox_env

__all__ = ["child_sandbox", "discard", "referenced_names", "strict_env"]

logger = logging.getLogger("lorenz.sandbox")

_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def child_sandbox(
    what: str,
    *,
    fallback: str,
    workflow_dir: str | None,
    sys_path: Sequence[str],
    reason: str = "server.sandboxed_packs",
    plugin_files: Sequence[str] = (),
) -> Sandbox | None:
    """The strict policy for the child importing ``what`` (``plugin acme (acme-tools 1.0)``);
    ``None`` after a ``warn`` fallback. Raises :class:`SandboxUnavailable` naming what the kernel
    lacks. ``reason``: why it is confined (``server.sandboxed_packs``, where the fallback applies).

    No import-path entry holding the workflow's directory, the current one or ``HOME`` is readable
    (``python -m`` puts the current directory on the path); ``plugin_files``, the plugin's own
    package, is, wherever it lives (an editable project in one of those)."""
    missing = landlock.missing_feature(landlock.abi_version(), network=True)
    if missing is not None:
        message = f"{what} is imported confined ({reason}) but this kernel lacks {missing}"
        if fallback != "warn":
            loosen = " (server.sandbox_fallback: warn imports it anyway)" if reason == "server.sandboxed_packs" else ""
            raise SandboxUnavailable(f"{message}; it was not imported{loosen}")
        logger.warning("lorenz: %s; importing it unconfined (server.sandbox_fallback: warn)", message)
        return None
    return Sandbox(
        pack=what,
        permissions=Permissions(),
        temp_dir=os.path.realpath(tempfile.mkdtemp(prefix="lorenz-import-")),
        proxy_port=None,  # no port at all: every TCP connect and bind is refused
        runtime_paths=runtime_paths(sys_path, private_dirs(workflow_dir)) + tuple(plugin_files),
    )


def strict_env(env: Mapping[str, str], sandbox: Sandbox, *, keep: Iterable[str] = ()) -> dict[str, str]:
    """The child's environment: the harmless variables, ``TMPDIR`` and ``HOME`` at its temporary
    directory, plus ``keep`` (names) as ``env`` has them."""
    out = sandbox_env(env, sandbox)
    out.update({name: env[name] for name in keep if name in env})
    return out


def referenced_names(value: object) -> set[str]:
    """The ``$NAME`` and ``${NAME}`` references in the strings of ``value`` (settings data)."""
    if isinstance(value, str):
        return set(_REFERENCE.findall(value))
    if isinstance(value, Mapping):
        return {name for item in value.values() for name in referenced_names(item)}
    if isinstance(value, list | tuple):
        return {name for item in value for name in referenced_names(item)}
    return set()


def discard(sandbox: Sandbox | None) -> None:
    """Remove the child's temporary directory once it is gone."""
    if sandbox is not None:
        shutil.rmtree(sandbox.temp_dir, ignore_errors=True)
