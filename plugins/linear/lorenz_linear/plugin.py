"""Lorenz plugin entry point (``lorenz.tool_packs``): the ``linear`` tracker and the ``linear`` pack."""

from __future__ import annotations

from collections.abc import Callable

from lorenz import LazyPack, ToolProvider, TrackerProvider, hookimpl

from .tracker import LinearTracker

TRACKER = LinearTracker()
PACK = LazyPack("linear", "lorenz_linear.tools:LinearToolPack")  # its tools load when listed or mounted


@hookimpl
def lorenz_register_trackers(register: Callable[[TrackerProvider], None]) -> None:
    register(TRACKER)


@hookimpl
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    register(PACK)
