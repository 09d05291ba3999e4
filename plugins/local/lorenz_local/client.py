"""The ``local`` tracker's runtime client: polls a board directory through :class:`~.store.BoardStore`."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence

from lorenz import Issue, Settings, run_in_thread

from .options import DEFAULT_ID_PREFIX
from .paths import resolve_board_dir
from .store import BoardStore, SkippedFile

__all__ = ["LocalTrackerClient", "logger"]

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
