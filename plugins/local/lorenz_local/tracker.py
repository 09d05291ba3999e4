"""The ``local`` tracker provider: the board as a dispatch backend.

Its runtime client (:mod:`.client`, with the board store and the YAML parser) loads in
:meth:`LocalTrackerProvider.create_client`, not when the plugin registers.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lorenz import Settings, TrackerContext

from .options import parse_tracker_options

if TYPE_CHECKING:
    from .client import LocalTrackerClient

__all__ = ["LocalTrackerProvider"]


class LocalTrackerProvider:
    """Tracker kind ``local``: options ``path`` (default ``.lorenz/local``) and ``id_prefix``."""

    kind = "local"
    config_aliases: Mapping[str, str] = {"id_prefix": "idPrefix"}

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
        """``{"path", "idPrefix"}`` with defaults; unknown keys and a bad prefix are refused."""
        return parse_tracker_options(options)

    def validate_dispatch(self, settings: Settings) -> None:
        """A board directory must be configured (an explicit ``path: ""`` is refused)."""
        path = settings.tracker.options.get("path")
        if not isinstance(path, str) or not path.strip():
            msg = "tracker.path (board directory) is required for the local tracker"
            raise ValueError(msg)

    def default_tool_packs(self, settings: Settings) -> list[str]:
        return ["local"]

    def create_client(self, settings: Settings, context: TrackerContext) -> LocalTrackerClient:
        from .client import LocalTrackerClient  # the client: on first use, not at registration

        return LocalTrackerClient(settings, cwd=Path(context.cwd), env=context.env)
