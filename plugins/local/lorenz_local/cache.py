"""A process-wide cache of parsed board files, keyed by path and ``(inode, mtime_ns, size)``.

Every write of the board replaces the file by rename, so it gets a new inode and always misses;
a hand edit in place is seen as soon as its mtime or size changes. A malformed file is cached
with its error, so a poll does not re-parse it either. Bounded (least recently used entries go
first) and safe to use from several threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from attrs import frozen

from lorenz.issue import Issue

from .board import BoardDocument

__all__ = ["CACHE", "CachedFile", "FileSignature", "ParseCache"]

FileSignature = tuple[int, int, int]


@frozen(kw_only=True)
class CachedFile:
    """One parsed file: the document, its normalised issue and query record; or why it failed."""

    document: BoardDocument | None = None
    issue: Issue | None = None
    record: dict[str, Any] | None = None
    error: str | None = None


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

    def __len__(self) -> int:
        return len(self._entries)


CACHE = ParseCache()
