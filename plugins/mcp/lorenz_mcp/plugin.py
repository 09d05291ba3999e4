"""Entry point of ``lorenz-mcp``: the ``mcp`` pack."""

from __future__ import annotations

from collections.abc import Callable

from lorenz import ToolProvider, hookimpl

from .pack import McpPack


@hookimpl
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    """Register the ``mcp`` pack (one upstream MCP server per mount)."""
    register(McpPack())
