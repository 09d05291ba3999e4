"""What a workflow's mounts have discovery import after its surveys: a plugin that stood in for a
pack the workflow's tracker mounts by default (:func:`tracker_defaults`), and one whose survey
failed when nothing else provides what the workflow names (:func:`unprovided`)."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import EntryPoint

from attrs import frozen

from lorenz.settings.model import Settings

from .containment import PluginError, call_plugin
from .model import Discovery, Mounts

__all__ = ["StoodIn", "tracker_defaults", "unprovided"]


@frozen
class StoodIn:
    """A plugin discovery registered by a stand-in (surveyed, not imported), and its packs."""

    entry_point: EntryPoint
    distribution: str | None
    version: str | None
    #: The name it is registered under.
    name: str
    packs: frozenset[str]

    def runs_here(self, mounted: frozenset[str], isolate: Sequence[str]) -> bool:
        """Whether one of its packs among ``mounted`` runs in the host (``isolate`` leaves it)."""
        from lorenz.isolation.plan import is_isolated  # only where stand-ins were made

        return any(not is_isolated(pack, self.distribution, isolate) for pack in self.packs & mounted)


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
    return bool(mounts.middleware - {provider.name.strip() for provider in discovery.middleware})
