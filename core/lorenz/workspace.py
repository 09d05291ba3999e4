"""A workspace: one workflow's settings over the discovered plugins, ready to list and call tools.

This is the composition root the CLI, the MCP host and ``lorenz.testing`` share.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import frozen

from .contracts import ToolContext, ToolProvider, ToolSpec, TrackerContext
from .mount import execute_mounted_tool, mounted_pack_names, mounted_packs, mounted_tool_specs
from .plugins import Discovery, discover
from .results import ToolResult
from .schemas import compile_schema, validate_arguments
from .settings import (
    EMBEDDED_DEFAULT_CONFIG,
    ConfigError,
    load_settings,
    parse_config,
    validate_dispatch_config,
    workflow_path,
)
from .settings.model import Settings

if TYPE_CHECKING:
    import httpx

    from .contracts import RuntimeTrackerClient

__all__ = ["Workspace", "find_workflow", "open_workspace"]


@frozen(kw_only=True)
class Workspace:
    """Validated settings plus the registries they were validated against."""

    settings: Settings
    discovery: Discovery
    #: True when no WORKFLOW.md was found and the embedded default (the local board) is used.
    embedded_default: bool = False

    def pack_names(self) -> list[str]:
        return mounted_pack_names(self.settings, self.discovery.tools, self.discovery.trackers)

    def packs(self) -> list[ToolProvider]:
        return mounted_packs(self.settings, self.discovery.tools, self.discovery.trackers)

    def tool_specs(self) -> list[ToolSpec]:
        """The flat tool namespace; raises on a collision or an unregistered pack."""
        return mounted_tool_specs(self.packs(), self.settings)

    def tool_owners(self) -> dict[str, str]:
        """``{tool name: pack name}`` for every mounted tool."""
        owners: dict[str, str] = {}
        for pack in self.packs():
            for spec in pack.tool_specs(self.settings):
                owners.setdefault(spec.name, pack.name)
        return owners

    async def call(self, name: str, arguments: Any, http: httpx.AsyncClient) -> ToolResult:
        """Run one mounted tool, its arguments checked against its ``inputSchema`` first (as the
        MCP host does); never raises."""
        packs = self.packs()
        failure = self._check_arguments(packs, name, arguments)
        if failure is not None:
            return failure
        context = ToolContext(settings=self.settings, http=http)
        return await execute_mounted_tool(packs, name, arguments, context)

    def _check_arguments(self, packs: Sequence[ToolProvider], name: str, arguments: Any) -> ToolResult | None:
        for pack in packs:
            try:
                specs = pack.tool_specs(self.settings)
            except Exception:  # execute_mounted_tool reports it
                return None
            spec = next((spec for spec in specs if spec.name == name), None)
            if spec is not None:
                if getattr(pack, "validates_arguments", False):  # typed packs name the key themselves
                    return None
                return validate_arguments(name, arguments, compile_schema(spec.input_schema))
        return None

    def tracker_client(
        self, *, http: httpx.AsyncClient | None = None, env: Mapping[str, str] | None = None
    ) -> RuntimeTrackerClient:
        """A runtime client of the dispatch tracker."""
        provider = self.discovery.trackers.require(self.settings.tracker.kind)
        context = TrackerContext(env=dict(os.environ if env is None else env), cwd=Path.cwd(), http=http)
        return provider.create_client(self.settings, context)


def find_workflow(explicit: str | os.PathLike[str] | None, *, cwd: Path, env: Mapping[str, str]) -> Path | None:
    """The workflow to load: ``explicit``, else ``LORENZ_WORKFLOW``, else ``./WORKFLOW.md``.

    Returns ``None`` only when nothing was named and ``./WORKFLOW.md`` does not exist, which
    means "use the embedded default". A named file that is missing is still returned, so loading
    it reports ``missing_workflow_file``.
    """
    if explicit is not None:
        path = Path(explicit)
        return path if path.is_absolute() else cwd / path
    path = workflow_path(cwd, env)
    if env.get("LORENZ_WORKFLOW") or path.exists():
        return path
    return None


def open_workspace(
    workflow: str | os.PathLike[str] | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    discovery: Discovery | None = None,
    plugins: Sequence[object] = (),
) -> Workspace:
    """Load, parse and validate a workflow against the discovered plugins, and check it mounts.

    Raises ``ConfigError``, ``RegistryError`` or ``MountError`` with the exact message of the
    first problem.
    """
    cwd = Path.cwd() if cwd is None else cwd
    env = dict(os.environ if env is None else env)
    discovery = discovery if discovery is not None else discover(plugins=plugins, env=env)
    path = find_workflow(workflow, cwd=cwd, env=env)
    if path is None:
        kind = EMBEDDED_DEFAULT_CONFIG["tracker"]["kind"]
        if discovery.trackers.get(kind) is None:
            msg = (
                f"no WORKFLOW.md in {cwd}, and the embedded default (the {kind} board) needs the {kind} "
                f"tracker plugin, which is not installed: pip install lorenz-{kind} (from a checkout: "
                f"pip install -e plugins/{kind}), or write a WORKFLOW.md"
            )
            raise ConfigError(msg)
        settings = parse_config(EMBEDDED_DEFAULT_CONFIG, env=env, trackers=discovery.trackers, base_dir=cwd)
    else:
        settings = load_settings(path, env=env, trackers=discovery.trackers)
    validate_dispatch_config(settings, discovery.trackers, discovery.tools)
    workspace = Workspace(settings=settings, discovery=discovery, embedded_default=path is None)
    workspace.tool_specs()  # a collision or unknown pack fails here, not on the first call
    return workspace
