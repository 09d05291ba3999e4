"""Reading one issue file for :class:`~.store.BoardStore`: the entry ``lstat``'ed (a symlink,
FIFO or device is reported, never opened), read, parsed into its document and records, and kept in
:data:`~.cache.CACHE` under the signature of what was read. A cached entry is trusted only once its
mtime and ctime are older than its read by more than :data:`RACY_WINDOW_NS`. Errors name the issue,
never the board's absolute path.
"""

from __future__ import annotations

import hashlib
import operator
import os
import stat
import time
from collections.abc import Callable, Iterable

from attrs import evolve

from . import files
from .board import BoardFormatError, decode_text, issue_record, parse_document, query_row
from .cache import CACHE, CachedFile, FileRow, FileSignature
from .files import NotRegularFileError, file_kind, read_error

__all__ = [
    "RACY_WINDOW_NS",
    "current_row",
    "load",
    "lstat_all",
    "lstat_issue",
    "not_regular",
    "read_bytes",
    "read_entry",
    "settled",
    "signature_of",
]

#: How long after its last change a directory's or file's signature is not trusted: the coarsest
#: timestamp granularity expected (FAT's two seconds).
RACY_WINDOW_NS = 2_000_000_000


#: ``signature_of(st)``, a :data:`~.cache.FileSignature`. With the ctime, which no one can set: an
#: edit that puts the mtime back (``touch -d``, ``cp -p``) moves it. (An attrgetter: no Python
#: frame for each of a board's 10,000 files.)
signature_of: Callable[[os.stat_result], FileSignature] = operator.attrgetter(
    "st_ino", "st_mtime_ns", "st_size", "st_ctime_ns"
)


def settled(signature: FileSignature, read_ns: int) -> bool:
    """Whether what was read at ``read_ns`` can be trusted for a file of ``signature``: its mtime
    and ctime were older than the read by more than the racy window, so an edit after the read
    would have moved them."""
    return max(signature[1], signature[3]) < read_ns - RACY_WINDOW_NS


def lstat_all(paths: Iterable[str]) -> list[FileSignature] | None:
    """The signatures of ``paths``' entries (symlinks not followed), or ``None`` if any cannot be
    ``lstat``'ed (vanished since the listing, say: each is then looked at on its own)."""
    try:
        return list(map(signature_of, map(os.lstat, paths)))
    except OSError:
        return None


def current_row(issue_id: str, path: str, regular: bool, known: FileRow | None) -> FileRow:
    """The row of ``path`` now: ``known`` while its signature holds and it is settled, else the
    file read (through :data:`~.cache.CACHE`). ``regular``: the listing's word on its type.
    Raises a worded ``OSError``."""
    if known is None and regular and path not in CACHE:
        # Never read: no cached entry to check an lstat against, so it is read at once
        # (open(2) refuses a symlink, fstat anything else swapped in since readdir).
        signature, entry = read_entry(issue_id, path)
        if signature is not None:
            return (signature, entry.read_ns, entry.record, entry.error)
    st = lstat_issue(issue_id, path)
    signature = signature_of(st)
    if known is not None and known[0] == signature and settled(signature, known[1]):
        return known
    entry = load(issue_id, path, st)
    return (signature, entry.read_ns, entry.record, entry.error)


def not_regular(issue_id: str, kind: str) -> BoardFormatError:
    return BoardFormatError(f"board issue {issue_id} is {kind}, not a regular file")


def lstat_issue(issue_id: str, path: str) -> os.stat_result:
    """The entry itself (a symlink is not followed). Raises a worded ``OSError``."""
    try:
        return os.lstat(path)
    except OSError as exc:
        raise read_error(issue_id, exc) from exc


def read_bytes(issue_id: str, path: str) -> tuple[os.stat_result, bytes]:
    """Raises :class:`BoardFormatError` for a non-regular file, else a worded ``OSError``."""
    try:
        return files.read_regular(path)
    except NotRegularFileError as exc:
        raise not_regular(issue_id, exc.kind) from exc
    except OSError as exc:
        raise read_error(issue_id, exc) from exc


def load(issue_id: str, path: str, st: os.stat_result | None = None) -> CachedFile:
    """The parsed file, from the cache when its ``lstat`` signature is unchanged; a
    non-regular entry is an error entry, never opened. Raises a worded ``OSError``."""
    if st is None:
        st = lstat_issue(issue_id, path)
    if not stat.S_ISREG(st.st_mode):
        return CachedFile(error=str(not_regular(issue_id, file_kind(st.st_mode))))
    signature = signature_of(st)
    hit = CACHE.get(path, signature)
    if hit is not None and settled(signature, hit.read_ns):
        return hit
    return read_entry(issue_id, path, hit, signature)[1]


def read_entry(
    issue_id: str, path: str, hit: CachedFile | None = None, signature: FileSignature | None = None
) -> tuple[FileSignature | None, CachedFile]:
    """Read and parse the file at ``path`` and cache it under the signature of what was read
    (``None``: no longer a regular file). ``hit``, cached for ``signature``, is kept when the
    bytes are the same. Raises a worded ``OSError``."""
    read_ns = time.time_ns()
    try:
        st, data = read_bytes(issue_id, path)
    except BoardFormatError as exc:  # no longer a regular file
        return None, CachedFile(error=" ".join(str(exc).split()))
    digest = hashlib.blake2b(data, digest_size=16).digest()
    read = signature_of(st)
    if hit is not None and hit.digest == digest and read == signature:
        entry = evolve(hit, read_ns=read_ns)  # the same bytes: confirmed, not parsed again
    else:
        try:
            document = parse_document(decode_text(data, issue_id), issue_id)
            source = issue_record(issue_id, document, st)
            record = query_row(source)
            entry = CachedFile(document=document, source=source, record=record, digest=digest, read_ns=read_ns)
        except Exception as exc:  # any malformed content: bad UTF-8, bad YAML, no status
            entry = CachedFile(error=" ".join(str(exc).split()) or type(exc).__name__, digest=digest, read_ns=read_ns)
    CACHE.put(path, read, entry)
    return read, entry
