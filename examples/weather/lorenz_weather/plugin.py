"""Entry point ``lorenz.tool_packs: weather``: registers the ``weather`` pack."""

from __future__ import annotations

from collections.abc import Callable

from lorenz import ToolProvider, hookimpl

from .tools import PACK

__all__ = ["lorenz_register_tool_packs"]


@hookimpl
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    """Pack ``weather``: forecasts for a fixed set of cities, computed, never fetched."""
    register(PACK)
