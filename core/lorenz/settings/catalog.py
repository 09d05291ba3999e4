"""``server.catalog`` → :class:`CatalogSettings`: how much of a large catalog each caller is served."""

from __future__ import annotations

from attrs import frozen

from ._kinds import PositiveInt
from .errors import ConfigError
from .model import CatalogSettings

__all__ = ["CatalogSection", "parse_catalog"]


@frozen(kw_only=True)
class CatalogSection:
    budget_tokens: PositiveInt | None = None
    max_tools: PositiveInt | None = None
    pinned: tuple[str, ...] = ()
    search: bool = True


def parse_catalog(section: CatalogSection | None) -> CatalogSettings | None:
    """A budget in tokens, in tools, or both (the tighter wins); pinned globs are tool names."""
    if section is None:
        return None
    if section.budget_tokens is None and section.max_tools is None:
        raise ConfigError(
            "server.catalog must set budget_tokens, max_tools or both: the budget each caller's list fits"
        )
    for index, glob in enumerate(section.pinned):
        if not glob.strip():
            raise ConfigError(f"server.catalog.pinned.{index} must be a tool name or glob, not empty")
    return CatalogSettings(
        budget_tokens=section.budget_tokens,
        max_tools=section.max_tools,
        pinned=section.pinned,
        search=section.search,
    )
