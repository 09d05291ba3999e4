"""Lorenz local board: a Markdown-file issue tracker and its ``local`` tool pack.

No network, no keys: one ``<prefix><n>.md`` file per issue in a board directory, safe to share
between several host processes.
"""

from __future__ import annotations

from .board import BoardDocument, parse_document, render_document
from .paths import DEFAULT_BOARD_DIR, resolve_board_dir
from .store import BoardStore, SkippedFile
from .tools import LocalToolPack, local_tool_specs
from .tracker import LocalTrackerClient, LocalTrackerProvider

__all__ = [
    "DEFAULT_BOARD_DIR",
    "BoardDocument",
    "BoardStore",
    "LocalToolPack",
    "LocalTrackerClient",
    "LocalTrackerProvider",
    "SkippedFile",
    "local_tool_specs",
    "parse_document",
    "render_document",
    "resolve_board_dir",
]
