"""The query caches: parsed files by signature, and per-board snapshots by directory signature."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lorenz_local import board as board_module
from lorenz_local import reads as reads_module
from lorenz_local import store as store_module
from lorenz_local.cache import CACHE, SNAPSHOTS, CachedFile, ParseCache
from lorenz_local.store import BoardStore


@pytest.fixture(autouse=True)
def fresh_caches() -> Iterator[None]:
    CACHE.clear()
    SNAPSHOTS.clear()
    yield
    CACHE.clear()
    SNAPSHOTS.clear()


def edit_in_place(path: Path, old: str, new: str) -> None:
    """Rewrite a file through the same inode (like many editors), leaving its directory alone."""
    with open(path, "r+", encoding="utf-8") as handle:
        text = handle.read().replace(old, new)
        handle.seek(0)
        handle.write(text)
        handle.truncate()


def titles(store: BoardStore) -> list[str]:
    return [record["title"] for record in store.records()[0]]


def count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    real = board_module.parse_document

    def spy(text: str, issue_id: str) -> board_module.BoardDocument:
        parsed.append(issue_id)
        return real(text, issue_id)

    monkeypatch.setattr(reads_module, "parse_document", spy)
    return parsed


def count_file_stats(monkeypatch: pytest.MonkeyPatch, directory: Path) -> list[str]:
    stats: list[str] = []
    for name in ("stat", "lstat"):
        real = getattr(os, name)

        def spy(path: str | os.PathLike[str], *args: object, real: Any = real, **kwargs: object) -> os.stat_result:
            if os.fspath(path).endswith(".md"):
                stats.append(os.fspath(path))
            return real(path, *args, **kwargs)  # type: ignore[no-any-return]

        monkeypatch.setattr(store_module.os, name, spy)
    return stats


def test_unchanged_files_are_not_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second listing of an unchanged board parses nothing; a changed file is parsed again."""
    store = BoardStore(tmp_path)
    for title in ("a", "b", "c"):
        store.create(title)
    CACHE.clear()
    parsed = count_parses(monkeypatch)
    assert [issue.title for issue in store.list_issues()] == ["a", "b", "c"]
    assert sorted(parsed) == ["BOARD-1", "BOARD-2", "BOARD-3"]
    parsed.clear()
    store.list_issues()
    assert parsed == []
    store.append_comment("BOARD-2", "touch")
    store.list_issues()
    assert "BOARD-2" in parsed
    assert "BOARD-1" not in parsed


def test_malformed_files_are_cached_with_their_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A malformed file is not re-parsed on every listing, and is reported every time."""
    (tmp_path / "BOARD-1.md").write_text("---\nlabels: []\n---\n")
    store = BoardStore(tmp_path)
    parsed = count_parses(monkeypatch)
    first, second = store.records()[1], store.records()[1]
    SNAPSHOTS.clear()
    third = store.records()[1]
    assert [item.id for item in first] == [item.id for item in second] == [item.id for item in third] == ["BOARD-1"]
    assert parsed == ["BOARD-1"]


def test_quiet_board_is_answered_without_touching_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A board whose directory is unchanged (and settled) is queried without stat'ing its files."""
    store = BoardStore(tmp_path)
    store.create("a")
    store.create("b")
    monkeypatch.setattr(reads_module, "RACY_WINDOW_NS", 0)
    monkeypatch.setattr(store_module, "SNAPSHOT_MAX_AGE", 3600.0)
    assert titles(store) == ["a", "b"]
    stats = count_file_stats(monkeypatch, tmp_path)
    assert titles(store) == ["a", "b"]
    assert stats == []
    SNAPSHOTS.clear()  # the spy does see a full listing's per-file lstat
    assert titles(store) == ["a", "b"]
    assert len(stats) == 2


def test_board_writes_invalidate_the_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Creates, status changes and comments by any store are seen by the very next query."""
    monkeypatch.setattr(reads_module, "RACY_WINDOW_NS", 0)
    monkeypatch.setattr(store_module, "SNAPSHOT_MAX_AGE", 3600.0)
    reader, writer = BoardStore(tmp_path), BoardStore(tmp_path)
    writer.create("a")
    assert titles(reader) == ["a"]
    writer.create("b")
    assert titles(reader) == ["a", "b"]
    writer.update_status("BOARD-1", "Done")
    assert [record["state"] for record in reader.records()[0]] == ["Done", "Todo"]
    os.unlink(tmp_path / "BOARD-2.md")
    assert titles(reader) == ["a"]


def test_in_place_edits_are_seen_after_the_snapshot_ages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit that leaves the directory alone is seen once the snapshot is older than its max age."""
    monkeypatch.setattr(reads_module, "RACY_WINDOW_NS", 0)
    monkeypatch.setattr(store_module, "SNAPSHOT_MAX_AGE", 3600.0)
    store = BoardStore(tmp_path)
    store.create("before")
    assert titles(store) == ["before"]
    edit_in_place(tmp_path / "BOARD-1.md", "# before", "# after, edited in place")
    assert titles(store) == ["before"]  # still within the snapshot's max age
    monkeypatch.setattr(store_module, "SNAPSHOT_MAX_AGE", 0.0)
    assert titles(store) == ["after, edited in place"]


def test_recently_changed_directory_is_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Within the racy window every query re-validates, so even an in-place edit is seen at once."""
    monkeypatch.setattr(reads_module, "RACY_WINDOW_NS", 10**18)
    monkeypatch.setattr(store_module, "SNAPSHOT_MAX_AGE", 3600.0)
    store = BoardStore(tmp_path)
    store.create("before")
    assert titles(store) == ["before"]
    edit_in_place(tmp_path / "BOARD-1.md", "# before", "# after!")
    assert titles(store) == ["after!"]


def test_same_size_edit_within_a_coarse_timestamp_tick_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28: on a filesystem with coarse timestamps a same-size edit in place keeps the file's
    signature; an entry read within the racy window is re-validated, so the edit is seen at once."""
    monkeypatch.setattr(store_module, "SNAPSHOT_MAX_AGE", 3600.0)
    parsed = count_parses(monkeypatch)
    store = BoardStore(tmp_path)
    store.create("before")
    path = tmp_path / "BOARD-1.md"
    tick = time.time_ns() // 2_000_000_000 * 2_000_000_000  # FAT-like: two-second mtimes
    os.utime(path, ns=(tick, tick))
    assert store.read("BOARD-1").title == "before"
    parsed.clear()
    assert store.read("BOARD-1").title == titles(store)[0] == "before"
    assert parsed == []  # re-validated by content, not parsed again
    edit_in_place(path, "# before", "# after!")
    os.utime(path, ns=(tick, tick))
    assert store.read("BOARD-1").title == "after!"
    edit_in_place(path, "# after!", "# again!")
    os.utime(path, ns=(tick, tick))
    assert titles(store) == ["again!"]
    assert store_module.BoardStore(tmp_path).cached_content("BOARD-1") is None  # not settled: not served


def test_snapshots_are_per_prefix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two prefixes on one directory keep separate listings."""
    monkeypatch.setattr(reads_module, "RACY_WINDOW_NS", 0)
    BoardStore(tmp_path).create("board")
    BoardStore(tmp_path, id_prefix="OPS-").create("ops")
    assert titles(BoardStore(tmp_path)) == ["board"]
    assert titles(BoardStore(tmp_path, id_prefix="OPS-")) == ["ops"]


def test_parse_cache_is_bounded_and_least_recently_used() -> None:
    """The parse cache evicts its least recently used entry beyond its bound."""
    cache = ParseCache(max_entries=2)
    entry = CachedFile(error="x")
    cache.put("a", (1, 1, 1), entry)
    cache.put("b", (1, 1, 1), entry)
    assert cache.get("a", (1, 1, 1)) is entry
    cache.put("c", (1, 1, 1), entry)
    assert cache.get("b", (1, 1, 1)) is None
    assert cache.get("a", (1, 1, 1)) is entry
    assert cache.get("a", (2, 1, 1)) is None
    assert len(cache) == 2
