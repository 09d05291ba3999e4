"""Hostile board entries (issue 11): FIFOs, symlinks, directories named like issue files.

Every call runs in a thread with a hang guard: a FIFO opened for reading blocks until a writer
comes, so a regression shows as a failed "answered promptly" assertion rather than a hung suite.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest

from lorenz import Settings, ToolResult, TrackerContext, TrackerSettings, discover
from lorenz.testing import parse_config
from lorenz_local import files as files_module
from lorenz_local import publish as publish_module
from lorenz_local.files import BoardIOError, NotRegularFileError, read_regular
from lorenz_local.locks import LOCK_FILE_NAME
from lorenz_local.store import BoardStore
from lorenz_local.tools import run_local_tool
from lorenz_local.tracker import LocalTrackerProvider

T = TypeVar("T")
HANG_GUARD = 5.0  # seconds; every call here answers in milliseconds
ISSUE = "---\nstatus: Todo\n---\n\n# {title}\n\n{body}\n"
SECRET = "SECRET-OUTSIDE-CONTENT"
# id -> the error every surface reports for it
BAD = {
    "BOARD-2": "board issue BOARD-2 is a FIFO, not a regular file",
    "BOARD-3": "board issue BOARD-3 is a symbolic link, not a regular file",
    "BOARD-4": "board issue BOARD-4 is a symbolic link, not a regular file",
    "BOARD-5": "board issue BOARD-5 is a symbolic link, not a regular file",
    "BOARD-6": "board issue BOARD-6 is a directory, not a regular file",
    "BOARD-7": "board issue BOARD-7 is a symbolic link, not a regular file",
}


def promptly(call: Callable[[], T]) -> T:
    """``call()`` in a daemon thread; fails the test if it has not returned within the guard."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:  # handed back to the test thread
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    started = time.monotonic()
    thread.start()
    thread.join(HANG_GUARD)
    assert not thread.is_alive(), f"did not answer within {HANG_GUARD} s (blocked on a FIFO?)"
    assert time.monotonic() - started < HANG_GUARD
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]


def unblock_fifos(*fifos: Path) -> None:
    """Give any reader a regression left blocked on a FIFO its writer, so it can finish."""
    for fifo in fifos:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue  # no reader waiting
        os.close(fd)


class Board:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.dir = root / "board"
        self.outside = root / "outside.md"
        self.inside_target = self.dir / "notes.md"
        self.fifo = self.dir / "BOARD-2.md"
        self.outside_fifo = root / "outside.fifo"

    def snapshot(self) -> dict[str, Any]:
        """What must never change through the board: targets' bytes and the entries' kinds."""
        kinds = {name: os.lstat(self.dir / name).st_mode for name in os.listdir(self.dir) if name != LOCK_FILE_NAME}
        return {
            "outside": self.outside.read_bytes(),
            "inside": self.inside_target.read_bytes(),
            "kinds": kinds,
            "outside_entries": sorted(os.listdir(self.root)),
        }


@pytest.fixture
def board(tmp_path: Path) -> Iterator[Board]:
    """BOARD-1 regular; 2 FIFO; 3 -> file outside; 4 -> file inside; 5 -> a FIFO; 6 a directory;
    7 dangling -> a path outside."""
    made = Board(tmp_path)
    BoardStore(made.dir).create("Good one", body="fine")
    made.outside.write_text(ISSUE.format(title="Outside", body=SECRET))
    made.inside_target.write_text(ISSUE.format(title="Inside", body="notes"))
    os.mkfifo(made.fifo)
    os.mkfifo(made.outside_fifo)
    (made.dir / "BOARD-3.md").symlink_to(made.outside)
    (made.dir / "BOARD-4.md").symlink_to("notes.md")
    (made.dir / "BOARD-5.md").symlink_to(made.outside_fifo)
    (made.dir / "BOARD-6.md").mkdir()
    (made.dir / "BOARD-7.md").symlink_to(tmp_path / "created-through-link.md")
    yield made
    unblock_fifos(made.fifo, made.outside_fifo)


def settings_for(board: Board) -> Settings:
    return Settings(tracker=TrackerSettings(kind="local", options={"path": str(board.dir)}))


def tool(board: Board, name: str, args: dict[str, Any]) -> ToolResult:
    return promptly(lambda: run_local_tool(name, args, settings_for(board)))


def test_query_lists_the_good_issue_and_reports_every_bad_entry(board: Board) -> None:
    """local_query answers promptly: BOARD-1 as a row, each hostile entry in `skipped`, nothing read through."""
    for select in (None, ["id", "title", "description", "comments"]):
        result = tool(board, "local_query", {} if select is None else {"select": select})
        assert result.success, result.error
        assert [row["id"] for row in result.result["rows"]] == ["BOARD-1"]
        assert result.result["skipped"] == [{"id": key, "error": error} for key, error in BAD.items()]
        assert SECRET not in repr(result.result)


def test_read_issue_refuses_each_bad_entry(board: Board) -> None:
    """local_read_issue of a hostile entry is a prompt failure naming it; the good issue reads."""
    for issue_id, error in BAD.items():
        result = tool(board, "local_read_issue", {"issueId": issue_id})
        assert (result.success, result.error) == (False, error)
    assert tool(board, "local_read_issue", {"issueId": "BOARD-1"}).result["issue"]["title"] == "Good one"


def test_writes_never_go_through_or_replace_a_bad_entry(board: Board) -> None:
    """Status updates and comments on a hostile entry fail promptly and change nothing anywhere."""
    before = board.snapshot()
    for issue_id, error in BAD.items():
        for name, args in (
            ("local_update_status", {"issueId": issue_id, "status": "Done"}),
            ("local_comment", {"issueId": issue_id, "body": "through the link?"}),
        ):
            result = tool(board, name, args)
            assert (result.success, result.error) == (False, error)
    assert board.snapshot() == before
    assert not (board.root / "created-through-link.md").exists()


def test_create_and_good_writes_still_work(board: Board) -> None:
    """Ids of hostile entries count (gaps are never reused); the good issue is still writable."""
    created = tool(board, "local_create_issue", {"title": "Next"})
    assert created.result["issue"]["id"] == "BOARD-8"
    moved = tool(board, "local_update_status", {"issueId": "BOARD-1", "status": "Done"})
    assert moved.result["issue"]["state"] == "Done"
    assert stat_is_regular(board.dir / "BOARD-8.md")
    assert (board.root / "outside.md").read_text().count(SECRET) == 1


def stat_is_regular(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def test_tracker_poll_skips_and_by_id_refuses(board: Board, caplog: pytest.LogCaptureFixture) -> None:
    """The candidate poll answers promptly with BOARD-1, warning once per hostile entry; a by-id
    fetch of one is a prompt error, and by state works."""
    config = {"tracker": {"kind": "local", "path": str(board.dir), "active_states": ["Todo"]}}
    env = {"LORENZ_LOAD_PLUGINS": "lorenz-local"}
    settings = parse_config(config, env={}, trackers=discover(env=env).trackers, base_dir=board.root)
    client = LocalTrackerProvider().create_client(settings, TrackerContext(env={}, cwd=board.root))
    with caplog.at_level(logging.WARNING, logger="lorenz_local"):
        candidates = promptly(lambda: anyio.run(client.fetch_candidate_issues))
    assert [issue.id for issue in candidates] == ["BOARD-1"]
    warnings = [record.getMessage() for record in caplog.records if record.levelno == logging.WARNING]
    assert len(warnings) == len(BAD)
    for warning, error in zip(warnings, BAD.values(), strict=True):
        assert warning.endswith(error)
    by_state = promptly(lambda: anyio.run(client.fetch_issues_by_states, ["Todo"]))
    assert [issue.id for issue in by_state] == ["BOARD-1"]
    for issue_id, error in BAD.items():
        with pytest.raises(ValueError, match=error):
            promptly(lambda issue_id=issue_id: anyio.run(client.fetch_issues_by_ids, [issue_id]))


def test_an_issue_replaced_by_a_fifo_is_seen_by_the_next_query(board: Board) -> None:
    """The cache keys on the entry itself: a file swapped for a FIFO or symlink is reported, not served stale."""
    assert [row["id"] for row in tool(board, "local_query", {}).result["rows"]] == ["BOARD-1"]
    good = board.dir / "BOARD-1.md"
    good.unlink()
    os.mkfifo(good)
    try:
        result = tool(board, "local_query", {})
        assert result.result["rows"] == []
        error = "board issue BOARD-1 is a FIFO, not a regular file"
        assert result.result["skipped"][0] == {"id": "BOARD-1", "error": error}
        assert tool(board, "local_read_issue", {"issueId": "BOARD-1"}).error == error
    finally:
        unblock_fifos(good)


def test_read_regular_checks_the_open_descriptor(tmp_path: Path) -> None:
    """The primitive itself refuses a symlink (O_NOFOLLOW), a FIFO and a directory without
    blocking, so an entry swapped after the caller's lstat is still caught."""
    target = tmp_path / "target.md"
    target.write_text("x")
    (tmp_path / "link.md").symlink_to(target)
    os.mkfifo(tmp_path / "fifo.md")
    (tmp_path / "dir.md").mkdir()
    try:
        for name, kind in (("link.md", "a symbolic link"), ("fifo.md", "a FIFO"), ("dir.md", "a directory")):
            with pytest.raises(NotRegularFileError) as info:
                promptly(lambda name=name: read_regular(str(tmp_path / name)))
            assert (info.value.kind, str(info.value)) == (kind, f"{name} is {kind}, not a regular file")
        assert promptly(lambda: read_regular(str(target)))[1] == b"x"
    finally:
        unblock_fifos(tmp_path / "fifo.md")


@pytest.mark.parametrize("kind", ["fifo", "symlink", "dangling", "directory"])
def test_a_hostile_lock_file_fails_writes_promptly_and_reads_still_answer(tmp_path: Path, kind: str) -> None:
    """`.lorenz.lock` that is not a regular file: writes fail naming it, nothing is created or
    written through, and the board still reads."""
    board = tmp_path / "board"
    store = BoardStore(board)
    store.create("Locked")
    lock = board / LOCK_FILE_NAME
    lock.unlink()
    outside = tmp_path / "outside-lock"
    if kind == "fifo":
        os.mkfifo(lock)
    elif kind == "symlink":
        outside.write_text(SECRET)
        lock.symlink_to(outside)
    elif kind == "dangling":
        lock.symlink_to(outside)
    else:
        lock.mkdir()
    before = (board / "BOARD-1.md").read_bytes()
    noun = {"fifo": "a FIFO", "symlink": "a symbolic link", "dangling": "a symbolic link", "directory": "a directory"}
    expected = f".lorenz.lock is {noun[kind]}, not a regular file"
    try:
        with pytest.raises(BoardIOError, match=f"^failed to write board issue BOARD-1: {expected}$"):
            promptly(lambda: store.update_status("BOARD-1", "Done"))
        with pytest.raises(BoardIOError, match=f"^failed to create a board issue: {expected}$"):
            promptly(lambda: store.create("Another"))
        assert (board / "BOARD-1.md").read_bytes() == before
        assert sorted(os.listdir(board)) == sorted(["BOARD-1.md", LOCK_FILE_NAME])
        assert promptly(lambda: store.read("BOARD-1")).state == "Todo"
        assert (outside.read_text() == SECRET) if kind == "symlink" else not outside.exists()
    finally:
        unblock_fifos(lock)


def test_a_symlink_at_the_temp_path_is_never_written_through(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A symlink planted at the (predicted) temp path: the exclusive create refuses it and the
    failed write removes the link itself, never its target; a create's sweep does the same."""
    store = BoardStore(tmp_path / "board")
    store.create("Target")
    outside = tmp_path / "outside.md"
    outside.write_text(SECRET)
    monkeypatch.setattr(publish_module, "_random_token", lambda: "planted")
    temp = tmp_path / "board" / f"BOARD-1.md.{os.getpid()}.planted.tmp"
    temp.symlink_to(outside)
    monkeypatch.setitem(publish_module._last_sweep, os.fspath(store.directory), time.monotonic())  # no sweep
    with pytest.raises(OSError, match=r"^failed to write board issue BOARD-1: File exists$"):
        promptly(lambda: store.update_status("BOARD-1", "Done"))
    assert not temp.is_symlink()
    assert outside.read_text() == SECRET
    assert promptly(lambda: store.update_status("BOARD-1", "Done")).state == "Done"
    created_temp = tmp_path / "board" / f".lorenz-create.{os.getpid()}.planted.tmp"
    created_temp.symlink_to(outside)
    assert promptly(lambda: store.create("Next")).id == "BOARD-2"
    assert outside.read_text() == SECRET
    assert stat_is_regular(tmp_path / "board" / "BOARD-2.md")
    assert not created_temp.is_symlink()


def test_the_temp_file_is_opened_without_following_links(tmp_path: Path) -> None:
    """write_new_file refuses an existing entry, even a dangling symlink, and never creates its target."""
    link = tmp_path / "x.tmp"
    link.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(FileExistsError):
        files_module.write_new_file(str(link), b"data")
    assert not (tmp_path / "elsewhere").exists()
