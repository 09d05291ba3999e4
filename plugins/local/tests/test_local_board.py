"""The board file format: parsing, rendering and byte-for-byte round trips."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorenz import load_yaml, normalize_issue
from lorenz_local import board
from lorenz_local.board import (
    BoardDocument,
    BoardFormatError,
    comment_line,
    iso_timestamp,
    parse_document,
    render_document,
)
from lorenz_local.store import BoardStore


def test_render_matches_the_documented_layout() -> None:
    """Front matter (status, block-style labels), title, description and the comments block."""
    document = BoardDocument(
        status="In Progress",
        labels=("Backend", "Lorenz:API"),
        title="Fix it",
        description="  Steps\n\n1. go  ",
        comments="- 2026-05-29T10:00:00.000Z agent: hi",
    )
    assert render_document(document) == (
        "---\nstatus: In Progress\nlabels:\n  - Backend\n  - Lorenz:API\n---\n\n# Fix it\n\nSteps\n\n1. go\n\n"
        "<!-- lorenz:comments -->\n## Comments\n- 2026-05-29T10:00:00.000Z agent: hi\n"
    )


def test_render_omits_empty_sections() -> None:
    """No labels key, no description block and no comments block when they are empty."""
    assert render_document(BoardDocument(status="Todo", title="Bare")) == "---\nstatus: Todo\n---\n\n# Bare\n"


@pytest.mark.parametrize("status", ["true", "null", "123", "a: b", "#x", "2026-01-01", "yes", "- x", "x\ny", "é"])
def test_awkward_statuses_round_trip(status: str) -> None:
    """Statuses YAML would misread when plain are quoted so they read back as the same string."""
    text = render_document(BoardDocument(status=status, title="T"))
    assert parse_document(text, "BOARD-1").status == status.strip()
    assert render_document(parse_document(text, "BOARD-1")) == text


def test_yaml_is_the_1_2_core_schema() -> None:
    """`yes`/`on` and dates stay strings, as in YAML 1.2 core (not 1.1)."""
    for raw in ("yes", "on", "2026-01-01", "1_000x"):
        text = f"---\nstatus: Todo\nlabels: [{raw}]\n---\n# T\n"
        assert parse_document(text, "BOARD-1").labels == (raw,)
    with pytest.raises(ValueError, match="status"):
        parse_document("---\nstatus: true\n---\n", "BOARD-1")
    assert parse_document("---\nstatus: 2026-01-01\n---\n", "BOARD-1").status == "2026-01-01"


def test_no_front_matter_is_named_as_such() -> None:
    """A file without front matter is malformed, and the message says what is missing."""
    with pytest.raises(
        BoardFormatError, match=r'^board issue BOARD-3 has no front matter: a board file starts with a "---" line'
    ):
        parse_document("# Just markdown\n", "BOARD-3")


def test_unterminated_front_matter_is_named_as_such() -> None:
    """`---` with no closing line: the front matter is not closed (not a file with no status)."""
    with pytest.raises(
        BoardFormatError, match=r"^board issue BOARD-1: the front matter opened on line 1 is not closed"
    ):
        parse_document("---\nstatus: Todo\n# T\n", "BOARD-1")


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("---\nstatus: Todo\nlabels: a: b\n---\n# T\n", "at line 3, column 10: mapping values are not allowed here"),
        (
            "---\nstatus: Todo\nlabels: [a, b\nother: 1\n---\n",
            "at line 4, column 6: expected ',' or ']', but got ':' in the flow sequence that opens at line 3, column 9",
        ),
    ],
)
def test_a_yaml_error_names_the_files_own_line(text: str, where: str) -> None:
    """The lines a YAML error names are the file's, counting the opening `---` line."""
    with pytest.raises(BoardFormatError) as raised:
        parse_document(text, "BOARD-7")
    assert str(raised.value) == f"board issue BOARD-7 has invalid front matter {where}"


def test_non_string_labels_are_dropped() -> None:
    """Only string label items are kept; a non-list labels value means no labels."""
    assert parse_document("---\nstatus: Todo\nlabels: [a, 1, {x: y}, b]\n---\n", "B-1").labels == ("a", "b")
    assert parse_document("---\nstatus: Todo\nlabels: a\n---\n", "B-1").labels == ()


def test_lines_before_the_heading_are_dropped() -> None:
    """The title is the first `# ` line; the description is what follows it."""
    document = parse_document("---\nstatus: Todo\n---\npreamble\n# Title  \n\nbody\n# Not a title\n", "B-1")
    assert (document.title, document.description) == ("Title", "body\n# Not a title")


def test_comments_are_split_on_the_hidden_marker_only() -> None:
    """The comments heading alone does not start the comments block."""
    text = "---\nstatus: Todo\n---\n# T\n\n## Comments\nnot comments\n<!-- lorenz:comments -->\n## Comments\n- c\n"
    document = parse_document(text, "B-1")
    assert (document.description, document.comments) == ("## Comments\nnot comments", "- c")


def test_crlf_is_normalised_on_read() -> None:
    """CRLF line endings read like LF."""
    crlf = parse_document("---\r\nstatus: Todo\r\n---\r\n\r\n# T\r\n\r\nBody\r\n", "B-1")
    assert crlf == parse_document("---\nstatus: Todo\n---\n\n# T\n\nBody\n", "B-1")


def test_timestamps_are_utc_with_milliseconds() -> None:
    """Comment timestamps are UTC `...mmmZ` whatever the input zone."""
    moment = datetime(2026, 5, 29, 12, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert iso_timestamp(moment) == "2026-05-29T10:00:00.123Z"
    assert comment_line("hi", datetime(2026, 1, 1, tzinfo=UTC)) == "- 2026-01-01T00:00:00.000Z agent: hi"


# -- properties ------------------------------------------------------------------------------------

_line_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\r\n\u2028\u2029\x85"),
    max_size=30,
)
_status = _line_text.filter(lambda s: bool(s.strip()))
_multiline = st.lists(_line_text, max_size=4).map("\n".join)


@st.composite
def documents(draw: st.DrawFn) -> BoardDocument:
    comments = draw(st.lists(_line_text, max_size=3))
    return BoardDocument(
        status=draw(_status).strip(),
        labels=tuple(draw(st.lists(_line_text, max_size=3))),
        title=draw(_line_text).strip(),
        description=draw(_multiline.filter(lambda s: board.COMMENTS_MARKER not in s)).strip(),
        # The board keeps the comment block stripped (see BoardDocument.with_comment).
        comments="\n".join(f"- 2026-01-01T00:00:00.000Z agent: {c}" for c in comments).strip(),
    )


@settings(max_examples=300, deadline=None)
@given(documents())
def test_files_the_board_wrote_round_trip_byte_for_byte(document: BoardDocument) -> None:
    """render(parse(render(doc))) is the same text, and parse gives back the same document."""
    text = render_document(document)
    parsed = parse_document(text, "BOARD-1")
    assert parsed == document
    assert render_document(parsed) == text


_simple_word = st.text(alphabet="aAzZ09 _-:#'\"yesnoultrf.", min_size=0, max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.lists(_simple_word, max_size=3), _simple_word, st.booleans())
def test_fast_front_matter_reader_agrees_with_ruamel(labels: list[str], status: str, with_labels: bool) -> None:
    """The regex fast path reads exactly what the YAML parser reads, or defers to it."""
    text = f"status: {status}"
    if with_labels:
        text += "\nlabels:\n" + "".join(f"  - {label}\n" for label in labels)
    try:
        expected = load_yaml(text)
    except Exception:
        expected = "error"
    fast = board._FAST_FRONT_MATTER.fullmatch(text)
    if fast is not None:
        assert board._load_front_matter(text) == expected


# Every character a board can store: all but lone surrogates and NUL (refused on write, see below).
_any_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=25)


@settings(max_examples=60, deadline=None)
@given(
    _any_text.filter(lambda s: bool(s.strip())),
    _any_text.filter(lambda s: board.COMMENTS_MARKER not in s),
    _any_text.filter(lambda s: bool(s.strip())),
    st.lists(_any_text, max_size=2),
)
def test_store_writes_always_round_trip(title: str, body: str, status: str, comments: list[str]) -> None:
    """Whatever text a tool passes (CR, NEL, quotes, YAML syntax), the stored file re-renders to itself."""
    with tempfile.TemporaryDirectory() as tmp:
        store = BoardStore(tmp)
        store.create(title, body=body, status=status)
        for comment in comments:
            store.append_comment("BOARD-1", comment)
        text = (Path(tmp) / "BOARD-1.md").read_bytes().decode("utf-8")
        document = parse_document(text, "BOARD-1")
        assert render_document(document) == text
        assert document.status == status.strip()
        assert len([line for line in document.comment_lines() if " agent:" in line]) >= len(comments)


def test_a_comments_marker_in_created_text_cannot_forge_comments(tmp_path: Path) -> None:
    """A marker in a created title or body is written neutralised: no forged comments, and the file round-trips."""
    store = BoardStore(tmp_path)
    forged = "desc\n<!-- lorenz:comments -->\n- 2020-01-01T00:00:00.000Z agent: forged"
    store.create("T <!-- lorenz:comments --> x", body=forged)
    store.append_comment("BOARD-1", "real <!-- lorenz:comments --> one")
    text = (tmp_path / "BOARD-1.md").read_text(encoding="utf-8")
    assert text.count(board.COMMENTS_MARKER) == 2  # the real one, and the literal inside the comment body
    content = store.read_content("BOARD-1")
    assert content["title"] == "T &lt;!-- lorenz:comments --> x"
    assert content["description"] == forged.replace("<!--", "&lt;!--")
    assert [line.split(" agent: ", 1)[1] for line in content["comments"]] == ["real <!-- lorenz:comments --> one"]
    assert render_document(parse_document(text, "BOARD-1")) == text


def _stat(mtime: float, ctime: float) -> Any:
    """A stand-in ``os.stat_result`` with the times :func:`board.issue_record` reads."""
    return SimpleNamespace(st_mtime=mtime, st_ctime=ctime)


_times = st.floats(min_value=0, max_value=4e9, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(documents(), _times, _times)
def test_the_query_row_is_the_normalised_issue_s_row(document: BoardDocument, mtime: float, ctime: float) -> None:
    """A query reads rows built straight from the record; the issue, built later, agrees with them."""
    record = board.issue_record("BOARD-7", document, _stat(mtime, ctime))
    assert board.query_row(record) == normalize_issue(record).to_query_row(with_url=False)


@settings(max_examples=300, deadline=None)
@given(st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7, minutes=-30)), None])))
def test_iso_timestamps_are_strftime_s(moment: datetime) -> None:
    """The isoformat fast path writes what the strftime form always wrote (years before 1000 use it)."""
    utc = (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).astimezone(UTC)
    assert iso_timestamp(moment) == utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def _title_and_description_by_lines(main: str) -> tuple[str, str]:
    """The reference: the first line starting ``# ``, and the lines after it."""
    lines = main.split("\n")
    for index, line in enumerate(lines):
        if line.startswith("# "):
            return line[2:].strip(), "\n".join(lines[index + 1 :]).strip()
    return "", main.strip()


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(["# ", "#", "\n", "\n# ", " ", "a", "# t", "\r", "\n\n"]), max_size=12).map("".join))
def test_title_and_description_split_as_by_lines(main: str) -> None:
    assert board._title_and_description(main) == _title_and_description_by_lines(main)
