"""Entry point of ``lorenz-jira``: the ``jira`` and ``jira-mcp`` trackers and the ``jira`` pack."""

from __future__ import annotations

from collections.abc import Callable

from lorenz import LazyPack, ToolProvider, TrackerProvider, hookimpl

from .tracker import JiraMcpTracker, JiraTracker


@hookimpl
def lorenz_register_trackers(register: Callable[[TrackerProvider], None]) -> None:
    """Register ``jira`` (REST v3) and ``jira-mcp`` (remote MCP server)."""
    register(JiraTracker())
    register(JiraMcpTracker())


@hookimpl
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    """Register the ``jira`` pack both trackers mount."""
    register(LazyPack("jira", "lorenz_jira.tools:JiraToolPack"))  # its tools load when listed or mounted
