"""Registries of tool packs (by name) and trackers (by kind)."""

from __future__ import annotations

from collections.abc import Iterator

from lorenz.contracts import ToolProvider, TrackerProvider
from lorenz.settings.model import Settings
from lorenz.settings.suggest import shown

__all__ = ["RegistryError", "ToolRegistry", "TrackerRegistry"]


class RegistryError(ValueError):
    """A registration was refused or a lookup found nothing."""


class ToolRegistry:
    """Tool packs keyed by their trimmed name."""

    def __init__(self) -> None:
        self._packs: dict[str, ToolProvider] = {}

    def register(self, provider: ToolProvider) -> None:
        """Add a pack. Registering the same object twice is a no-op; a different one under a
        taken name is refused."""
        key = str(provider.name).strip()
        if not key:
            msg = "tool provider name must not be blank"
            raise RegistryError(msg)
        existing = self._packs.get(key)
        if existing is not None and existing is not provider:
            msg = f"tool provider already registered for name: {key}"
            raise RegistryError(msg)
        self._packs[key] = provider

    def get(self, name: str | None) -> ToolProvider | None:
        """The pack registered under exactly ``name``, if any."""
        return None if name is None else self._packs.get(name)

    def require(self, name: str) -> ToolProvider:
        """The pack registered under ``name``, or an error listing the known packs."""
        provider = self._packs.get(name)
        if provider is None:
            known = self.names()
            hint = (
                f" (known tool packs: {', '.join(known)})"
                if known
                else " (no tool packs registered - register tool packs at the composition root)"
            )
            # After an uninstall the workflow still mounts it: say both ways out.
            steps = (
                f"; run lorenz unmount {shown(name)} to stop mounting it, or lorenz install the pack that provides it"
            )
            msg = f"unsupported tool pack: {shown(name)}{hint}{steps}"
            raise RegistryError(msg)
        return provider

    def names(self) -> list[str]:
        """Registered pack names, sorted."""
        return sorted(self._packs)

    def __iter__(self) -> Iterator[ToolProvider]:
        return iter([self._packs[name] for name in self.names()])

    def __len__(self) -> int:
        return len(self._packs)


class TrackerRegistry:
    """Tracker providers keyed by their trimmed kind."""

    def __init__(self) -> None:
        self._trackers: dict[str, TrackerProvider] = {}

    def register(self, provider: TrackerProvider) -> None:
        """Add a tracker. The same object twice is a no-op; a different one under a taken kind is
        refused."""
        key = str(provider.kind).strip()
        if not key:
            msg = "tracker provider kind must not be blank"
            raise RegistryError(msg)
        existing = self._trackers.get(key)
        if existing is not None and existing is not provider:
            msg = f"tracker provider already registered for kind: {key}"
            raise RegistryError(msg)
        self._trackers[key] = provider

    def get(self, kind: str | None) -> TrackerProvider | None:
        """The tracker registered under exactly ``kind``, if any."""
        return None if kind is None else self._trackers.get(kind)

    def provider_for(self, settings: Settings) -> TrackerProvider | None:
        """The tracker the settings select, if registered."""
        return self.get(settings.tracker.kind)

    def require(self, kind: str | None) -> TrackerProvider:
        """The tracker for ``kind``, or ``tracker.kind is required`` / an unsupported-kind error."""
        if kind is None or kind == "":
            msg = "tracker.kind is required"
            raise RegistryError(msg)
        provider = self._trackers.get(kind)
        if provider is None:
            known = self.kinds()
            hint = (
                f" (known kinds: {', '.join(known)})"
                if known
                else " (no tracker providers registered - register tracker extensions at the composition root)"
            )
            msg = f"unsupported tracker.kind: {shown(kind)}{hint}"
            raise RegistryError(msg)
        return provider

    def kinds(self) -> list[str]:
        """Registered kinds, sorted."""
        return sorted(self._trackers)

    def __iter__(self) -> Iterator[TrackerProvider]:
        return iter([self._trackers[kind] for kind in self.kinds()])

    def __len__(self) -> int:
        return len(self._trackers)
