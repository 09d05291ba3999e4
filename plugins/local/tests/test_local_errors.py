"""Error texts (issue 12): what an agent receives names issues by id, never the board's absolute
path or ``[Errno N]`` text.

Real failures where the OS can produce them as root (a board path under a regular file, a name
too long, a symlink loop, a file-size limit in a child process); injected ``OSError``s carrying
the absolute path where it cannot (EIO, EACCES: root bypasses file modes).
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from lorenz import Settings, TrackerSettings
from lorenz_local import files as files_module
from lorenz_local.cache import CACHE, SNAPSHOTS
from lorenz_local.client import LocalTrackerClient
from lorenz_local.store import BoardStore
from lorenz_local.tools import run_local_tool

ALL_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("local_query", {}),
    ("local_query", {"select": ["id", "comments"]}),
    ("local_read_issue", {"issueId": "BOARD-1"}),
    ("local_update_status", {"issueId": "BOARD-1", "status": "Done"}),
    ("local_comment", {"issueId": "BOARD-1", "body": "hello"}),
    ("local_create_issue", {"title": "New", "body": "text"}),
]


def settings_for(board: Path) -> Settings:
    return Settings(tracker=TrackerSettings(kind="local", options={"path": str(board)}))


def texts(result: Any) -> list[str]:
    """Every message an agent gets from a result: the failure, and each skipped file's error."""
    found = [result.error] if result.error else []
    if result.success and isinstance(result.result, dict):
        found += [item["error"] for item in result.result.get("skipped", [])]
    return found


def assert_clean(messages: list[str], *paths: Path) -> None:
    for message in messages:
        assert "Errno" not in message, message
        for path in paths:
            assert str(path) not in message, message


def run_all(board: Path) -> dict[str, list[str]]:
    """Each tool call's agent-visible messages."""
    return {
        f"{name} {json.dumps(args)}": texts(run_local_tool(name, args, settings_for(board))) for name, args in ALL_CALLS
    }


def poll_errors(board: Path) -> list[str]:
    """What the tracker raises (or reports through on_skip) for the same board."""
    settings = Settings(tracker=TrackerSettings(kind="local", options={"path": str(board)}, active_states=("Todo",)))
    client = LocalTrackerClient(settings, cwd=board.parent, env={})
    messages: list[str] = []
    client.store._on_skip = lambda skipped: messages.append(skipped.error)
    calls: list[Callable[[], Any]] = [
        lambda: anyio.run(client.fetch_candidate_issues),
        lambda: anyio.run(client.fetch_issues_by_ids, ["BOARD-1"]),
        lambda: anyio.run(client.fetch_issues_by_states, ["Todo"]),
    ]
    for call in calls:
        try:
            call()
        except Exception as exc:
            messages.append(str(exc))
    return messages


def test_missing_issue_is_named_by_id(tmp_path: Path) -> None:
    """A missing issue, on an existing or an absent board, is `local board issue not found: <id>`."""
    BoardStore(tmp_path / "board").create("One")
    for board, issue_id in ((tmp_path / "board", "BOARD-999"), (tmp_path / "absent", "BOARD-1")):
        for name, args in (
            ("local_read_issue", {"issueId": issue_id}),
            ("local_update_status", {"issueId": issue_id, "status": "Done"}),
            ("local_comment", {"issueId": issue_id, "body": "x"}),
        ):
            result = run_local_tool(name, args, settings_for(board))
            assert (result.success, result.error) == (False, f"local board issue not found: {issue_id}")
    assert not (tmp_path / "absent").exists()
    with pytest.raises(FileNotFoundError, match="^local board issue not found: BOARD-999$"):
        BoardStore(tmp_path / "board").read("BOARD-999")


def _board_under_a_file(tmp_path: Path) -> Path:
    (tmp_path / "file").write_text("x")
    return tmp_path / "file" / "board"


def _name_too_long(tmp_path: Path) -> Path:
    return tmp_path / ("b" * 300)


def _symlink_loop(tmp_path: Path) -> Path:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    return tmp_path / "loop"


@pytest.mark.parametrize(
    ("make_board", "reason"),
    [
        (_board_under_a_file, "Not a directory"),
        (_name_too_long, "File name too long"),
        (_symlink_loop, "Too many levels of symbolic links"),
    ],
)
def test_real_os_failures_reach_the_agent_without_paths(
    tmp_path: Path, make_board: Callable[[Path], Path], reason: str
) -> None:
    """Every tool fails on a broken board path with the OS's reason and no path; so does the poll."""
    board = make_board(tmp_path)
    results = run_all(board)
    assert all(results.values()), results
    for call, messages in results.items():
        assert_clean(messages, board, tmp_path)
        if call.startswith("local_query"):
            assert messages == [f"failed to read board directory: {reason}"]
    polled = poll_errors(board)
    assert polled
    assert_clean(polled, board, tmp_path)


def test_invalid_files_are_reported_without_paths(tmp_path: Path) -> None:
    """Bad UTF-8, bad YAML, no status, a FIFO, a directory: every message names the id only."""
    board = tmp_path / "board"
    board.mkdir()
    (board / "BOARD-1.md").write_bytes(b"---\nstatus: Todo\n---\n# caf\xe9\n")
    (board / "BOARD-2.md").write_text("---\nstatus: [broken\n---\n")
    (board / "BOARD-3.md").write_text("# no front matter\n")
    os.mkfifo(board / "BOARD-4.md")
    (board / "BOARD-5.md").mkdir()
    expected = {
        "BOARD-1": "board issue BOARD-1 is not valid UTF-8 (byte 0xe9 at offset 26)",
        "BOARD-2": "board issue BOARD-2 has invalid front matter at line 2, column 9: expected ',' or ']', but got "
        "'<stream end>' while parsing a flow sequence that opens here",
        "BOARD-3": 'board issue BOARD-3 has no front matter: a board file starts with a "---" line, '
        'then "status: ...", then another "---" line',
        "BOARD-4": "board issue BOARD-4 is a FIFO, not a regular file",
        "BOARD-5": "board issue BOARD-5 is a directory, not a regular file",
    }
    query = run_local_tool("local_query", {}, settings_for(board))
    skipped = {item["id"]: item["error"] for item in query.result["skipped"]}
    assert sorted(skipped) == ["BOARD-1", "BOARD-2", "BOARD-3", "BOARD-4", "BOARD-5"]
    assert {key: skipped[key] for key in expected} == expected
    for issue_id in skipped:
        for name, args in (
            ("local_read_issue", {"issueId": issue_id}),
            ("local_update_status", {"issueId": issue_id, "status": "Done"}),
            ("local_comment", {"issueId": issue_id, "body": "x"}),
        ):
            result = run_local_tool(name, args, settings_for(board))
            assert not result.success
            assert result.error == skipped[issue_id]
            assert_clean(texts(result), board, tmp_path)
    assert (board / "BOARD-1.md").read_bytes() == b"---\nstatus: Todo\n---\n# caf\xe9\n"


def test_injected_read_and_write_errors_drop_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EACCES on read and EIO on fsync, raised with the absolute path as the OS does: the agent
    sees `failed to <read|write> board issue BOARD-1: <reason>`, and no temp file is left."""
    board = tmp_path / "board"
    BoardStore(board).create("One")

    def denied(target: str) -> Any:
        raise OSError(errno.EACCES, "Permission denied", target)

    def broken_disk(fd: int, target: str) -> None:
        raise OSError(errno.EIO, "Input/output error", target)

    monkeypatch.setattr(files_module, "read_regular", denied)
    CACHE.clear()  # the create above cached the file
    SNAPSHOTS.clear()
    results = run_all(board)
    read_error = "failed to read board issue BOARD-1: Permission denied"
    assert results["local_query {}"] == [read_error]
    assert results['local_read_issue {"issueId": "BOARD-1"}'] == [read_error]
    assert results['local_comment {"issueId": "BOARD-1", "body": "hello"}'] == [read_error]
    for messages in results.values():
        assert_clean(messages, board, tmp_path)
    monkeypatch.undo()
    monkeypatch.setattr(files_module, "sync_file", broken_disk)
    results = run_all(board)
    assert results['local_update_status {"issueId": "BOARD-1", "status": "Done"}'] == [
        "failed to write board issue BOARD-1: Input/output error"
    ]
    assert results['local_create_issue {"title": "New", "body": "text"}'] == [
        "failed to create a board issue: Input/output error"
    ]
    for messages in results.values():
        assert_clean(messages, board, tmp_path)
    # BOARD-2 is the create of the first round (published, then unreadable); none since.
    assert sorted(os.listdir(board)) == [".lorenz.lock", "BOARD-1.md", "BOARD-2.md"]


_FILE_SIZE_LIMIT = textwrap.dedent(
    """
    import json, resource, sys
    from lorenz import Settings, TrackerSettings
    from lorenz_local.tools import run_local_tool
    settings = Settings(tracker=TrackerSettings(kind="local", options={"path": sys.argv[1]}))
    # Python ignores SIGXFSZ: a write past the limit fails with EFBIG, like a full disk.
    resource.setrlimit(resource.RLIMIT_FSIZE, (300, resource.RLIM_INFINITY))
    calls = [
        ("local_create_issue", {"title": "big", "body": "x" * 1000}),
        ("local_comment", {"issueId": "BOARD-1", "body": "x" * 1000}),
        ("local_update_status", {"issueId": "BOARD-1", "status": "y" * 1000}),
    ]
    print(json.dumps([run_local_tool(name, args, settings).to_dict() for name, args in calls]))
    """
)


def test_a_real_write_failure_is_worded_and_leaves_no_trace(tmp_path: Path) -> None:
    """A real EFBIG (file-size limit in a child process): the writes fail without a path, the
    issue file is unchanged and no temp file is left."""
    board = tmp_path / "board"
    BoardStore(board).create("small")
    before = (board / "BOARD-1.md").read_bytes()
    child = subprocess.run(
        [sys.executable, "-c", _FILE_SIZE_LIMIT, str(board)], capture_output=True, text=True, timeout=60, check=True
    )
    errors = [result["error"] for result in json.loads(child.stdout)]
    assert errors == [
        "failed to create a board issue: File too large",
        "failed to write board issue BOARD-1: File too large",
        "failed to write board issue BOARD-1: File too large",
    ]
    assert (board / "BOARD-1.md").read_bytes() == before
    assert sorted(os.listdir(board)) == [".lorenz.lock", "BOARD-1.md"]
