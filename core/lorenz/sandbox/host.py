"""The host's side of one sandboxed pack: the kernel check, the private temporary directory, the
egress proxy, and the permission a failed call lacked when the proxy refused it something.

Fail closed: where the kernel cannot confine the process, the pack does not start (its error names
the missing feature) unless ``server.sandbox_fallback: warn``, which runs it merely isolated.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence

from lorenz.results import ToolResult, tool_failure

from . import landlock
from .permissions import Permissions
from .policy import Denial, Sandbox, denial_message, private_dirs, runtime_paths, sandbox_env
from .proxy import EgressProxy

__all__ = ["PackSandbox", "SandboxUnavailable"]

logger = logging.getLogger("lorenz.sandbox")


class SandboxUnavailable(Exception):
    """The kernel lacks what the pack's policy needs; the message names the feature."""


class PackSandbox:
    """What the host runs for one sandboxed pack (on the isolation loop), around its processes."""

    def __init__(
        self,
        pack: str,
        permissions: Permissions,
        *,
        fallback: str,
        workflow_dir: str | None,
        sys_path: Sequence[str],
        plugin_files: Sequence[str] = (),
    ) -> None:
        self.pack = pack
        self.permissions = permissions
        self.fallback = fallback
        self._forbidden = private_dirs(workflow_dir)
        #: The pack's own package, readable wherever it lives (an editable project).
        self._plugin_files = tuple(plugin_files)
        self._sys_path = tuple(sys_path)
        #: What the processes are launched with (``None``: unconfined, after a ``warn`` fallback).
        self.sandbox: Sandbox | None = None
        self.proxy: EgressProxy | None = None
        self.denials = 0
        #: What the pack's ``permissions(settings)`` gave in a child, before the operator's additions.
        self.computed: Permissions | None = None

    async def start(self) -> Sandbox | None:
        """Set up the policy; raises :class:`SandboxUnavailable` when the kernel cannot enforce it."""
        missing = landlock.missing_feature(landlock.abi_version(), network=True)
        if missing is not None:
            message = f"pack {self.pack} is sandboxed (server.sandboxed_packs) but this kernel lacks {missing}"
            if self.fallback != "warn":
                raise SandboxUnavailable(
                    f"{message}; it was not started (server.sandbox_fallback: warn runs it anyway)"
                )
            logger.warning("lorenz: %s; running it unconfined (server.sandbox_fallback: warn)", message)
            return None
        self._make_write_dirs()
        self.proxy = EgressProxy(self.pack, self.permissions)
        await self.proxy.start()
        self.sandbox = self._sandbox(self.proxy.port)
        logger.info("lorenz: pack %s is sandboxed (%s)", self.pack, self.permissions.describe())
        return self.sandbox

    def _make_write_dirs(self) -> None:
        """The kernel grants rights on what exists: a missing ``write`` path is made a directory."""
        for path in self.permissions.write_paths():
            if not os.path.lexists(path):
                try:
                    os.makedirs(path, mode=0o700, exist_ok=True)
                except OSError as exc:
                    logger.warning("lorenz: pack %s: cannot create %s to write in: %s", self.pack, path, exc)

    def _sandbox(self, proxy_port: int) -> Sandbox:
        temp_dir = tempfile.mkdtemp(prefix=f"lorenz-{self.pack}-")
        return Sandbox(
            pack=self.pack,
            permissions=self.permissions.resolved(),
            temp_dir=os.path.realpath(temp_dir),
            proxy_port=proxy_port,
            runtime_paths=runtime_paths(self._sys_path or sys.path, self._forbidden) + self._plugin_files,
        )

    def env(self, env: Mapping[str, str]) -> dict[str, str]:
        """The process's environment: reduced to the declared variables when confined."""
        return sandbox_env(env, self.sandbox) if self.sandbox is not None else dict(env)

    def explain(self, result: ToolResult, since: float) -> ToolResult:
        """A failed call during which the proxy refused a host: the permission it lacked."""
        if result.success or self.proxy is None:
            return result
        refused = self.proxy.denials_since(since)
        if not refused:
            return result
        return self.denied(Denial(kind="network", target=refused[0]))

    def denied(self, denial: Denial) -> ToolResult:
        self.denials += 1
        return tool_failure(denial_message(self.pack, denial))

    async def aclose(self) -> None:
        if self.proxy is not None:
            await self.proxy.aclose()
        if self.sandbox is not None:
            shutil.rmtree(self.sandbox.temp_dir, ignore_errors=True)
