"""The persisted query index: a process's first query answers from it without reading unchanged
files, and always answers what reading every file answers, whatever happened behind its back."""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lorenz_local import files as files_module
from lorenz_local import index as index_module
from lorenz_local import reads as reads_module
from lorenz_local.cache import CACHE, SNAPSHOTS
from lorenz_local.store import BoardStore

#: The racy window in these tests: longer than any kernel's timestamp tick (a jiffy, at most 10 ms).
WINDOW_NS = 50_000_000
TITLES = ("alpha", "bravo", "charl", "delta")

Answer = tuple[list[dict[str, Any]], list[dict[str, str]]]


@pytest.fixture(autouse=True)
def short_window(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(reads_module, "RACY_WINDOW_NS", WINDOW_NS)
    CACHE.clear()
    SNAPSHOTS.clear()
    yield
    CACHE.clear()
    SNAPSHOTS.clear()


def make_board(directory: Path) -> BoardStore:
    store = BoardStore(directory)
    for n, title in enumerate(TITLES):
        store.create(title, body=f"body {n}", status=("Todo", "Done")[n % 2])
    return store


def wait_past_window(directory: Path) -> None:
    """Wait until every file of the board changed longer ago than the racy window, as any board
    not written in the last moment has (its files can then be indexed)."""
    stats = [os.lstat(entry.path) for entry in os.scandir(directory)] + [os.stat(directory)]
    newest = max(max(item.st_mtime_ns, item.st_ctime_ns) for item in stats)
    remaining = (newest + WINDOW_NS + 1_000_000 - time.time_ns()) / 1e9
    if remaining > 0:
        threading.Event().wait(remaining)


def cold(store: BoardStore) -> Answer:
    """A new process's first query: no parse cache, no snapshot (the persisted index, if any)."""
    CACHE.clear()
    SNAPSHOTS.clear()
    records, skipped = store.records()
    return json.loads(json.dumps(records)), [item.to_dict() for item in skipped]


def unindexed(store: BoardStore, cache: Path) -> Answer:
    """What reading every file answers: the same query with the index removed first."""
    for path in cache.rglob("*.json"):
        path.unlink()
    return cold(store)


def count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    real = files_module.read_regular

    def spy(path: str) -> tuple[os.stat_result, bytes]:
        if path.endswith(".md"):
            read.append(os.path.basename(path)[:-3])
        return real(path)

    monkeypatch.setattr(files_module, "read_regular", spy)
    return read


def indexed_board(directory: Path) -> BoardStore:
    """A board whose files are all settled, queried once (which writes its index)."""
    store = make_board(directory)
    wait_past_window(directory)
    cold(store)
    return store


def test_a_later_process_reads_no_unchanged_file(
    tmp_path: Path, index_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first query of a process answers from the index: one lstat per file, no file read."""
    board = tmp_path / "board"
    store = indexed_board(board)
    read = count_reads(monkeypatch)
    answer = cold(store)
    assert read == []
    assert [record["title"] for record in answer[0]] == list(TITLES)
    assert answer == unindexed(store, index_cache)
    assert sorted(read) == ["BOARD-1", "BOARD-2", "BOARD-3", "BOARD-4"]
    # Kept in the user's cache, never in the board.
    assert sorted(os.listdir(board)) == [".lorenz.lock", "BOARD-1.md", "BOARD-2.md", "BOARD-3.md", "BOARD-4.md"]
    assert len(list((index_cache / "lorenz" / "local-index").glob("*.json"))) == 1


def test_files_changed_within_the_racy_window_are_not_indexed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file read within the racy window of its last change could change again unseen: the index
    leaves it out, so the next process reads it."""
    monkeypatch.setattr(reads_module, "RACY_WINDOW_NS", 3600 * 10**9)
    store = make_board(tmp_path)
    cold(store)
    read = count_reads(monkeypatch)
    cold(store)
    assert sorted(read) == ["BOARD-1", "BOARD-2", "BOARD-3", "BOARD-4"]


# -- edits behind the index's back -------------------------------------------------------------------


def keep_times(path: Path, change: Callable[[], None]) -> None:
    """``change``, then the file's atime and mtime put back: only its ctime tells."""
    before = os.stat(path)
    change()
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns), follow_symlinks=False)


def edit_in_place(board: Path, n: int) -> None:
    path = board / f"BOARD-{n}.md"
    text = path.read_text(encoding="utf-8")
    keep_times(path, lambda: path.write_text(text.replace(f"# {TITLES[n - 1]}", "# zzzzz"), encoding="utf-8"))


def break_in_place(board: Path, n: int) -> None:
    path = board / f"BOARD-{n}.md"
    text = path.read_text(encoding="utf-8")
    keep_times(path, lambda: path.write_text("xxx" + text[3:], encoding="utf-8"))


def replace_same_size(board: Path, n: int) -> None:
    """Another file of the same size and mtime renamed over it (a new inode)."""
    path = board / f"BOARD-{n}.md"
    before = os.stat(path)
    temp = board / "replacement.tmp"
    temp.write_text(path.read_text(encoding="utf-8").replace(f"# {TITLES[n - 1]}", "# yyyyy"), encoding="utf-8")
    os.utime(temp, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(temp, path)


def recreate_same_size(board: Path, n: int) -> None:
    """Deleted, then written again with the same size and mtime (the inode may well be reused)."""
    path = board / f"BOARD-{n}.md"
    before = os.stat(path)
    text = path.read_text(encoding="utf-8").replace(f"# {TITLES[n - 1]}", "# wwwww")
    path.unlink()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def rename_over(board: Path, n: int) -> None:
    """Another issue's file renamed over this one (its inode, size and times come along)."""
    source = board / f"BOARD-{n % len(TITLES) + 1}.md"
    if source.is_symlink() or source.is_file():  # a directory cannot be renamed over a file
        os.replace(source, board / f"BOARD-{n}.md")


def rename_away(board: Path, n: int) -> None:
    os.replace(board / f"BOARD-{n}.md", board / f"BOARD-{n + 10}.md")


def delete(board: Path, n: int) -> None:
    (board / f"BOARD-{n}.md").unlink()


def symlink_in(board: Path, n: int) -> None:
    path = board / f"BOARD-{n}.md"
    path.unlink()
    path.symlink_to(board / "BOARD-1.md" if n != 1 else board / "BOARD-2.md")


def directory_in(board: Path, n: int) -> None:
    path = board / f"BOARD-{n}.md"
    path.unlink()
    path.mkdir()


def add(board: Path, n: int) -> None:
    (board / f"BOARD-{n + 20}.md").write_text(f"---\nstatus: New\n---\n\n# added {n}\n", encoding="utf-8")


EDITS: dict[str, Callable[[Path, int], None]] = {
    "edit in place, same size and mtime": edit_in_place,
    "made malformed in place, same size and mtime": break_in_place,
    "replaced by rename, same size and mtime": replace_same_size,
    "deleted and written again, same size and mtime": recreate_same_size,
    "another file renamed over it": rename_over,
    "renamed to another id": rename_away,
    "deleted": delete,
    "a symlink in its place": symlink_in,
    "a directory in its place": directory_in,
    "a file added": add,
}


def existing(board: Path, n: int) -> bool:
    path = board / f"BOARD-{n}.md"
    return path.is_file() and not path.is_symlink()


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_edits_behind_the_index_are_seen(
    edit: str, tmp_path: Path, index_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each kind of change made without the board's code is answered as reading every file
    answers it, and only what changed is read."""
    board = tmp_path / "board"
    store = indexed_board(board)
    before = cold(store)
    EDITS[edit](board, 2)
    read = count_reads(monkeypatch)
    answer = cold(store)
    assert not {"BOARD-1", "BOARD-4"} & set(read)  # the unchanged files came from the index
    assert answer != before
    assert answer == unindexed(store, index_cache)
    # The index written after the change answers the same again.
    assert cold(store) == answer


@settings(max_examples=25)
@given(
    st.lists(
        st.tuples(st.sampled_from(sorted(EDITS)), st.integers(min_value=1, max_value=len(TITLES))),
        min_size=1,
        max_size=4,
    )
)
@example(edits=[("a directory in its place", 2), ("another file renamed over it", 1)])
def test_any_edits_behind_the_index_answer_as_reading_every_file(edits: list[tuple[str, int]]) -> None:
    """Property: after any sequence of edits behind the index's back, the indexed answer is the
    unindexed one."""
    with tempfile.TemporaryDirectory() as root:
        board, cache = Path(root) / "board", Path(root) / "cache"
        os.environ["XDG_CACHE_HOME"] = str(cache)  # the fixture's value is restored after the test
        store = indexed_board(board)
        for name, n in edits:
            if existing(board, n) and not (board / f"BOARD-{n + 10}.md").exists():
                EDITS[name](board, n)
        assert cold(store) == unindexed(store, cache)


# -- the index file itself ---------------------------------------------------------------------------


def index_file(cache: Path) -> Path:
    (path,) = (cache / "lorenz" / "local-index").glob("*.json")
    return path


def rewrite(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    body = json.loads(path.read_bytes())
    change(body)
    path.write_text(json.dumps(body), encoding="utf-8")


CORRUPTIONS: dict[str, Callable[[Path, Path], None]] = {
    "empty": lambda path, _: path.write_bytes(b""),
    "truncated": lambda path, _: path.write_bytes(path.read_bytes()[:-100]),
    "not an object": lambda path, _: path.write_text("[1, 2]"),
    "deeply nested": lambda path, _: path.write_text("[" * 100_000 + "]" * 100_000),
    "another format version": lambda path, _: rewrite(
        path, lambda b: b["header"].update(format="lorenz-local-index/0")
    ),
    "another board's index": lambda path, _: rewrite(path, lambda b: b["header"].update(board="/elsewhere")),
    "another parser's rows": lambda path, _: rewrite(path, lambda b: b["header"].update(parser="0" * 32)),
    "another device": lambda path, _: rewrite(path, lambda b: b["header"].update(device=b["header"]["device"] + 1)),
    "a label that is not a string": lambda path, _: rewrite(path, lambda b: b["columns"]["labels"].__setitem__(0, [1])),
    "a title that is not a string": lambda path, _: rewrite(path, lambda b: b["columns"]["title"].__setitem__(0, None)),
    "an inode that is not an integer": lambda path, _: rewrite(path, lambda b: b["columns"]["ino"].__setitem__(0, 1.5)),
    "columns of different lengths": lambda path, _: rewrite(path, lambda b: b["columns"]["state"].pop()),
    "a column missing": lambda path, _: rewrite(path, lambda b: b["columns"].pop("updatedAt")),
    "an extra key": lambda path, _: rewrite(path, lambda b: b.update(extra=1)),
    "a bad error row": lambda path, _: rewrite(path, lambda b: b["errors"].append(["BOARD-9", 1, 2, 3, 4])),
    "a symlink to a valid index": lambda path, tmp: (
        os.replace(path, tmp / "elsewhere.json"),
        path.symlink_to(tmp / "elsewhere.json"),
    ),
    "a directory": lambda path, _: (path.unlink(), path.mkdir()),
}


@pytest.mark.parametrize("corruption", CORRUPTIONS, ids=list(CORRUPTIONS))
def test_a_corrupt_or_foreign_index_is_ignored_and_rebuilt(
    corruption: str, tmp_path: Path, index_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = tmp_path / "board"
    store = indexed_board(board)
    truth = cold(store)
    path = index_file(index_cache)
    CORRUPTIONS[corruption](path, tmp_path)
    read = count_reads(monkeypatch)
    assert cold(store) == truth
    assert sorted(read) == ["BOARD-1", "BOARD-2", "BOARD-3", "BOARD-4"]  # nothing taken from it
    if corruption != "a directory":  # one that cannot be replaced stays ignored
        read.clear()
        assert cold(store) == truth
        assert read == []  # rewritten whole: the next process uses it


def test_an_index_over_its_size_bound_is_not_read(
    tmp_path: Path, index_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = indexed_board(tmp_path / "board")
    monkeypatch.setattr(index_module, "MAX_INDEX_BYTES", index_file(index_cache).stat().st_size - 1)
    read = count_reads(monkeypatch)
    assert cold(store) == unindexed(store, index_cache)
    assert len(read) == 8  # both queries read every file
    assert list(index_cache.rglob("*.json")) == []  # nor written past it


def test_an_unwritable_cache_still_answers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache directory that cannot be created or written (here: its parent is a file) costs the
    index, never the answer."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker / "cache"))
    store = indexed_board(tmp_path / "board")
    read = count_reads(monkeypatch)
    assert [record["title"] for record in cold(store)[0]] == list(TITLES)
    assert len(read) == 4


def test_the_board_own_writes_are_seen_by_the_next_process(tmp_path: Path, index_cache: Path) -> None:
    """Creates, status changes and comments made after the index was written are answered by a
    later process as by reading every file."""
    store = indexed_board(tmp_path / "board")
    store.update_status("BOARD-1", "Reviewing")
    store.append_comment("BOARD-2", "a comment")
    store.create("echo")
    answer = cold(store)
    assert [record["state"] for record in answer[0]][:1] == ["Reviewing"]
    assert answer == unindexed(store, index_cache)


def test_old_indexes_are_pruned(tmp_path: Path, index_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Boards come and go (temp directories, moved checkouts): the cache keeps the most recent few."""
    monkeypatch.setattr(index_module, "MAX_INDEXES", 2)
    for n in range(4):
        indexed_board(tmp_path / f"board{n}")
    assert len(list(index_cache.rglob("*.json"))) == 2
