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

from .contracts import ProgressSink, ToolContext, ToolProvider, ToolSpec, TrackerContext, serving_on
from .isolation.pool import IsolationPool
from .mounting.inventory import Inventory, installed_tools, unsupported_failure
from .mounting.model import Mounted
from .mounting.mount import mount
from .plugins.containment import PluginError, call_plugin
from .plugins.discovery import discover
from .plugins.hint import in_doubt, isolation_hint, mounts_hint, sandbox_hint
from .plugins.model import Discovery
from .plugins.validate_settings import validate_dispatch_config
from .results import ToolResult
from .settings import (
    EMBEDDED_DEFAULT_CONFIG,
    ConfigError,
    load_settings,
    parse_config,
    workflow_path,
)
from .settings.model import Settings
from .toolcall.enabled import EnabledTools

if TYPE_CHECKING:
    import httpx

    from .client_input import ClientInput
    from .contracts import RuntimeTrackerClient
    from .toolcall.call import ToolTable
    from .toolcall.extensions import Extensions
    from .toolcall.middleware import Layer

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
        # Packs keeping connections (lorenz-mcp's upstreams) run them on the loop the host serves on.
        with serving_on(self.isolation.home):
            return mount(self.settings, self.discovery, self.isolation)

    def close(self) -> None:
        """Stop the isolated packs' processes (also done at interpreter exit)."""
        self.isolation.close()

    @functools.cached_property
    def extensions(self) -> Extensions | None:
        """The middleware, catalog shapers and call-record sinks ``server.middleware`` names, built
        once (``None``: none, the common case)."""
        server = self.settings.server
        if not server.middleware and not server.middleware_options:
            return None  # and the chain's module (asyncio) stays unimported: listing commands start fast
        from .toolcall.extensions import build_extensions  # asyncio: only with middleware

        return build_extensions(self.settings, self.discovery)

    @property
    def middleware(self) -> tuple[Layer, ...]:
        """The call middleware ``server.middleware`` names (``()``: none)."""
        return self.extensions.layers if self.extensions is not None else ()

    @functools.cached_property
    def inventory(self) -> Inventory:
        """Every installed pack's tools, each marked mounted or not (computed once)."""
        return installed_tools(self.discovery, self.settings, self.mounted)

    def unsupported(self, name: str) -> ToolResult:
        """The failure for a tool no mounted pack serves, saying how to mount it if an installed one
        declares it (or why it is switched off)."""
        path = self.settings.workflow_path  # agents are told the file's name, never a server path
        return unsupported_failure(name, self.mounted, self.inventory, Path(path.name) if path is not None else None)

    def pack_names(self) -> list[str]:
        return [pack.name for pack in self.mounted.packs]

    def packs(self) -> list[ToolProvider]:
        return list(self.mounted.packs)

    def tool_specs(self) -> list[ToolSpec]:
        """The flat tool namespace of the packs that mounted."""
        return list(self.mounted.specs)

    def asking_tools(self) -> list[str]:
        """The served tools whose pack declares that they ask the client for input."""
        names: list[str] = []
        for pack in self.mounted.packs:
            declared = getattr(pack, "client_input_tools", None)
            if declared is None:
                continue
            try:
                found = call_plugin(pack.name, "client_input_tools", declared, self.settings)
            except PluginError:
                continue
            names.extend(name for name in found if self.mounted.owners.get(name) is pack)
        return names

    def tool_owners(self) -> dict[str, str]:
        """``{tool name: pack name}`` for every mounted tool."""
        return {name: pack.name for name, pack in self.mounted.owners.items()}

    @functools.cached_property
    def tools(self) -> ToolTable:
        """The mounted tools, as :func:`lorenz.toolcall.call.call_tool` calls them."""
        from .toolcall.call import ToolTable  # anyio: only when a tool runs

        specs, owners = self.mounted.specs, self.mounted.owners
        return ToolTable(
            settings=self.settings,
            specs=specs,
            owners=owners,
            unsupported=self.unsupported,
            middleware=self.middleware,
        )

    async def call(
        self,
        name: str,
        arguments: Any,
        http: httpx.AsyncClient,
        *,
        progress: ProgressSink | None = None,
        client_input: ClientInput | None = None,
    ) -> ToolResult:
        """Run one mounted tool as the MCP host does (:func:`lorenz.toolcall.call.call_tool`); its
        result, or the failure that replaced it. Never raises."""
        from .toolcall.call import call_tool  # anyio: only when a tool runs
        from .toolcall.execution import ToolRunner  # anyio: only when a tool runs

        def context() -> ToolContext:
            # In-process: no token, so every mounted tool that is not switched off.
            enabled = EnabledTools(self.mounted.owners)
            return ToolContext(
                settings=self.settings, http=http, progress_sink=progress, enabled=enabled, client_input=client_input
            )

        return (await call_tool(self.tools, name.strip(), arguments, context, ToolRunner())).result

    @functools.cached_property
    def project_url(self) -> str | None:
        """The dispatch tracker's project page (its optional ``project_url`` hook), if it has one."""
        provider = self.discovery.trackers.get(self.settings.tracker.kind)
        hook = getattr(provider, "project_url", None)
        if not callable(hook):
            return None
        try:
            url = call_plugin(f"tracker {self.settings.tracker.kind}", "project_url", hook, self.settings)
        except PluginError:
            return None
        return url if isinstance(url, str) and url.startswith(("http://", "https://")) else None

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
    listing: bool = False,
) -> Workspace:
    """Load, parse and validate a workflow against the discovered plugins, and check it mounts.

    Raises ``ConfigError``, ``RegistryError`` or ``MountError`` with the exact message of the
    first problem. A pack that is broken (its plugin failed, its ``tool_specs`` raised) is left
    out and listed in ``workspace.mounted.failures``. Isolated packs are started in ``isolation``
    (a new pool when not given). ``listing``: with no WORKFLOW.md and no plugin for the embedded
    default's tracker, an empty workflow (nothing mounted) instead of that error, which is all
    listing the installed tools needs.
    """
    cwd = Path.cwd() if cwd is None else cwd
    env = dict(os.environ if env is None else env)
    path = find_workflow(workflow, cwd=cwd, env=env)
    if discovery is None:
        discovery = discover(
            plugins=plugins,
            env=env,
            isolate=isolation_hint(path),
            sandbox=sandbox_hint(path),
            unimported=in_doubt(path),  # its parse fails below: no third-party code runs for it
            mounts=mounts_hint(path),
        )
    bare = False
    if path is None:
        kind = EMBEDDED_DEFAULT_CONFIG["tracker"]["kind"]
        bare = listing and discovery.trackers.get(kind) is None
        if discovery.trackers.get(kind) is None and not bare:
            msg = (
                f"no WORKFLOW.md in {cwd}, and the embedded default (the {kind} board) needs the {kind} "
                f"tracker plugin, which is not installed: pip install lorenz-{kind} (from a checkout: "
                f"pip install -e plugins/{kind}), or write a WORKFLOW.md"
            )
            raise ConfigError(msg)
        config = {} if bare else EMBEDDED_DEFAULT_CONFIG
        settings = parse_config(config, env=env, trackers=discovery.trackers, base_dir=cwd)
    else:
        settings = load_settings(path, env=env, trackers=discovery.trackers)
    if not bare:
        validate_dispatch_config(settings, discovery.trackers)
    workspace = Workspace(
        settings=settings,
        discovery=discovery,
        embedded_default=path is None and not bare,
        isolation=isolation or IsolationPool(),
    )
    workspace.mounted  # noqa: B018 - an unknown pack, a bad option or a collision fails here, not on the first call
    workspace.extensions  # noqa: B018 - and so does an unknown middleware or a bad option of one
    return workspace
