"""BoardStore: ids, reads, writes and durability."""

from __future__ import annotations

import errno
import os
import re
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lorenz_local import files as files_module
from lorenz_local import publish as publish_module
from lorenz_local import store as store_module
from lorenz_local.files import BoardIOError
from lorenz_local.locks import LOCK_FILE_NAME
from lorenz_local.store import BoardStore, SkippedFile

T10 = datetime(2026, 5, 29, 10, 0, tzinfo=UTC)
T11 = datetime(2026, 5, 29, 11, 0, tzinfo=UTC)
INVALID_IDS = ["../../etc/passwd", "BOARD-1/../x", "foo", "", "BOARD-1/../../outside-marker", "BOARD-1\n", "BOARD-١"]


def md_files(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name != LOCK_FILE_NAME)


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_unknown_status_maps_to_backlog(tmp_path: Path) -> None:
    """A status with no default state type (`Reviewing`) is kept raw with stateType `backlog`."""
    write(tmp_path, "BOARD-1.md", "---\nstatus: Reviewing\n---\n\n# Review me\n")
    issue = BoardStore(tmp_path).read("BOARD-1")
    assert (issue.state, issue.state_type) == ("Reviewing", "backlog")


def test_create_assigns_sequential_ids_and_renders(tmp_path: Path) -> None:
    """Creates get BOARD-1, BOARD-2 with status Todo by default and the documented file text."""
    store = BoardStore(tmp_path)
    first = store.create("First", body="Body A", status="Todo")
    second = store.create("Second")
    assert (first.id, first.identifier, second.id, second.identifier) == ("BOARD-1", "BOARD-1", "BOARD-2", "BOARD-2")
    assert (first.title, first.description, first.state, first.state_type) == ("First", "Body A", "Todo", "unstarted")
    assert second.state == "Todo"
    assert (tmp_path / "BOARD-1.md").read_text() == "---\nstatus: Todo\n---\n\n# First\n\nBody A\n"


def test_create_rejects_blank_status_before_touching_disk(tmp_path: Path) -> None:
    """A blank status is refused with no file written; a padded one is trimmed."""
    store = BoardStore(tmp_path / "board")
    with pytest.raises(ValueError, match="status"):
        store.create("Nope", status="   ")
    assert not (tmp_path / "board").exists()
    ready = store.create("Ready", status="  In Progress  ")
    assert (ready.id, ready.state) == ("BOARD-1", "In Progress")
    assert "status: In Progress\n" in (tmp_path / "board" / "BOARD-1.md").read_text()


def test_update_status_keeps_description(tmp_path: Path) -> None:
    """Moving an issue changes state and stateType and keeps the description."""
    store = BoardStore(tmp_path)
    store.create("Fix it", body="Details here")
    issue = store.update_status("BOARD-1", "In Progress")
    assert (issue.state, issue.state_type, issue.description) == ("In Progress", "started", "Details here")


def test_update_status_rejects_blank_status_leaving_file_untouched(tmp_path: Path) -> None:
    """A blank status update fails and the file stays byte-for-byte the same."""
    store = BoardStore(tmp_path)
    store.create("Keep")
    before = (tmp_path / "BOARD-1.md").read_bytes()
    with pytest.raises(ValueError, match="status"):
        store.update_status("BOARD-1", "   ")
    assert (tmp_path / "BOARD-1.md").read_bytes() == before
    assert store.read("BOARD-1").state == "Todo"
    assert [issue.id for issue in store.list_issues()] == ["BOARD-1"]


def test_append_comment_writes_timestamped_lines(tmp_path: Path) -> None:
    """Comments go under the hidden marker as `- <ISO ms Z> agent: <body>` lines."""
    store = BoardStore(tmp_path)
    store.create("Commented", body="Desc")
    store.append_comment("BOARD-1", "opened PR #42", now=T10)
    store.append_comment("BOARD-1", "checks green", now=T11)
    assert store.read("BOARD-1").description == "Desc"
    text = (tmp_path / "BOARD-1.md").read_text()
    assert text == (
        "---\nstatus: Todo\n---\n\n# Commented\n\nDesc\n\n<!-- lorenz:comments -->\n## Comments\n"
        "- 2026-05-29T10:00:00.000Z agent: opened PR #42\n- 2026-05-29T11:00:00.000Z agent: checks green\n"
    )


def test_read_content_before_and_after_changes(tmp_path: Path) -> None:
    """read_content returns the raw status, title, description and comment lines."""
    store = BoardStore(tmp_path)
    store.create("Read me", body="Some details")
    assert store.read_content("BOARD-1") == {
        "id": "BOARD-1",
        "status": "Todo",
        "title": "Read me",
        "description": "Some details",
        "comments": [],
    }
    store.update_status("BOARD-1", "In Progress")
    store.append_comment("BOARD-1", "one", now=T10)
    store.append_comment("BOARD-1", "two", now=T11)
    content = store.read_content("BOARD-1")
    assert content["status"] == "In Progress"
    assert content["comments"] == [
        "- 2026-05-29T10:00:00.000Z agent: one",
        "- 2026-05-29T11:00:00.000Z agent: two",
    ]


def test_read_content_rejects_bad_and_missing_ids(tmp_path: Path) -> None:
    """A malformed id is refused by name; a missing issue raises the OS error."""
    store = BoardStore(tmp_path)
    with pytest.raises(ValueError, match=r'invalid board issue id: "not-a-board-id" \(expected BOARD-<n>\)'):
        store.read_content("not-a-board-id")
    with pytest.raises(FileNotFoundError):
        store.read_content("BOARD-404")


def test_custom_prefix_ignores_other_files(tmp_path: Path) -> None:
    """An `XXX-` board ignores BOARD-* and README files and rejects BOARD ids."""
    store = BoardStore(tmp_path, id_prefix="XXX-")
    assert store.create("One").id == "XXX-1"
    assert "status: Todo" in (tmp_path / "XXX-1.md").read_text()
    write(tmp_path, "BOARD-9.md", "---\nstatus: Todo\n---\n# Other\n")
    write(tmp_path, "README.md", "# Readme\n")
    assert [issue.id for issue in store.list_issues()] == ["XXX-1"]
    assert store.create("Two").id == "XXX-2"
    store.update_status("XXX-1", "Done")
    store.append_comment("XXX-1", "did the thing", now=datetime(2026, 6, 1, tzinfo=UTC))
    content = store.read_content("XXX-1")
    assert content["status"] == "Done"
    assert content["comments"] == ["- 2026-06-01T00:00:00.000Z agent: did the thing"]
    with pytest.raises(ValueError, match="expected XXX-<n>"):
        store.read_content("BOARD-1")


@pytest.mark.parametrize("prefix", ["../evil", "a/b", "", "-x", "a.b", "a b"])
def test_invalid_prefix_is_rejected(tmp_path: Path, prefix: str) -> None:
    """The store refuses a prefix that could escape the board or is empty."""
    with pytest.raises(ValueError, match=r"invalid board id_prefix: .* \(must start alphanumeric"):
        BoardStore(tmp_path, id_prefix=prefix)


def test_by_status_and_get_by_ids(tmp_path: Path) -> None:
    """by_status matches case-insensitively; get_by_ids keeps request order and drops missing ids."""
    store = BoardStore(tmp_path)
    store.create("a", status="Todo")
    store.create("b", status="Done")
    store.create("c", status="in progress")
    assert [issue.id for issue in store.by_status(["todo", "In Progress"])] == ["BOARD-1", "BOARD-3"]
    assert [issue.id for issue in store.get_by_ids(["BOARD-2", "BOARD-404", "BOARD-1"])] == ["BOARD-2", "BOARD-1"]


def test_labels_and_no_heading(tmp_path: Path) -> None:
    """Labels are lower-cased; without a heading the title is the id and the body the description."""
    write(tmp_path, "BOARD-7.md", "---\nstatus: Todo\nlabels: [Backend, Lorenz:API]\n---\nNo heading body\n")
    issue = BoardStore(tmp_path).read("BOARD-7")
    assert issue.labels == ("backend", "lorenz:api")
    assert (issue.title, issue.description) == ("BOARD-7", "No heading body")


def test_missing_status_is_an_error_naming_the_issue(tmp_path: Path) -> None:
    """A file without status fails a by-id lookup with the issue id in the message."""
    write(tmp_path, "BOARD-9.md", "---\nlabels: [a]\n---\n# No status\n")
    with pytest.raises(ValueError, match=r"BOARD-9.*status"):
        BoardStore(tmp_path).get_by_ids(["BOARD-9"])


def test_list_skips_malformed_files_and_reports_them(tmp_path: Path) -> None:
    """Malformed files are skipped through on_skip; the listing and by_status keep the rest."""
    write(tmp_path, "BOARD-1.md", "---\nstatus: Todo\n---\n# Good\n")
    write(tmp_path, "BOARD-2.md", "---\nlabels: []\n---\n# No status\n")
    write(tmp_path, "BOARD-3.md", "---\nstatus: [unterminated\n---\n# Bad YAML\n")
    skipped: list[SkippedFile] = []
    store = BoardStore(tmp_path, on_skip=skipped.append)
    assert [issue.id for issue in store.list_issues()] == ["BOARD-1"]
    assert [item.id for item in skipped] == ["BOARD-2", "BOARD-3"]
    assert "status" in skipped[0].error
    assert [issue.id for issue in store.by_status(["Todo"])] == ["BOARD-1"]


def test_get_by_ids_is_strict_about_malformed_files(tmp_path: Path) -> None:
    """A requested malformed file raises (not through on_skip); other ids still work."""
    write(tmp_path, "BOARD-1.md", "---\nstatus: Todo\n---\n# Good\n")
    write(tmp_path, "BOARD-2.md", "---\nlabels: []\n---\n# No status\n")
    skipped: list[SkippedFile] = []
    store = BoardStore(tmp_path, on_skip=skipped.append)
    with pytest.raises(ValueError, match=r"BOARD-2.*status"):
        store.get_by_ids(["BOARD-2"])
    assert skipped == []
    assert [issue.id for issue in store.get_by_ids(["BOARD-1"])] == ["BOARD-1"]


def test_description_with_comments_heading_survives_writes(tmp_path: Path) -> None:
    """A literal `## Comments` in a description survives create, comment and status update."""
    store = BoardStore(tmp_path)
    body = "Intro\n## Comments\nplease comment"
    store.create("Tricky", body=body)
    store.append_comment("BOARD-1", "noted", now=T10)
    issue = store.update_status("BOARD-1", "Done")
    assert issue.description == body
    assert store.read_content("BOARD-1")["comments"] == ["- 2026-05-29T10:00:00.000Z agent: noted"]


@pytest.mark.parametrize("bad_id", INVALID_IDS)
def test_path_traversal_ids_are_rejected_before_any_filesystem_access(
    tmp_path: Path, bad_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bad ids fail for every operation without a single filesystem call."""
    board = tmp_path / "board"
    board.mkdir()
    sentinel = write(tmp_path, "sentinel.txt", "keep")
    store = BoardStore(board)
    calls: list[str] = []

    def forbidden(name: str):  # type: ignore[no-untyped-def]
        def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls.append(name)
            raise AssertionError(f"filesystem access: {name}{args}")

        return spy

    for name in ("open", "stat", "lstat", "scandir", "listdir", "replace", "link", "makedirs", "mkdir", "unlink"):
        monkeypatch.setattr(store_module.os, name, forbidden(name))
    monkeypatch.setattr("builtins.open", forbidden("builtins.open"))
    operations = [
        lambda: store.update_status(bad_id, "Done"),
        lambda: store.append_comment(bad_id, "x"),
        lambda: store.get_by_ids([bad_id]),
        lambda: store.read_content(bad_id),
        lambda: store.read(bad_id),
    ]
    for operation in operations:
        with pytest.raises(ValueError, match=r"invalid board issue id"):
            operation()
    monkeypatch.undo()
    assert calls == []
    assert os.listdir(board) == []
    assert sorted(os.listdir(tmp_path)) == ["board", "sentinel.txt"]
    assert sentinel.read_text() == "keep"
    store.create("Valid")
    assert store.update_status("BOARD-1", "Done").state == "Done"


def test_no_temp_files_after_writes(tmp_path: Path) -> None:
    """After create, update and comment the board holds only the issue file (and the lock file)."""
    store = BoardStore(tmp_path)
    store.create("Clean")
    store.update_status("BOARD-1", "Done")
    store.append_comment("BOARD-1", "bye")
    assert md_files(tmp_path) == ["BOARD-1.md"]


def test_gaps_are_never_reused(tmp_path: Path) -> None:
    """A hand-written BOARD-3 makes the next id BOARD-4, and BOARD-3 is left untouched."""
    original = write(tmp_path, "BOARD-3.md", "---\nstatus: Todo\n---\n\n# Hand\n").read_bytes()
    assert BoardStore(tmp_path).create("Next").id == "BOARD-4"
    assert (tmp_path / "BOARD-3.md").read_bytes() == original


def test_zero_padded_ids_count_numerically(tmp_path: Path) -> None:
    """`BOARD-007` counts as 7 for the next id."""
    write(tmp_path, "BOARD-007.md", "---\nstatus: Todo\n---\n# Padded\n")
    assert BoardStore(tmp_path).create("Next").id == "BOARD-8"


def test_stray_files_are_invisible_and_untouched(tmp_path: Path) -> None:
    """README.md and notes.md are neither listed nor counted nor modified."""
    readme = write(tmp_path, "README.md", "# Board\n").read_bytes()
    notes = write(tmp_path, "notes.md", "notes\n").read_bytes()
    write(tmp_path, "BOARD-1.md", "---\nstatus: Todo\n---\n# One\n")
    store = BoardStore(tmp_path)
    assert store.create("Two").id == "BOARD-2"
    assert [issue.id for issue in store.list_issues()] == ["BOARD-1", "BOARD-2"]
    assert (tmp_path / "README.md").read_bytes() == readme
    assert (tmp_path / "notes.md").read_bytes() == notes


def test_concurrent_creates_in_threads_get_unique_ids(tmp_path: Path) -> None:
    """Twelve threads creating at once get twelve distinct ids and files."""
    store = BoardStore(tmp_path)
    ids: list[str] = []
    barrier = threading.Barrier(12)

    def create(index: int) -> None:
        barrier.wait()
        ids.append(BoardStore(tmp_path).create(f"issue {index}").id if index % 2 else store.create(f"i{index}").id)

    threads = [threading.Thread(target=create, args=(index,)) for index in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(ids, key=lambda i: int(i.split("-")[1])) == [f"BOARD-{n}" for n in range(1, 13)]
    assert len([name for name in md_files(tmp_path) if name.endswith(".md")]) == 12


def test_create_publishes_only_the_issue_file(tmp_path: Path) -> None:
    """A create leaves exactly BOARD-1.md (no temp file) and it parses back."""
    issue = BoardStore(tmp_path).create("Parsed", body="back")
    assert md_files(tmp_path) == ["BOARD-1.md"]
    again = BoardStore(tmp_path).read("BOARD-1")
    assert (
        (again.title, again.state, again.description)
        == ("Parsed", "Todo", "back")
        == (
            issue.title,
            issue.state,
            issue.description,
        )
    )


def _record_syncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    synced: list[str] = []
    real_sync_file, real_sync_dir = files_module.sync_file, files_module.sync_dir

    def spy_file(fd: int, path: str) -> None:
        synced.append(path)
        real_sync_file(fd, path)

    def spy_dir(path: str) -> None:
        synced.append(path)
        real_sync_dir(path)

    monkeypatch.setattr(files_module, "sync_file", spy_file)
    monkeypatch.setattr(files_module, "sync_dir", spy_dir)
    return synced


def test_temp_file_is_synced_before_the_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The temp file's fsync happens strictly before the board directory's, for creates and updates."""
    synced = _record_syncs(monkeypatch)
    store = BoardStore(tmp_path)
    store.create("Durable")
    board = os.fspath(tmp_path)
    assert synced[-1] == board
    assert synced[-2].endswith(".tmp")
    synced.clear()
    store.append_comment("BOARD-1", "synced")
    assert synced[0].endswith(".tmp")
    assert synced[0].startswith(os.path.join(board, "BOARD-1.md."))
    assert synced[1:] == [board]


def test_first_create_syncs_new_parents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Creating into a missing `new-parent/board` fsyncs both new directories and their parent."""
    synced = _record_syncs(monkeypatch)
    BoardStore(tmp_path / "new-parent" / "board").create("First")
    assert os.fspath(tmp_path / "new-parent" / "board") in synced
    assert os.fspath(tmp_path / "new-parent") in synced
    assert os.fspath(tmp_path) in synced


def test_racing_first_creates_sync_every_new_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two stores racing into a missing 3-level path get BOARD-1/BOARD-2 and fsync every level."""
    synced = _record_syncs(monkeypatch)
    board = tmp_path / "p1" / "p2" / "board"
    ids: list[str] = []
    barrier = threading.Barrier(2)

    def create(title: str) -> None:
        barrier.wait()
        ids.append(BoardStore(board).create(title).id)

    threads = [threading.Thread(target=create, args=(title,)) for title in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(ids) == ["BOARD-1", "BOARD-2"]
    for level in (tmp_path, tmp_path / "p1", tmp_path / "p1" / "p2", board):
        assert os.fspath(level) in synced


def test_failed_publish_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link failing with EIO propagates, leaves no issue and no temp file, and the next create is BOARD-1."""
    real_link = files_module.link_file
    failures = [OSError(errno.EIO, "simulated publish failure")]

    def flaky_link(source: str, target: str) -> None:
        if failures:
            raise failures.pop()
        real_link(source, target)

    monkeypatch.setattr(files_module, "link_file", flaky_link)
    store = BoardStore(tmp_path)
    with pytest.raises(OSError, match="simulated publish failure"):
        store.create("Broken")
    assert md_files(tmp_path) == []
    assert store.create("Works").id == "BOARD-1"
    assert md_files(tmp_path) == ["BOARD-1.md"]


def test_create_works_without_hard_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a filesystem refusing hard links (EPERM) creates still publish distinct ids, no temp left."""

    def no_links(source: str, target: str) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(files_module, "link_file", no_links)
    store = BoardStore(tmp_path)
    assert [store.create(title).id for title in ("a", "b")] == ["BOARD-1", "BOARD-2"]
    assert md_files(tmp_path) == ["BOARD-1.md", "BOARD-2.md"]
    assert store.read("BOARD-2").title == "b"


def test_failed_update_removes_its_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write failing after the temp file exists leaves the issue intact and no temp file."""
    store = BoardStore(tmp_path)
    store.create("Intact")
    before = (tmp_path / "BOARD-1.md").read_bytes()

    def failing_sync(fd: int, path: str) -> None:
        raise OSError(errno.EIO, "simulated fsync failure")

    monkeypatch.setattr(files_module, "sync_file", failing_sync)
    with pytest.raises(OSError, match="simulated fsync failure"):
        store.update_status("BOARD-1", "Done")
    assert md_files(tmp_path) == ["BOARD-1.md"]
    assert (tmp_path / "BOARD-1.md").read_bytes() == before


def test_create_sweeps_temp_files_of_dead_writers(tmp_path: Path) -> None:
    """A create removes temp files a killed writer left (its own naming only), never other files."""
    store = BoardStore(tmp_path)
    store.create("One")
    orphans = ["BOARD-1.md.4242.k3j9x.tmp", ".lorenz-create.4242.abc123.tmp"]
    keep = ["notes.tmp", "BOARD-1.md.x.tmp", "README.md"]
    for name in orphans + keep:
        write(tmp_path, name, "x")
    store.create("Two")
    assert md_files(tmp_path) == sorted(["BOARD-1.md", "BOARD-2.md", *keep])


def test_updates_sweep_temp_files_of_dead_writers_at_most_once_per_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A board that only gets updates loses killed writers' temp files, listed at most once per interval."""
    store = BoardStore(tmp_path)
    store.create("One")  # a create sweeps, which starts the interval
    orphans = ["BOARD-1.md.4242.k3j9x.tmp", ".lorenz-create.4242.abc123.tmp"]
    keep = ["notes.tmp", "BOARD-1.md.x.tmp", "README.md"]
    for name in orphans + keep:
        write(tmp_path, name, "x")
    store.update_status("BOARD-1", "Done")  # within the interval: no directory scan
    assert md_files(tmp_path) == sorted(["BOARD-1.md", *orphans, *keep])
    monkeypatch.setattr(publish_module, "TEMP_SWEEP_INTERVAL", 0.0)
    store.append_comment("BOARD-1", "swept")
    assert md_files(tmp_path) == sorted(["BOARD-1.md", *keep])
    assert store.read_content("BOARD-1")["comments"][-1].endswith("agent: swept")


def test_id_allocation_retries_when_an_id_is_taken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """If another writer takes the computed id first, the create recounts and takes the next one."""
    store = BoardStore(tmp_path)
    real_link = files_module.link_file
    intruded = []

    def racing_link(source: str, target: str) -> None:
        if not intruded:
            intruded.append(target)
            write(tmp_path, "BOARD-1.md", "---\nstatus: Todo\n---\n# Intruder\n")
        real_link(source, target)

    monkeypatch.setattr(files_module, "link_file", racing_link)
    assert store.create("Mine").id == "BOARD-2"
    assert store.read("BOARD-1").title == "Intruder"


def test_concurrent_status_and_comments_across_stores(tmp_path: Path) -> None:
    """One status update and eight comments racing over two stores all land in the file."""
    BoardStore(tmp_path).create("Busy")
    stores = [BoardStore(tmp_path), BoardStore(tmp_path)]
    barrier = threading.Barrier(9)

    def comment(index: int) -> None:
        barrier.wait()
        stores[index % 2].append_comment("BOARD-1", f"comment {index}")

    def update() -> None:
        barrier.wait()
        stores[0].update_status("BOARD-1", "In Progress")

    threads = [threading.Thread(target=comment, args=(index,)) for index in range(8)]
    threads.append(threading.Thread(target=update))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    text = (tmp_path / "BOARD-1.md").read_text()
    assert "status: In Progress" in text
    for index in range(8):
        assert f"agent: comment {index}\n" in text


def test_missing_board_lists_nothing(tmp_path: Path) -> None:
    """A board directory that does not exist lists as empty and is not created by reads."""
    store = BoardStore(tmp_path / "absent")
    assert store.list_issues() == []
    assert store.by_status(["Todo"]) == []
    assert not (tmp_path / "absent").exists()


def test_board_path_that_is_a_file_fails_with_the_reason_not_the_path(tmp_path: Path) -> None:
    """A board path naming a regular file fails listing, reads and writes with the OS's reason;
    no message carries the absolute path or `[Errno`."""
    file_path = write(tmp_path, "not-a-dir", "x")
    store = BoardStore(file_path)
    operations = {
        "failed to read board directory: Not a directory": [store.list_issues, lambda: store.by_status(["Todo"])],
        "failed to read board issue BOARD-1: Not a directory": [
            lambda: store.read("BOARD-1"),
            lambda: store.append_comment("BOARD-1", "x"),
        ],
        "failed to create a board issue: ": [lambda: store.create("x")],
    }
    for message, calls in operations.items():
        for operation in calls:
            with pytest.raises(BoardIOError, match=f"^{message}") as info:
                operation()
            assert str(tmp_path) not in str(info.value)
            assert "Errno" not in str(info.value)
    assert file_path.read_text() == "x"


def test_crlf_files_are_normalised(tmp_path: Path) -> None:
    """A CRLF file reads like its LF twin."""
    (tmp_path / "BOARD-1.md").write_bytes(b"---\r\nstatus: In Progress\r\n---\r\n\r\n# Title\r\n\r\nBody line\r\n")
    issue = BoardStore(tmp_path).read("BOARD-1")
    assert (issue.state, issue.state_type, issue.description) == ("In Progress", "started", "Body line")


def test_updates_missing_issue_fail_without_creating_anything(tmp_path: Path) -> None:
    """Commenting on a missing issue of a missing board fails and creates no directory."""
    store = BoardStore(tmp_path / "absent")
    with pytest.raises(FileNotFoundError):
        store.append_comment("BOARD-1", "x")
    assert not (tmp_path / "absent").exists()


def test_cache_sees_in_place_edits(tmp_path: Path) -> None:
    """A hand edit in place (same inode) with a new size is seen by the next read."""
    path = write(tmp_path, "BOARD-1.md", "---\nstatus: Todo\n---\n# One\n")
    store = BoardStore(tmp_path)
    assert store.read("BOARD-1").state == "Todo"
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write("---\nstatus: Done\n---\n# One, edited\n")
    issue = store.read("BOARD-1")
    assert (issue.state, issue.title) == ("Done", "One, edited")


def test_timestamps_are_iso_with_milliseconds(tmp_path: Path) -> None:
    """createdAt/updatedAt come from the file's times as `YYYY-MM-DDTHH:MM:SS.mmmZ`."""
    issue = BoardStore(tmp_path).create("Timed")
    pattern = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"
    assert issue.created_at is not None
    assert issue.updated_at is not None
    assert re.fullmatch(pattern, issue.created_at)
    assert re.fullmatch(pattern, issue.updated_at)
