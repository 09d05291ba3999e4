"""One loaded configuration and what serving it needs (:class:`Snapshot`), and the snapshot an
HTTP request was admitted with."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from attrs import frozen

from lorenz.contracts import ToolProvider, ToolSpec
from lorenz.host.scope import REQUEST_SNAPSHOT
from lorenz.mounting.lifecycle import attach_packs, detach_packs, pack_health
from lorenz.toolcall.call import ToolTable

if TYPE_CHECKING:
    from lorenz.mounting.model import PackFailure
    from lorenz.plugins.model import PluginFailure
    from lorenz.workspace import Workspace

__all__ = ["Snapshot", "request_snapshot"]


@frozen(kw_only=True, eq=False)
class Snapshot:
    """One loaded configuration and what serving it needs, computed once per (re)load."""

    workspace: Workspace
    generation: int
    packs: tuple[ToolProvider, ...]
    specs: tuple[ToolSpec, ...]
    #: ``{tool name: the pack declaring it}``
    owners: Mapping[str, ToolProvider]
    #: What calling one of them needs, every schema compiled.
    tools: ToolTable
    #: The SDK's ``types.Tool`` objects, built lazily by the MCP layer and cached here.
    wire: dict[str, Any]

    @classmethod
    def build(cls, workspace: Workspace, generation: int) -> Snapshot:
        mounted = workspace.mounted
        specs = mounted.specs
        return cls(
            workspace=workspace,
            generation=generation,
            packs=mounted.packs,
            specs=specs,
            owners=mounted.owners,
            tools=workspace.tools.compile(),
            wire={},
        )

    @property
    def by_name(self) -> Mapping[str, ToolSpec]:
        return self.tools.by_name

    @property
    def settings(self) -> Any:
        return self.workspace.settings

    def pack_of(self, tool: str) -> str | None:
        pack = self.owners.get(tool)
        return pack.name if pack is not None else None

    def distribution_of(self, pack: str) -> str | None:
        """The distribution that registered ``pack`` (``None`` for an in-process plugin)."""
        owners: dict[str, str | None] | None = self.wire.get("distributions")
        if owners is None:  # built once per snapshot: every recorded call asks
            owners = {}
            for info in reversed(self.workspace.discovery.plugins):  # the first plugin naming a pack wins
                owners.update(dict.fromkeys(info.packs, info.distribution))
            self.wire["distributions"] = owners
        return owners.get(pack)

    def tool_scopes(self) -> Mapping[str, tuple[str, ...]]:
        """``{tool: its own OAuth scopes}`` for the tools that declare some (``ToolSpec.auth``)."""
        scopes: dict[str, tuple[str, ...]] | None = self.wire.get("tool_scopes")
        if scopes is None:  # built once per snapshot: every OAuth request asks
            scopes = self.wire["tool_scopes"] = {spec.name: spec.auth for spec in self.specs if spec.auth}
        return scopes

    @property
    def plugin_failures(self) -> tuple[PluginFailure, ...]:
        """Plugins that failed to load (discovery), shown on ``/healthz`` and the landing page."""
        return self.workspace.discovery.failures

    @property
    def pack_failures(self) -> tuple[PackFailure, ...]:
        """Mounted packs left out as broken, tools of a ``dynamic_tools`` pack left out, isolated
        packs marked failed for crashing too often, and mounted packs whose ``health`` names a
        problem now (an upstream that is down)."""
        return (
            *self.workspace.mounted.failures,
            *self.workspace.mounted.dropped,
            *self.workspace.isolation.failures(self.packs),
            *pack_health(self.packs, self.settings),
        )

    def attach(self, changed: Callable[[], None], updated: Callable[[str], None] = lambda uri: None) -> None:
        """Tell the packs this snapshot is about to be served (``changed``: re-mount; ``updated``: a
        resource changed; both from any thread)."""
        attach_packs(self.packs, self.settings, changed, updated)

    def detach(self) -> None:
        """Tell the packs this snapshot is no longer served."""
        detach_packs(self.packs, self.settings)

    def isolated_status(self) -> list[dict[str, Any]]:
        """The isolated packs' processes, for ``/healthz``."""
        return self.workspace.isolation.status(self.packs)

    @property
    def restart_needed(self) -> tuple[PluginFailure, ...]:
        """Plugins whose new code on disk this process cannot load: a restart would."""
        return self.workspace.discovery.restart_needed

    @property
    def degraded(self) -> bool:
        return bool(self.plugin_failures or self.pack_failures or self.restart_needed)


def request_snapshot(request: Any) -> Snapshot | None:
    """The snapshot an HTTP request was admitted with (``None`` for stdio, or none recorded)."""
    scope = getattr(request, "scope", None)
    snapshot = scope.get(REQUEST_SNAPSHOT) if isinstance(scope, dict) else None
    return snapshot if isinstance(snapshot, Snapshot) else None
