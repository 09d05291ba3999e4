"""Entry point of ``lorenz-mcp``: the ``mcp`` pack."""

from __future__ import annotations

from collections.abc import Callable

from lorenz import LazyPack, ToolProvider, hookimpl


@hookimpl
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    """Register the ``mcp`` pack (one upstream MCP server per mount)."""
    register(LazyPack("mcp", "lorenz_mcp.pack:McpPack"))  # its code loads when mounted or listed
