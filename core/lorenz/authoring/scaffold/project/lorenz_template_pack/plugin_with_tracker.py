"""Entry points of ``template_pack``: its tracker and its tool pack."""

from __future__ import annotations

from collections.abc import Callable

from lorenz import ToolProvider, TrackerProvider, hookimpl

from .tools import PACK
from .tracker import TRACKER

__all__ = ["lorenz_register_tool_packs", "lorenz_register_trackers"]


@hookimpl
def lorenz_register_trackers(register: Callable[[TrackerProvider], None]) -> None:
    """Tracker kind ``template_pack``."""
    register(TRACKER)


@hookimpl
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    """Pack ``template_pack``."""
    register(PACK)
