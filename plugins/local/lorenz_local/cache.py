"""Process-wide caches that let an unchanged board be queried without re-reading it.

:data:`CACHE` holds parsed files keyed by path and ``(inode, mtime_ns, size, ctime_ns)`` (a
malformed file with its error); an entry whose mtime or ctime was not safely older than its read is
re-validated against its content digest first. :data:`SNAPSHOTS` holds per board the last full
listing, reused while the directory's own signature is unchanged. Both are bounded (least recently
used go first) and thread-safe.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from attrs import frozen

from lorenz import Issue, normalize_issue

from .board import BoardDocument

__all__ = [
    "CACHE",
    "SNAPSHOTS",
    "BoardSnapshot",
    "CachedFile",
    "FileRow",
    "FileSignature",
    "ParseCache",
    "SnapshotCache",
]

#: ``(st_ino, st_mtime_ns, st_size, st_ctime_ns)`` of a file as ``lstat``/``fstat`` report it.
FileSignature = tuple[int, int, int, int]
#: One file of a listing: its signature, ``time.time_ns()`` just before it was read, and its query
#: record or why it is left out.
FileRow = tuple[FileSignature, int, dict[str, Any] | None, str | None]


@frozen(kw_only=True)
class CachedFile:
    """One parsed file: the document, its tracker record and query record; or why it failed."""

    document: BoardDocument | None = None
    #: The loose tracker record (:func:`~.board.issue_record`) the issue is normalised from.
    source: dict[str, Any] | None = None
    record: dict[str, Any] | None = None
    error: str | None = None
    #: blake2b of the bytes parsed, and ``time.time_ns()`` just before they were read.
    digest: bytes = b""
    read_ns: int = 0

    @functools.cached_property
    def issue(self) -> Issue | None:
        """The normalised issue, built on first use: a query reads only the records."""
        return None if self.source is None else normalize_issue(self.source)


class ParseCache:
    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._entries: OrderedDict[str, tuple[FileSignature, CachedFile]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: str, signature: FileSignature) -> CachedFile | None:
        with self._lock:
            hit = self._entries.get(path)
            if hit is None or hit[0] != signature:
                return None
            self._entries.move_to_end(path)
            return hit[1]

    def put(self, path: str, signature: FileSignature, value: CachedFile) -> None:
        with self._lock:
            self._entries[path] = (signature, value)
            self._entries.move_to_end(path)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __contains__(self, path: object) -> bool:
        return path in self._entries

    def __len__(self) -> int:
        return len(self._entries)


@frozen(kw_only=True)
class BoardSnapshot:
    """One full listing of a board: per file its row, in id order."""

    directory: FileSignature
    #: ``time.monotonic()`` when every file was last stat'ed.
    validated_at: float
    #: False when the directory changed too recently for its signature to be trusted.
    trusted: bool
    files: dict[str, FileRow]
    #: The rows the board's persisted index (:mod:`.index`) holds as this process last read or
    #: wrote it (``None``: no valid index), and when it was written (or its write tried), in ns.
    indexed: Mapping[str, FileRow] | None
    indexed_ns: int
    records: tuple[dict[str, Any], ...]
    #: ``(id, error)`` of the files left out.
    skipped: tuple[tuple[str, str], ...]


class SnapshotCache:
    def __init__(self, max_boards: int = 64) -> None:
        self.max_boards = max_boards
        self._boards: OrderedDict[tuple[str, str], BoardSnapshot] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> BoardSnapshot | None:
        with self._lock:
            snapshot = self._boards.get(key)
            if snapshot is not None:
                self._boards.move_to_end(key)
            return snapshot

    def put(self, key: tuple[str, str], snapshot: BoardSnapshot) -> None:
        with self._lock:
            self._boards[key] = snapshot
            self._boards.move_to_end(key)
            while len(self._boards) > self.max_boards:
                self._boards.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._boards.clear()


CACHE = ParseCache()
SNAPSHOTS = SnapshotCache()
