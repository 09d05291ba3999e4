"""The ``linear`` tracker provider: configuration hooks and the runtime client factory.

The client (:mod:`.client`, ``httpx``) loads in :meth:`LinearTracker.create_client`, not at registration.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lorenz import Settings, TrackerContext

from . import options

if TYPE_CHECKING:
    from .client import LinearClient

__all__ = ["LinearTracker"]


class LinearTracker:
    """Tracker ``linear``: issues of one or more Linear projects, polled over GraphQL."""

    kind = options.KIND
    config_aliases: Mapping[str, str] = options.CONFIG_ALIASES
    env_fallbacks: Mapping[str, str] = options.ENV_FALLBACKS
    default_endpoint = options.DEFAULT_ENDPOINT

    def parse_options(self, raw: Mapping[str, Any], context: TrackerContext) -> Mapping[str, Any]:
        """``projectSlug`` / ``projectSlugs`` / ``projectLabels``, validated; only the present ones."""
        return options.parse_tracker_options(raw, context.env)

    def validate_dispatch(self, settings: Settings) -> None:
        """An API key and exactly one project selector are required to dispatch."""
        options.validate_dispatch(settings)

    def create_client(self, settings: Settings, context: TrackerContext) -> LinearClient:
        from .client import LinearClient  # the client: on first use, not at registration

        return LinearClient(settings, http=context.http)

    def default_tool_packs(self, settings: Settings) -> Sequence[str]:
        return ["linear"]

    def project_url(self, settings: Settings) -> str | None:
        return options.project_url(settings)
