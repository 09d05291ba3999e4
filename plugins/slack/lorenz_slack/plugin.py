"""Entry point of ``lorenz-slack``: registers the ``slack`` tracker and the ``slack`` pack."""

from __future__ import annotations

from collections.abc import Callable

from lorenz import LazyPack, ToolProvider, TrackerProvider, hookimpl

from .tracker import SlackTrackerProvider

TRACKER = SlackTrackerProvider()
PACK = LazyPack("slack", "lorenz_slack.tools:SlackToolPack")  # its tools load when listed or mounted


@hookimpl
def lorenz_register_trackers(register: Callable[[TrackerProvider], None]) -> None:
    """Register tracker ``slack``."""
    register(TRACKER)


@hookimpl
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    """Register pack ``slack``."""
    register(PACK)
