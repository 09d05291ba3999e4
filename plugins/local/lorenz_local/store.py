"""``BoardStore``: ids, reads, and crash-safe, multi-process-safe writes of one board directory.

Writes run under :func:`~.locks.board_lock` and are published by :mod:`.publish`: a reader sees
the old or the new file, never a torn one; reads (:mod:`.reads`) take no lock. A hostile entry
(symlink, FIFO, directory, device) is reported as an invalid issue file and never opened
(:mod:`.files`), and errors never carry the board's absolute path. Every method is blocking file I/O.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attrs import frozen

from lorenz import Issue

from . import index, publish, reads
from .board import (
    BoardDocument,
    check_storable,
    comment_line,
    decode_text,
    document_content,
    parse_document,
    render_document,
)
from .cache import CACHE, SNAPSHOTS, BoardSnapshot, CachedFile, FileRow, FileSignature
from .files import file_kind, io_error, os_error_text, worded
from .locks import LOCK_FILE_NAME, board_lock, file_lock, process_lock
from .options import DEFAULT_ID_PREFIX, PREFIX_RULE, is_valid_prefix, json_text

__all__ = [
    "MalformedIssueError",
    "SNAPSHOT_MAX_AGE",
    "BoardStore",
    "SkippedFile",
]

#: Longest time ``records()`` trusts an unchanged directory before stat'ing every file again.
SNAPSHOT_MAX_AGE = 2.0


@frozen
class SkippedFile:
    """A board file left out of a listing, and why."""

    id: str
    error: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "error": self.error}


def _lf(text: str) -> str:
    """CRLF (and CR runs before LF) as LF: what a reader, which normalises CRLF, reads back."""
    return re.sub(r"\r+\n", "\n", text)


# -- the store --------------------------------------------------------------------------------------


class MalformedIssueError(ValueError):
    """An issue file that is on the board but cannot be parsed; the message is the parse error."""


class BoardStore:
    """One board directory of ``<prefix><n>.md`` issue files.

    Every id is checked against ``^<prefix>[0-9]+$`` before any filesystem access, and the file
    path it names is checked to stay inside the board. Files that are not issue files of this
    prefix (``README.md``, other prefixes, temp and lock files) are invisible.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        id_prefix: str = DEFAULT_ID_PREFIX,
        on_skip: Callable[[SkippedFile], None] | None = None,
    ) -> None:
        if not is_valid_prefix(id_prefix):
            msg = f"invalid board id_prefix: {json_text(id_prefix)} ({PREFIX_RULE})"
            raise ValueError(msg)
        self.directory = Path(os.path.abspath(directory))
        self.id_prefix = id_prefix
        self._dir = os.fspath(self.directory)
        self._id_pattern = re.compile(re.escape(id_prefix) + "[0-9]+", re.ASCII)
        self._file_pattern = re.compile(re.escape(id_prefix) + r"[0-9]+\.md", re.ASCII)
        self._on_skip = on_skip

    # -- ids ---------------------------------------------------------------------------------------

    def path_for(self, issue_id: object) -> str:
        """The file of ``issue_id``; raises ``ValueError`` for anything but ``<prefix><n>``."""
        if not isinstance(issue_id, str) or self._id_pattern.fullmatch(issue_id) is None:
            msg = f"invalid board issue id: {json_text(issue_id)} (expected {self.id_prefix}<n>)"
            raise ValueError(msg)
        path = os.path.join(self._dir, issue_id + ".md")
        # Defence in depth: the regex already excludes separators and dots.
        if os.path.normpath(path) != path or not path.startswith(self._dir + os.sep):
            msg = f"invalid board issue id: {json_text(issue_id)}"
            raise ValueError(msg)
        return path

    def _number(self, issue_id: str) -> int:
        return int(issue_id[len(self.id_prefix) :])

    def issue_ids(self) -> list[str]:
        """The ids of this board's issue files, in numeric order (``[]`` if the board is missing)."""
        return [issue_id for issue_id, _ in self._listing()]

    def _listing(self) -> list[tuple[str, bool]]:
        """:meth:`issue_ids`, each with whether the directory lists it as a regular file (its
        type as ``readdir`` reports it, an ``lstat`` only where the filesystem does not)."""
        try:
            with os.scandir(self._dir) as entries:
                match = self._file_pattern.fullmatch
                found = [
                    (entry.name[:-3], entry.is_file(follow_symlinks=False)) for entry in entries if match(entry.name)
                ]
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise io_error("failed to read board directory", exc) from exc
        start = len(self.id_prefix)
        found.sort(key=lambda item: int(item[0][start:]))
        return found

    def _allocate(self) -> tuple[str, str]:
        issue_id = self.next_id()
        return issue_id, self.path_for(issue_id)

    def next_id(self) -> str:
        """``<prefix><max + 1>``: gaps are never reused."""
        ids = self.issue_ids()
        return f"{self.id_prefix}{self._number(ids[-1]) + 1 if ids else 1}"

    # -- reads -------------------------------------------------------------------------------------

    def _document(self, issue_id: str) -> BoardDocument:
        entry = reads.load(issue_id, self.path_for(issue_id))
        if entry.document is None:
            raise MalformedIssueError(entry.error)
        return entry.document

    def read(self, issue_id: str) -> Issue:
        """The issue ``issue_id``; raises if the file is missing or malformed."""
        entry = reads.load(issue_id, self.path_for(issue_id))
        if entry.issue is None:
            raise MalformedIssueError(entry.error)
        return entry.issue

    def _entries(self) -> Iterable[tuple[str, CachedFile]]:
        for issue_id in self.issue_ids():
            try:
                entry = reads.load(issue_id, os.path.join(self._dir, issue_id + ".md"))
            except OSError as exc:  # vanished or unreadable since the listing
                entry = CachedFile(error=os_error_text(exc))
            yield issue_id, entry

    def list_issues(self) -> list[Issue]:
        """Every readable issue in id order; a malformed file is skipped (and reported)."""
        issues: list[Issue] = []
        for issue_id, entry in self._entries():
            if entry.issue is None:
                if self._on_skip is not None:
                    self._on_skip(SkippedFile(issue_id, entry.error or "unreadable"))
            else:
                issues.append(entry.issue)
        return issues

    def records(self) -> tuple[list[dict[str, Any]], list[SkippedFile]]:
        """Query records of every readable issue (shared: do not mutate) and the skipped files.

        An unchanged board is answered from its snapshot without touching its files: the
        directory's signature changes with every create, rename (so every board write) and
        delete. Edits made in place, which leave the directory alone, are picked up by the full
        re-validation that runs at least every :data:`SNAPSHOT_MAX_AGE` seconds.
        """
        key = (self._dir, self.id_prefix)
        try:
            directory_st = os.stat(self._dir)
        except FileNotFoundError:
            return [], []
        except OSError:
            directory, device = (-1, -1, -1, -1), -1  # _listing() below raises the board error
        else:
            directory, device = reads.signature_of(directory_st), directory_st.st_dev
        snapshot = SNAPSHOTS.get(key)
        started = time.monotonic()
        if (
            snapshot is not None
            and snapshot.trusted
            and snapshot.directory == directory
            and started - snapshot.validated_at < SNAPSHOT_MAX_AGE
        ):
            return list(snapshot.records), [SkippedFile(*item) for item in snapshot.skipped]
        started_wall_ns = time.time_ns()
        if snapshot is not None:
            previous, indexed, indexed_ns = snapshot.files, snapshot.indexed, snapshot.indexed_ns
        else:  # a process's first listing of the board starts from its persisted index
            loaded = index.load(self._dir, self.id_prefix, device)
            previous, indexed_ns = loaded if loaded is not None else ({}, 0)
            indexed = previous if loaded is not None else None
        files: dict[str, FileRow] = {}
        records: list[dict[str, Any]] = []
        skipped: list[SkippedFile] = []
        base = self._dir + os.sep
        listing = self._listing()
        paths = [base + issue_id + ".md" for issue_id, _ in listing]
        # Known rows are checked against one lstat each, all at once: the common case of a listing.
        lstats = reads.lstat_all(paths) if previous else None
        signatures: Sequence[FileSignature | None] = lstats or [None] * len(paths)
        for (issue_id, regular), path, signature in zip(listing, paths, signatures, strict=True):
            known = previous.get(issue_id)
            if known is not None and known[0] == signature and reads.settled(known[0], known[1]):
                row = known
            else:
                try:
                    row = reads.current_row(issue_id, path, regular, known)
                except OSError as exc:  # vanished or unreadable since the listing
                    skipped.append(SkippedFile(issue_id, os_error_text(exc)))
                    continue
            files[issue_id] = row
            if row[2] is None:
                skipped.append(SkippedFile(issue_id, row[3] or "unreadable"))
            else:
                records.append(row[2])
        try:
            after = reads.signature_of(os.stat(self._dir))
        except OSError:
            after = None
        # A directory changed within the last RACY_WINDOW_NS may change again within the same
        # timestamp tick without its signature moving: such a listing is re-validated next time.
        trusted = after == directory and directory[1] < started_wall_ns - reads.RACY_WINDOW_NS
        if after == directory:  # a listing the directory changed under is not worth keeping
            indexed, indexed_ns = index.refresh(self._dir, self.id_prefix, device, files, indexed, indexed_ns)
        SNAPSHOTS.put(
            key,
            BoardSnapshot(
                directory=directory,
                validated_at=started,
                trusted=trusted,
                files=files,
                indexed=indexed,
                indexed_ns=indexed_ns,
                records=tuple(records),
                skipped=tuple((item.id, item.error) for item in skipped),
            ),
        )
        return records, skipped

    def get_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        """The requested issues that exist, in request order. Every id is validated first; a
        malformed requested file raises."""
        for issue_id in ids:
            self.path_for(issue_id)
        present = set(self.issue_ids())
        return [self.read(issue_id) for issue_id in ids if issue_id in present]

    def by_status(self, states: Iterable[str]) -> list[Issue]:
        """Issues whose status is one of ``states`` (trimmed, case-insensitive)."""
        wanted = {state.strip().lower() for state in states}
        return [issue for issue in self.list_issues() if issue.state.strip().lower() in wanted]

    def read_content(self, issue_id: str) -> dict[str, Any]:
        """``{id, status, title, description, comments: [line, ...]}`` with the raw status."""
        return document_content(issue_id, self._document(issue_id))

    def cached_content(self, issue_id: object) -> dict[str, Any] | None:
        """:meth:`read_content` when the file is unchanged since it was last parsed (one
        ``lstat``, no read), else ``None``: for a caller that must not block on a parse."""
        try:
            path = self.path_for(issue_id)
            st = os.lstat(path)
        except (ValueError, OSError):
            return None
        hit = CACHE.get(path, reads.signature_of(st)) if stat.S_ISREG(st.st_mode) else None
        if hit is None or hit.document is None or not reads.settled(reads.signature_of(st), hit.read_ns):
            return None
        return document_content(str(issue_id), hit.document)

    # -- writes ------------------------------------------------------------------------------------

    def update_status(self, issue_id: str, status: str) -> Issue:
        """Set the status (trimmed); an empty or unstorable status is refused and the file left
        untouched."""
        path = self.path_for(issue_id)
        check_storable("status", status)
        new_status = status.strip()
        if not new_status:
            msg = f"board issue {issue_id} status must not be empty"
            raise ValueError(msg)
        self._modify(issue_id, path, lambda document: document.with_status(new_status))
        return self.read(issue_id)

    def append_comment(self, issue_id: str, body: str, now: datetime | None = None) -> None:
        """Append ``- <now> agent: <body>`` to the issue's comments."""
        path = self.path_for(issue_id)
        check_storable("body", body)
        line = comment_line(_lf(body), now if now is not None else datetime.now(UTC))
        self._modify(issue_id, path, lambda document: document.with_comment(line))

    def _modify(self, issue_id: str, path: str, change: Callable[[BoardDocument], BoardDocument]) -> None:
        # A missing issue (or board) fails here, before a lock file is created.
        st = reads.lstat_issue(issue_id, path)
        if not stat.S_ISREG(st.st_mode):
            raise reads.not_regular(issue_id, file_kind(st.st_mode))
        with worded(f"failed to write board issue {issue_id}"), board_lock(self.directory):
            publish.sweep_if_due(self._dir)
            _, data = reads.read_bytes(issue_id, path)  # fresh from disk: the cache may predate our lock
            document = change(parse_document(decode_text(data, issue_id), issue_id))
            publish.replace_file(self._dir, path, render_document(document).encode("utf-8"))

    def create(self, title: str, body: str | None = None, status: str | None = None) -> Issue:
        """Create ``<prefix><max + 1>`` (status ``Todo`` unless given) and return it."""
        for field, value in (("title", title), ("body", body), ("status", status)):
            if value is not None:
                check_storable(field, value)
        new_status = "Todo" if status is None else status.strip()
        if not new_status:
            msg = "board issue status must not be empty"
            raise ValueError(msg)
        # A title is one line; CRLF bodies are stored as LF, so the file round-trips.
        clean_title = " ".join(re.split(r"\r\n|\r|\n", title)).strip()
        document = BoardDocument(status=new_status, title=clean_title, description=_lf(body or ""))
        data = render_document(document).encode("utf-8")
        with worded("failed to create a board issue"), process_lock(self._dir):
            # Inside the in-process lock, so one creator builds (and fsyncs) a new directory chain.
            publish.ensure_directory(self.directory)
            with file_lock(self.directory / LOCK_FILE_NAME):
                issue_id = publish.publish_new(self._dir, data, self._allocate)
        return self.read(issue_id)
