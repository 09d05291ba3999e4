"""A workspace: one workflow's settings over the discovered plugins, ready to list and call tools.

This is the composition root the CLI, the MCP host and ``lorenz.testing`` share.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

from .contracts import ToolContext, ToolProvider, ToolSpec, TrackerContext
from .execution import ToolRunner
from .isolation.plan import isolation_hint
from .isolation.pool import IsolationPool
from .mount import InstalledTool, Mounted, installed_tools, mount, unmounted_tool_failure
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
from .wire import refuse_lone_surrogates

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
    #: The processes of the packs ``server.isolated_packs`` isolates (shared by a served
    #: workflow's reloads, so a reload keeps the processes of the packs it keeps).
    isolation: IsolationPool = field(factory=IsolationPool)

    @functools.cached_property
    def mounted(self) -> Mounted:
        """The mounted packs and their tools (computed once), and the packs left out as broken."""
        return mount(self.settings, self.discovery, self.isolation)

    def close(self) -> None:
        """Stop the isolated packs' processes (also done at interpreter exit)."""
        self.isolation.close()

    @functools.cached_property
    def installed_tools(self) -> list[InstalledTool]:
        """Every installed pack's tools, each marked mounted or not (computed once)."""
        return installed_tools(self.settings, self.discovery, self.mounted)

    def unsupported(self, name: str) -> ToolResult:
        """The failure for a tool no mounted pack declares, saying how to mount it if one installed does."""
        return unmounted_tool_failure(name, self.mounted, self.installed_tools)

    def pack_names(self) -> list[str]:
        return [pack.name for pack in self.mounted.packs]

    def packs(self) -> list[ToolProvider]:
        return list(self.mounted.packs)

    def tool_specs(self) -> list[ToolSpec]:
        """The flat tool namespace of the packs that mounted."""
        return list(self.mounted.specs)

    def tool_owners(self) -> dict[str, str]:
        """``{tool name: pack name}`` for every mounted tool."""
        return {name: pack.name for name, pack in self.mounted.owners.items()}

    async def call(self, name: str, arguments: Any, http: httpx.AsyncClient) -> ToolResult:
        """Run one mounted tool as the MCP host does (arguments checked against its ``inputSchema``
        first, within the tool timeout); never raises."""
        name = name.strip()
        pack = self.mounted.owners.get(name)
        context = ToolContext(settings=self.settings, http=http)
        if pack is None:
            return self.unsupported(name)
        refused = refuse_lone_surrogates(name, arguments)
        if refused is None and not getattr(pack, "validates_arguments", False):  # typed packs name the key
            spec = next(spec for spec in self.mounted.specs if spec.name == name)
            refused = validate_arguments(name, arguments, compile_schema(spec.input_schema))
        if refused is not None:
            return refused
        server = self.settings.server
        return await ToolRunner().run(
            pack, name, arguments, context, time_limit=server.tool_timeout_seconds, concurrency=server.pack_concurrency
        )

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
    isolation: IsolationPool | None = None,
) -> Workspace:
    """Load, parse and validate a workflow against the discovered plugins, and check it mounts.

    Raises ``ConfigError``, ``RegistryError`` or ``MountError`` with the exact message of the
    first problem. A pack that is broken (its plugin failed, its ``tool_specs`` raised) is left
    out and listed in ``workspace.mounted.failures``. Isolated packs are started in ``isolation``
    (a new pool when not given).
    """
    cwd = Path.cwd() if cwd is None else cwd
    env = dict(os.environ if env is None else env)
    path = find_workflow(workflow, cwd=cwd, env=env)
    if discovery is None:
        discovery = discover(plugins=plugins, env=env, isolate=isolation_hint(path))
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
    validate_dispatch_config(settings, discovery.trackers)
    workspace = Workspace(
        settings=settings, discovery=discovery, embedded_default=path is None, isolation=isolation or IsolationPool()
    )
    workspace.mounted  # noqa: B018 - an unknown pack, a bad option or a collision fails here, not on the first call
    return workspace
