"""The ``local`` tracker: the board as a dispatch backend (provider and runtime client)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lorenz import run_in_thread
from lorenz.contracts import TrackerContext
from lorenz.issue import Issue
from lorenz.settings.model import Settings

from .options import DEFAULT_ID_PREFIX, parse_tracker_options
from .paths import resolve_board_dir
from .store import BoardStore, SkippedFile

__all__ = ["LocalTrackerClient", "LocalTrackerProvider", "logger"]

logger = logging.getLogger("lorenz_local")


class LocalTrackerClient:
    """Polls a board directory. A malformed file is logged and skipped, never failing a poll."""

    def __init__(self, settings: Settings, *, cwd: str | os.PathLike[str], env: Mapping[str, str]) -> None:
        options = settings.tracker.options
        path = options.get("path")
        prefix = options.get("idPrefix")
        self.settings = settings
        self.board_dir = resolve_board_dir(path if isinstance(path, str) else None, cwd=cwd, env=env)
        self.store = BoardStore(
            self.board_dir,
            id_prefix=prefix if isinstance(prefix, str) else DEFAULT_ID_PREFIX,
            on_skip=self._warn,
        )

    def _warn(self, skipped: SkippedFile) -> None:
        logger.warning(
            "local tracker: skipping malformed board file %s in %s: %s", skipped.id, self.board_dir, skipped.error
        )

    async def fetch_candidate_issues(self) -> list[Issue]:
        """Issues whose status is one of ``tracker.active_states`` (case-insensitive)."""
        states = self.settings.tracker.active_states
        return await run_in_thread(self.store.by_status, states)

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        """The existing issues among ``ids``, in the requested order."""
        return await run_in_thread(self.store.get_by_ids, list(ids))

    async def fetch_issues_by_states(self, states: Sequence[str]) -> list[Issue]:
        """Issues whose status is one of ``states`` (case-insensitive)."""
        return await run_in_thread(self.store.by_status, list(states))


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
        return LocalTrackerClient(settings, cwd=Path(context.cwd), env=context.env)
