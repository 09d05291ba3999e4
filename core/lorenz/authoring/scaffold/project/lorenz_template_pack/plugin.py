"""Entry point ``lorenz.tool_packs: template_pack``."""

from __future__ import annotations

from collections.abc import Callable

from lorenz import ToolProvider, hookimpl

from .tools import PACK

__all__ = ["lorenz_register_tool_packs"]


@hookimpl
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    """Pack ``template_pack``."""
    register(PACK)
