"""Lorenz local board: a Markdown-file issue tracker and its ``local`` tool pack.

No network, no keys: one ``<prefix><n>.md`` file per issue in a board directory, safe to share
between several host processes. Names load on first use, so registering the plugin
(:mod:`.plugin`) does not import the board store or the YAML parser.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorenz import lazy_exports

_EXPORTS = {
    "DEFAULT_BOARD_DIR": ".paths",
    "BoardDocument": ".board",
    "BoardStore": ".store",
    "LocalToolPack": ".pack",
    "LocalTrackerClient": ".client",
    "LocalTrackerProvider": ".tracker",
    "SkippedFile": ".store",
    "local_tool_specs": ".pack",
    "parse_document": ".board",
    "render_document": ".board",
    "resolve_board_dir": ".paths",
}

__all__ = list(_EXPORTS)


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


if TYPE_CHECKING:
    # `X as X`: mypy --strict (no implicit re-export) then sees `from lorenz_local import X` as public.
    from .board import BoardDocument as BoardDocument
    from .board import parse_document as parse_document
    from .board import render_document as render_document
    from .client import LocalTrackerClient as LocalTrackerClient
    from .pack import LocalToolPack as LocalToolPack
    from .pack import local_tool_specs as local_tool_specs
    from .paths import DEFAULT_BOARD_DIR as DEFAULT_BOARD_DIR
    from .paths import resolve_board_dir as resolve_board_dir
    from .store import BoardStore as BoardStore
    from .store import SkippedFile as SkippedFile
    from .tracker import LocalTrackerProvider as LocalTrackerProvider
