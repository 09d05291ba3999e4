"""What the workflow's catalog shapers (``lorenz_catalog``) show one caller: its tools, and so the
packs whose resources and prompts it sees. Without shapers a caller sees what its grant allows."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import mcp_types as types

from lorenz.host.grants import Grant, origin_of, visible_packs
from lorenz.toolcall.catalog import CatalogFailed, shape_catalog

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

    from lorenz.contracts import ToolSpec
    from lorenz.host.reload.live import Snapshot

__all__ = ["CatalogFailed", "offer_packs", "shaped", "shaped_tools", "shaped_wire"]


def shaped(snapshot: Snapshot) -> bool:
    """Whether the workflow names a catalog shaper."""
    extensions = snapshot.workspace.extensions
    return extensions is not None and bool(extensions.shapers)


async def shaped_tools(
    snapshot: Snapshot, grant: Grant, ctx: ServerRequestContext[Any, Any] | None
) -> tuple[ToolSpec, ...]:
    """The tools the workflow's catalog shapers show this caller, within its grant; raises
    :class:`CatalogFailed` when one failed (the caller then sees and may call nothing)."""
    specs = snapshot.specs if grant.everything else [spec for spec in snapshot.specs if grant.allows(spec.name)]
    extensions = snapshot.workspace.extensions
    shapers = extensions.shapers if extensions is not None else ()
    settings = snapshot.settings
    listing = origin_of(grant, ctx).listing()
    return await shape_catalog(
        shapers, specs, listing, budget=settings.server.tool_timeout_seconds, secrets=settings.secrets
    )


async def shaped_wire(
    snapshot: Snapshot, grant: Grant, ctx: ServerRequestContext[Any, Any], tools: list[types.Tool]
) -> list[types.Tool]:
    """``tools/list`` as the catalog shapers show it to this caller (nothing when one failed)."""
    try:
        shown = await shaped_tools(snapshot, grant, ctx)
    except CatalogFailed:
        return []  # fail closed: logged where it failed
    wire = {tool.name: tool for tool in tools}
    return [
        wire[spec.name] if spec is snapshot.by_name.get(spec.name) else types.Tool.model_validate(spec.to_wire())
        for spec in shown
    ]


async def offer_packs(snapshot: Snapshot, grant: Grant, ctx: ServerRequestContext[Any, Any] | None) -> set[str] | None:
    """The packs whose resources and prompts this caller sees (``None``: every pack): those its
    grant allows a tool of and, with shapers, of which the shapers show it a tool."""
    visible = visible_packs(snapshot, grant)
    if not shaped(snapshot):
        return visible
    try:
        shown = await shaped_tools(snapshot, grant, ctx)
    except CatalogFailed:
        return set()  # fail closed, as its tools
    packs = {snapshot.pack_of(spec.name) for spec in shown}
    return {pack for pack in packs if pack is not None and (visible is None or pack in visible)}
