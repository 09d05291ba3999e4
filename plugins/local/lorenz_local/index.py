"""The board's persisted query index: each file's query row under its signature, kept in the
user's cache (``$XDG_CACHE_HOME/lorenz/local-index``, else ``~/.cache/...``), one JSON file per
board directory (by real path) and id prefix, never in the board.

It is input like any file: read without following a symlink, only if regular, owned by this user
and at most :data:`MAX_INDEX_BYTES`, and every row type-checked; one that fails anything, or was
written by another format, parser or board, is ignored whole (and rewritten). A row is used only
for a file whose ``lstat`` signature is the row's and was settled when it was read
(:func:`~.reads.settled`), so an index never answers for a file that changed since. Written whole
to a temp file and renamed; a cache that cannot be written is skipped.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import json
import operator
import os
import stat
import tempfile
import time
from collections.abc import Iterator, Mapping
from itertools import chain, repeat
from typing import Any

from lorenz import default_state_type

from . import board
from .cache import FileRow
from .files import read_regular
from .reads import settled

__all__ = ["FORMAT", "MAX_INDEXES", "MAX_INDEX_BYTES", "REWRITE_INTERVAL_NS", "index_path", "load", "refresh", "store"]

FORMAT = "lorenz-local-index/1"
#: Larger index files are neither read nor written (~550 bytes a row on the bench's boards).
MAX_INDEX_BYTES = 256 << 20
#: Index files kept in the cache directory; the least recently written beyond go.
MAX_INDEXES = 64
#: Least age of an index before it is rewritten for rows that changed: a board written all the
#: time is not re-indexed at every query (a row the index lacks costs a cold reader one read).
REWRITE_INTERVAL_NS = 10_000_000_000
_STALE_TEMP_SECONDS = 3600


def _cache_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lorenz", "local-index")


@functools.cache
def _parser() -> str | None:
    """What decides a row besides the file (the board format's code), so a changed parser is not
    answered for by rows it did not make; ``None`` (no index) when that code cannot be read."""
    try:
        with open(board.__file__, "rb") as source:
            return hashlib.blake2b(source.read(), digest_size=16).hexdigest()
    except OSError:
        return None


def _header(real: str, prefix: str, device: int) -> dict[str, Any] | None:
    parser = _parser()
    if parser is None:
        return None
    return {"format": FORMAT, "parser": parser, "board": real, "prefix": prefix, "device": device}


def index_path(real: str, prefix: str) -> str:
    """The index file of the board at real path ``real`` with id prefix ``prefix``."""
    key = hashlib.sha256(f"{real}\0{prefix}".encode("utf-8", "surrogateescape")).hexdigest()[:40]
    return os.path.join(_cache_dir(), key + ".json")


def load(directory: str, prefix: str, device: int) -> tuple[dict[str, FileRow], int] | None:
    """The rows of the index of the board ``directory`` (on ``device``) by issue id, and when it
    was written (``st_mtime_ns``); ``None`` when there is none or it is not valid."""
    real = os.path.realpath(directory)
    header = _header(real, prefix, device)
    if header is None:
        return None
    path = index_path(real, prefix)
    try:
        if os.lstat(path).st_size > MAX_INDEX_BYTES:  # not even opened
            return None
        st, data = read_regular(path)  # no symlink followed, nothing but a regular file read
        if len(data) > MAX_INDEX_BYTES or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            return None
    except OSError:
        return None
    with _collector_paused():
        rows = _parse(data, header)
    return None if rows is None else (rows, st.st_mtime_ns)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector off while an index loads: tens of thousands of long-lived containers
    and no garbage, which it would otherwise pass over again and again (~10 % of a first query)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _parse(data: bytes, header: dict[str, Any]) -> dict[str, FileRow] | None:
    try:
        loaded = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if type(loaded) is not dict or loaded.keys() != _KEYS or loaded["header"] != header:
        return None
    return _rows(loaded)


_KEYS = {"header", "readNs", "columns", "errors"}
_INTS = ("ino", "mtimeNs", "size", "ctimeNs")
_STRINGS = ("id", "title", "state", "updatedAt")
_COLUMNS = {*_INTS, *_STRINGS, "description", "labels", "createdAt"}


def _rows(loaded: dict[str, Any]) -> dict[str, FileRow] | None:
    """The rows of a loaded index, or ``None`` if any part is not what :func:`store` writes.

    Kept column by column: a row is a dozen small values, and checking and building them a column
    at a time costs about half of doing it a row at a time."""
    read_ns, columns, errors = loaded["readNs"], loaded["columns"], loaded["errors"]
    if type(read_ns) is not int or type(columns) is not dict or columns.keys() != _COLUMNS or type(errors) is not list:
        return None
    ids = columns["id"]
    if not all(type(column) is list and len(column) == len(ids) for column in columns.values()):
        return None
    labels = columns["labels"]
    if not (
        all(set(map(type, columns[name])) <= {int} for name in _INTS)
        and all(set(map(type, columns[name])) <= {str} for name in _STRINGS)
        and set(map(type, columns["description"])) <= {str, type(None)}
        and set(map(type, columns["createdAt"])) <= {str, type(None)}
        and set(map(type, labels)) <= {list}
        and set(map(type, chain.from_iterable(labels))) <= {str}
        and all(
            type(item) is list
            and len(item) == 6
            and type(item[0]) is str
            and set(map(type, item[1:5])) == {int}
            and type(item[5]) is str
            for item in errors
        )
    ):
        return None
    states = columns["state"]
    state_types = {state: default_state_type(state) or "backlog" for state in set(states)}
    records = [
        {
            "id": issue_id,
            "identifier": issue_id,
            "title": title,
            "description": description,
            "state": state,
            "stateType": state_types[state],
            "labels": labels,
            "createdAt": updated if created is None else created,
            "updatedAt": updated,
        }
        for issue_id, title, description, state, labels, created, updated in zip(
            ids,
            columns["title"],
            columns["description"],
            states,
            columns["labels"],
            columns["createdAt"],
            columns["updatedAt"],
            strict=True,
        )
    ]
    signatures = zip(columns["ino"], columns["mtimeNs"], columns["size"], columns["ctimeNs"], strict=True)
    rows: dict[str, FileRow] = dict(zip(ids, zip(signatures, repeat(read_ns), records, repeat(None)), strict=True))
    for issue_id, ino, mtime, size, ctime, error in errors:
        rows[issue_id] = ((ino, mtime, size, ctime), read_ns, None, error)
    return rows


def _body(header: dict[str, Any], rows: Mapping[str, FileRow]) -> dict[str, Any]:
    """What :func:`_rows` reads back as ``rows`` (all settled: they are given the write's time)."""
    columns: dict[str, list[Any]] = {name: [] for name in sorted(_COLUMNS)}
    errors: list[list[Any]] = []
    for issue_id, (signature, _, record, error) in rows.items():
        if record is None:
            errors.append([issue_id, *signature, error or ""])
            continue
        for name, value in zip(_INTS, signature, strict=True):
            columns[name].append(value)
        for name in ("id", "title", "description", "state", "labels", "updatedAt"):
            columns[name].append(record[name])
        # Most files were created when last modified (see issue_record): null says "the same".
        created = record["createdAt"]
        columns["createdAt"].append(None if created == record["updatedAt"] else created)
    return {"header": header, "readNs": time.time_ns(), "columns": columns, "errors": errors}


def refresh(
    directory: str,
    prefix: str,
    device: int,
    files: Mapping[str, FileRow],
    indexed: Mapping[str, FileRow] | None,
    indexed_ns: int,
) -> tuple[Mapping[str, FileRow] | None, int]:
    """After a full listing (``files``): rewrite the index when its settled rows are not what
    ``indexed`` (written at ``indexed_ns``) holds and it is at least :data:`REWRITE_INTERVAL_NS`
    old. What the index now holds and when it was written (or its write tried)."""
    if indexed is not None and len(indexed) == len(files) and all(map(operator.is_, indexed.values(), files.values())):
        return indexed, indexed_ns  # every file answered from the index as it stands (in its order)
    rows = {issue_id: row for issue_id, row in files.items() if settled(row[0], row[1])}
    if _same(indexed, rows):
        return indexed, indexed_ns
    now = time.time_ns()
    if now - indexed_ns < REWRITE_INTERVAL_NS:
        return indexed, indexed_ns
    return (rows if store(directory, prefix, device, rows) else indexed), now


def _same(indexed: Mapping[str, FileRow] | None, rows: Mapping[str, FileRow]) -> bool:
    if indexed is None or len(indexed) != len(rows):
        return False
    # Rows served from the index are its very tuples: the identity test decides nearly all.
    return all((known := indexed.get(issue_id)) is row or known == row for issue_id, row in rows.items())


def store(directory: str, prefix: str, device: int, rows: Mapping[str, FileRow]) -> bool:
    """Replace the index of the board ``directory`` with ``rows``; ``False`` when the cache cannot
    be written."""
    real = os.path.realpath(directory)
    header = _header(real, prefix, device)
    folder = _cache_dir()
    if header is None:
        return False
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".tmp-")  # before the work: a read-only cache costs nothing
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as file:
            body = _body(header, rows)
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            if len(data) > MAX_INDEX_BYTES:
                raise ValueError("over MAX_INDEX_BYTES")  # like a failed write: the temp goes
            file.write(data)
        os.replace(temp, index_path(real, prefix))
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(temp)
        return False
    with contextlib.suppress(OSError):
        _prune(folder)
    return True


def _prune(folder: str) -> None:
    """Keep the :data:`MAX_INDEXES` most recently written indexes (boards come and go: temp
    directories, renamed checkouts) and drop temp files a writer that died left."""
    with os.scandir(folder) as entries:
        found = [(entry.stat(follow_symlinks=False), entry) for entry in entries]
    indexes = sorted(
        ((st.st_mtime_ns, entry.path) for st, entry in found if entry.name.endswith(".json")),
        reverse=True,
    )
    stale = [path for _, path in indexes[MAX_INDEXES:]]
    long_ago = time.time() - _STALE_TEMP_SECONDS
    stale += [
        entry.path
        for st, entry in found
        if entry.name.startswith(".tmp-") and stat.S_ISREG(st.st_mode) and st.st_mtime < long_ago
    ]
    for path in stale:
        with contextlib.suppress(OSError):
            os.unlink(path)
