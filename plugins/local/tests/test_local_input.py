"""Unstorable input (issue 12): one request must not poison the board.

Writes refuse a lone surrogate or NUL in any field, naming it, before anything is written; a
board file that already holds such text (written by hand) reads without error, or is reported
as invalid, and the rest of the board answers.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lorenz import Settings, TrackerSettings
from lorenz_local.board import check_storable
from lorenz_local.client import LocalTrackerClient
from lorenz_local.store import BoardStore
from lorenz_local.tools import run_local_tool

UNSTORABLE = {"\ud800": "a lone surrogate (U+D800)", "x\udfffy": "a lone surrogate (U+DFFF)", "a\x00b": "NUL (U+0000)"}
WRITES: list[tuple[str, dict[str, str], str]] = [
    ("local_update_status", {"issueId": "BOARD-1"}, "status"),
    ("local_comment", {"issueId": "BOARD-1"}, "body"),
    ("local_create_issue", {}, "title"),
    ("local_create_issue", {"title": "ok"}, "body"),
    ("local_create_issue", {"title": "ok"}, "status"),
]


def settings_for(board: Path) -> Settings:
    return Settings(tracker=TrackerSettings(kind="local", options={"path": str(board)}, active_states=("Todo",)))


def board_state(board: Path) -> dict[str, bytes]:
    return {name: (board / name).read_bytes() for name in sorted(os.listdir(board))}


def strict_json(value: Any) -> bytes:
    """What a transport sends: strict UTF-8 JSON (a lone surrogate would raise here)."""
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize(("name", "base", "field"), WRITES)
@pytest.mark.parametrize("value", list(UNSTORABLE))
def test_writes_refuse_unstorable_values_naming_the_field(
    tmp_path: Path, name: str, base: dict[str, str], field: str, value: str
) -> None:
    """Each write tool, each text field: an isError naming the field, and not a byte written."""
    board = tmp_path / "board"
    BoardStore(board).create("Existing", body="keep me")
    before = board_state(board)
    result = run_local_tool(name, {**base, field: value}, settings_for(board))
    assert not result.success
    assert result.error == f"'{field}' contains {UNSTORABLE[value]}, which a board file cannot store"
    strict_json(result.to_dict())
    assert board_state(board) == before


@pytest.mark.parametrize("method", ["update_status", "append_comment", "create"])
def test_the_store_refuses_them_too(tmp_path: Path, method: str) -> None:
    """In-process callers (lorenz.testing, `lorenz call`, the seeder) get the same refusal."""
    store = BoardStore(tmp_path)
    store.create("Existing")
    before = board_state(tmp_path)
    calls = {
        "update_status": lambda: store.update_status("BOARD-1", "Do\ud800ne"),
        "append_comment": lambda: store.append_comment("BOARD-1", "\x00"),
        "create": lambda: store.create("T", body="B", status="\udc00"),
    }
    with pytest.raises(ValueError, match=r"^'(status|body)' contains "):
        calls[method]()
    assert board_state(tmp_path) == before


def test_an_unstorable_issue_id_is_refused_with_an_encodable_message(tmp_path: Path) -> None:
    """A lone surrogate or NUL in issueId is an invalid id whose message survives strict JSON."""
    for issue_id in ("BOARD-\ud800", "BOARD-1\x00"):
        result = run_local_tool("local_read_issue", {"issueId": issue_id}, settings_for(tmp_path))
        assert not result.success
        assert result.error is not None
        assert result.error.startswith("invalid board issue id: ")
        strict_json(result.to_dict())
    assert os.listdir(tmp_path) == []


@given(st.text(max_size=12))
def test_check_storable_refuses_exactly_nul_and_surrogates(value: str) -> None:
    """Any other character is storable (the round-trip fuzz in test_local_board proves it)."""
    if any(char == "\x00" or 0xD800 <= ord(char) <= 0xDFFF for char in value):
        with pytest.raises(ValueError, match="^'title' contains "):
            check_storable("title", value)
    else:
        check_storable("title", value)


HAND_WRITTEN = {
    # a `"\uD800"` escape, as an old request stored it
    "BOARD-2.md": b'---\nstatus: "\\uD800"\nlabels: ["\\udc00x", ok]\n---\n\n# Poisoned\n\nbody\n',
    # invalid UTF-8 bytes
    "BOARD-3.md": b"---\nstatus: Todo\n---\n\n# Bad \xff\xfe bytes\n",
    # NUL in the Markdown body: readable text
    "BOARD-4.md": b"---\nstatus: Todo\n---\n\n# Nul\x00title\n\nbody\x00here\n",
    # NUL inside the front matter: YAML refuses it
    "BOARD-5.md": b"---\nstatus: To\x00do\n---\n\n# Nul status\n",
}


@pytest.fixture
def hand_written(tmp_path: Path) -> Path:
    board = tmp_path / "board"
    BoardStore(board).create("Clean")
    for name, data in HAND_WRITTEN.items():
        (board / name).write_bytes(data)
    return board


def test_a_stored_surrogate_reads_as_replacement_characters(hand_written: Path) -> None:
    """`status: "\\uD800"` reads as U+FFFD: local_read_issue, local_query and a comment all work."""
    settings = settings_for(hand_written)
    read = run_local_tool("local_read_issue", {"issueId": "BOARD-2"}, settings)
    assert read.success, read.error
    assert read.result["issue"]["status"] == "\ufffd"
    strict_json(read.to_dict())
    query = run_local_tool("local_query", {"select": ["id", "state", "labels", "comments"]}, settings)
    rows = {row["id"]: row for row in query.result["rows"]}
    assert (rows["BOARD-2"]["state"], rows["BOARD-2"]["labels"]) == ("\ufffd", ["\ufffdx", "ok"])
    strict_json(query.to_dict())
    commented = run_local_tool("local_comment", {"issueId": "BOARD-2", "body": "fixed"}, settings)
    assert commented.success, commented.error
    text = (hand_written / "BOARD-2.md").read_text(encoding="utf-8")  # now plain, valid UTF-8
    assert text.startswith("---\nstatus: \ufffd\nlabels:\n  - \ufffdx\n  - ok\n---\n")
    moved = run_local_tool("local_update_status", {"issueId": "BOARD-2", "status": "Todo"}, settings)
    assert moved.result["issue"]["state"] == "Todo"


def test_bad_bytes_and_nuls_never_break_the_board(hand_written: Path) -> None:
    """Invalid UTF-8 and a NUL in YAML are reported as invalid files; a NUL in the body reads;
    every result is strict JSON and the clean issue still answers."""
    settings = settings_for(hand_written)
    query = run_local_tool("local_query", {"select": ["id", "title", "description"]}, settings)
    assert query.success, query.error
    strict_json(query.to_dict())
    rows = {row["id"]: row for row in query.result["rows"]}
    assert sorted(rows) == ["BOARD-1", "BOARD-2", "BOARD-4"]
    assert (rows["BOARD-4"]["title"], rows["BOARD-4"]["description"]) == ("Nul\x00title", "body\x00here")
    skipped = {item["id"]: item["error"] for item in query.result["skipped"]}
    assert skipped["BOARD-3"] == "board issue BOARD-3 is not valid UTF-8 (byte 0xff at offset 28)"
    assert "unacceptable character #x0000" in skipped["BOARD-5"]
    for issue_id in ("BOARD-3", "BOARD-5"):
        before = (hand_written / f"{issue_id}.md").read_bytes()
        for name, args in (
            ("local_read_issue", {"issueId": issue_id}),
            ("local_comment", {"issueId": issue_id, "body": "x"}),
            ("local_update_status", {"issueId": issue_id, "status": "Done"}),
        ):
            result = run_local_tool(name, args, settings)
            assert (result.success, result.error) == (False, skipped[issue_id])
            strict_json(result.to_dict())
        assert (hand_written / f"{issue_id}.md").read_bytes() == before  # nothing lost
    assert run_local_tool("local_read_issue", {"issueId": "BOARD-1"}, settings).result["issue"]["title"] == "Clean"


def test_the_poll_survives_every_hand_written_file(hand_written: Path) -> None:
    """The tracker's candidates come back (strict-JSON records), the invalid files skipped."""
    client = LocalTrackerClient(settings_for(hand_written), cwd=hand_written.parent, env={})
    candidates = anyio.run(client.fetch_candidate_issues)
    assert [issue.id for issue in candidates] == ["BOARD-1", "BOARD-4"]
    strict_json([issue.to_record() for issue in candidates])
    fetched = anyio.run(client.fetch_issues_by_ids, ["BOARD-2"])
    assert [issue.state for issue in fetched] == ["\ufffd"]


_ESCAPES = st.lists(
    st.sampled_from(["\\uD800", "\\udfff", "\\0", "\\x07", "\\u2028", "\\ufeff", "\\N", "\\L", "a", " "])
)
_FILE_BYTES = st.binary(max_size=120) | st.builds(
    lambda status, label, body: (
        f'---\nstatus: "{"".join(status)}"\nlabels: ["{"".join(label)}"]\n---\n\n# T\n\n'.encode() + body
    ),
    _ESCAPES,
    _ESCAPES,
    st.binary(max_size=40),
)


@given(_FILE_BYTES)
def test_no_file_content_breaks_a_read(data: bytes) -> None:
    """Whatever bytes a hand-written issue file holds, listing never raises and yields strict
    JSON; reading it returns strict JSON or raises ValueError (an invalid file)."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "BOARD-1.md").write_bytes(data)
        store = BoardStore(tmp)
        records, skipped = store.records()
        assert len(records) + len(skipped) == 1
        strict_json([records, [item.to_dict() for item in skipped]])
        try:
            content = store.read_content("BOARD-1")
        except ValueError:
            assert skipped
        else:
            strict_json(content)
            strict_json(store.read("BOARD-1").to_record())
