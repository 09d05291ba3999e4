"""Entry point ``lorenz.tool_packs: local``: registers the ``local`` tracker and pack."""

from __future__ import annotations

from collections.abc import Callable

from lorenz import LazyPack, ToolProvider, TrackerProvider, hookimpl

from .tracker import LocalTrackerProvider

__all__ = ["PACK", "TRACKER", "lorenz_register_tool_packs", "lorenz_register_trackers"]

TRACKER = LocalTrackerProvider()
PACK = LazyPack("local", "lorenz_local.pack:LocalToolPack")  # its tools load when listed or mounted


@hookimpl
def lorenz_register_trackers(register: Callable[[TrackerProvider], None]) -> None:
    """Tracker kind ``local``: the Markdown board."""
    register(TRACKER)


@hookimpl
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    """Pack ``local``: the five board tools."""
    register(PACK)
