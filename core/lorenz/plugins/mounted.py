"""What a workflow's mounts have discovery import after its surveys: a plugin that stood in for a
pack the workflow's tracker mounts by default (:func:`tracker_defaults`), and one whose survey
failed when nothing else provides what the workflow names (:func:`unprovided`)."""

from __future__ import annotations

from attrs import frozen

from lorenz.settings.model import Settings

from .containment import PluginError, call_plugin
from .entry_index import PluginEntryPoint
from .model import Discovery, Mounts

__all__ = ["StoodIn", "tracker_defaults", "unprovided"]


@frozen
class StoodIn:
    """A plugin discovery registered by a stand-in (surveyed, not imported)."""

    entry_point: PluginEntryPoint
    distribution: str | None
    version: str | None
    #: The name it is registered under.
    name: str
    #: Its packs that run in the host when mounted (the workflow does not isolate them).
    in_host: frozenset[str]


def tracker_defaults(discovery: Discovery, mounts: Mounts | None) -> frozenset[str]:
    """The packs the workflow's tracker (``mounts.tracker``) mounts by default, as its
    ``default_tool_packs`` says before the workflow's settings are known (with the defaults'); a
    tracker whose answer depends on them may name more once they are (mounting then says so)."""
    if mounts is None or not mounts.tracker:
        return frozenset()
    hook = getattr(discovery.trackers.get(mounts.tracker), "default_tool_packs", None)
    if not callable(hook):
        return frozenset()
    try:
        names = call_plugin(f"tracker {mounts.tracker}", "default_tool_packs", hook, Settings())
    except PluginError:  # mounting calls it again, with the settings, and reports what it raises
        return frozenset()
    return frozenset(name for name in names or () if isinstance(name, str))


def unprovided(discovery: Discovery, mounts: Mounts) -> bool:
    """Whether a pack, tracker or middleware ``mounts`` names is missing from ``discovery``."""
    if any(discovery.tools.get(name) is None for name in mounts.packs if name != mounts.tracker):
        return True
    if mounts.tracker is not None and discovery.trackers.get(mounts.tracker) is None:
        return True
    return bool(mounts.middleware - {name for info in discovery.plugins for name in info.extensions})
