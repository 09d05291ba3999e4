"""The ``linear`` tracker provider: configuration hooks and the runtime client factory.

The client (:mod:`.client`, ``httpx``) loads in :meth:`LinearTracker.create_client`, and the options
(:mod:`.options`) when the tracker is configured: neither at registration (every command registers it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lorenz import Settings, TrackerContext

if TYPE_CHECKING:
    from .client import LinearClient

__all__ = ["LinearTracker"]


class LinearTracker:
    """Tracker ``linear``: issues of one or more Linear projects, polled over GraphQL."""

    kind = "linear"

    @property
    def config_aliases(self) -> Mapping[str, str]:
        from .options import CONFIG_ALIASES

        return CONFIG_ALIASES

    @property
    def env_fallbacks(self) -> Mapping[str, str]:
        from .options import ENV_FALLBACKS

        return ENV_FALLBACKS

    @property
    def default_endpoint(self) -> str:
        from .options import DEFAULT_ENDPOINT

        return DEFAULT_ENDPOINT

    def parse_options(self, raw: Mapping[str, Any], context: TrackerContext) -> Mapping[str, Any]:
        """``projectSlug`` / ``projectSlugs`` / ``projectLabels``, validated; only the present ones."""
        from .options import parse_tracker_options

        return parse_tracker_options(raw, context.env)

    def validate_dispatch(self, settings: Settings) -> None:
        """An API key and exactly one project selector are required to dispatch."""
        from .options import validate_dispatch

        validate_dispatch(settings)

    def create_client(self, settings: Settings, context: TrackerContext) -> LinearClient:
        from .client import LinearClient  # the client: on first use, not at registration

        return LinearClient(settings, http=context.http)

    def default_tool_packs(self, settings: Settings) -> Sequence[str]:
        return ["linear"]

    def project_url(self, settings: Settings) -> str | None:
        from .options import project_url

        return project_url(settings)
