"""The board file format: one issue per Markdown file with YAML front matter.

The front matter holds ``status`` and ``labels``; the body is ``# Title``, the description, and
the comments under a ``<!-- lorenz:comments -->`` marker (the package README shows a file).
:func:`render_document` is the only writer, and ``render_document(parse_document(text)) == text``
for every text it produced, so a read-modify-write changes only what it means to change.
"""

from __future__ import annotations

import io
import os
import re
from datetime import UTC, datetime
from typing import Any

from attrs import evolve, frozen
from ruamel.yaml import YAML

from lorenz import YamlError, default_state_type, load_yaml

__all__ = [
    "COMMENTS_MARKER",
    "BoardDocument",
    "BoardFormatError",
    "check_storable",
    "comment_line",
    "decode_text",
    "document_content",
    "iso_timestamp",
    "issue_record",
    "parse_document",
    "query_row",
    "render_document",
]

COMMENTS_MARKER = "<!-- lorenz:comments -->"
_NEUTRAL_MARKER = "&lt;!-- lorenz:comments -->"
_COMMENTS_HEADING = "## Comments"
# NUL makes a Markdown file binary; a lone surrogate has no UTF-8 encoding (in front matter ruamel
# would write it as a `"\uD800"` escape that reads back as the same unencodable string).
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class BoardFormatError(ValueError):
    """A board file that cannot be read as an issue (not UTF-8, no front matter, bad YAML, no status)."""


def check_storable(field: str, value: str) -> None:
    """Raise ``ValueError`` naming ``field`` if ``value`` holds a character a board file cannot
    store: NUL or a lone surrogate. Every other character round-trips (YAML escapes in front
    matter, raw in the Markdown body)."""
    bad = _UNSTORABLE.search(value)
    if bad is not None:
        code = ord(bad.group())
        what = "NUL (U+0000)" if code == 0 else f"a lone surrogate (U+{code:04X})"
        msg = f"'{field}' contains {what}, which a board file cannot store"
        raise ValueError(msg)


def decode_text(data: bytes, issue_id: str) -> str:
    """A board file's bytes as text; invalid UTF-8 is a :class:`BoardFormatError` naming the offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"board issue {issue_id} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        raise BoardFormatError(msg) from None


@frozen(kw_only=True)
class BoardDocument:
    """The parsed content of one issue file. ``comments`` is the raw comment block (lines)."""

    status: str
    labels: tuple[str, ...] = ()
    title: str = ""
    description: str = ""
    comments: str = ""

    def with_status(self, status: str) -> BoardDocument:
        return evolve(self, status=status)

    def with_comment(self, line: str) -> BoardDocument:
        existing = self.comments.strip()
        return evolve(self, comments=f"{existing}\n{line}" if existing else line)

    def comment_lines(self) -> list[str]:
        block = self.comments.strip()
        return block.split("\n") if block else []


# -- YAML -----------------------------------------------------------------------------------------


def _dumper(allow_unicode: bool = True) -> YAML:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.indent(mapping=2, sequence=4, offset=2)  # `labels:\n  - a`
    yaml.width = 1 << 30  # never fold a long status onto a second line
    yaml.allow_unicode = allow_unicode
    return yaml


# A value the 1.2 core schema reads as this very string when written plain: starts with a letter,
# then only letters, digits, spaces, "_" and "-", and is no null/bool word. Front matter made only of
# such values in the board's own layout is read without the YAML parser (the common case, and
# much faster); anything else goes through ruamel.
_SIMPLE = r"(?!(?:null|Null|NULL|true|True|TRUE|false|False|FALSE)(?![A-Za-z0-9 _-]))[A-Za-z][A-Za-z0-9 _-]*(?<! )"
_FAST_FRONT_MATTER = re.compile(rf"status: ({_SIMPLE})\n?(?:labels:\n((?:  - {_SIMPLE}\n?)+))?", re.ASCII)
_FAST_LABEL = re.compile(rf"  - ({_SIMPLE})", re.ASCII)


def _load_front_matter(text: str) -> Any:
    fast = _FAST_FRONT_MATTER.fullmatch(text)
    if fast is not None:
        labels = fast.group(2)
        data: dict[str, Any] = {"status": fast.group(1)}
        if labels is not None:
            data["labels"] = _FAST_LABEL.findall(labels)
        return data
    if not text.strip():
        return {}
    return load_yaml(text, first_line=2)


def _dump_mapping(key: str, value: Any) -> str:
    """``key: value`` in block style; characters kept as they are when that reads back intact."""
    for allow_unicode in (True, False):
        out = io.StringIO()
        _dumper(allow_unicode).dump({key: value}, out)
        text = out.getvalue()
        # ruamel writes some characters (NEL, LS, PS) raw inside quotes, where its own reader
        # takes them for line breaks; escaping everything non-ASCII avoids that.
        if _load_front_matter(text) == {key: value}:
            return text
    # A safety net against writing a file that reads back differently; no known value gets here.
    msg = f"'{key}' cannot be stored in a board file's front matter"
    raise ValueError(msg)


# -- parse / render --------------------------------------------------------------------------------


def parse_document(text: str, issue_id: str) -> BoardDocument:
    """Parse an issue file. Raises :class:`BoardFormatError` when malformed; the lines it names are
    the file's."""
    text = text.replace("\r\n", "\n")
    if not text.startswith("---"):
        msg = (
            f'board issue {issue_id} has no front matter: a board file starts with a "---" line, '
            'then "status: ...", then another "---" line'
        )
        raise BoardFormatError(msg)
    end = text.find("\n---", 3)
    if end == -1:
        msg = f'board issue {issue_id}: the front matter opened on line 1 is not closed: add a "---" line after it'
        raise BoardFormatError(msg)
    first_newline = text.find("\n")
    close_newline = text.find("\n", end + 1)
    body = text[close_newline + 1 :] if close_newline != -1 else ""
    try:
        front = _load_front_matter(text[first_newline + 1 : end])
    except YamlError as exc:  # lines counted in the file: the front matter starts on its second
        where = f" at line {exc.line}, column {exc.column}" if exc.line is not None else ""
        msg = f"board issue {issue_id} has invalid front matter{where}: {exc.problem}"
        raise BoardFormatError(msg) from None
    status = front.get("status") if isinstance(front, dict) else None
    if not isinstance(status, str) or not status.strip():
        msg = f"board issue {issue_id} is missing required 'status'"
        raise BoardFormatError(msg)
    raw_labels = front.get("labels")
    labels = [item for item in raw_labels if isinstance(item, str)] if isinstance(raw_labels, list) else []
    # A hand-written `"\uD800"` escape: readable as U+FFFD rather than an unencodable string.
    if not status.isascii():
        status = _SURROGATE.sub("\ufffd", status)
    if not "".join(labels).isascii():
        labels = [_SURROGATE.sub("\ufffd", label) for label in labels]
    main, marker, rest = body.partition(COMMENTS_MARKER)
    comments = ""
    if marker:
        rest = rest.removeprefix("\n").removeprefix(_COMMENTS_HEADING).removeprefix("\n")
        comments = rest.strip()
    title, description = _title_and_description(main)
    return BoardDocument(
        status=status.strip(), labels=tuple(labels), title=title, description=description, comments=comments
    )


def _title_and_description(main: str) -> tuple[str, str]:
    """The first line starting ``# `` (without it), and the text after that line; no such line:
    ``""`` and all of ``main``. Both stripped."""
    start = 0 if main.startswith("# ") else main.find("\n# ") + 1
    if not start and not main.startswith("# "):
        return "", main.strip()
    end = main.find("\n", start)
    if end == -1:
        return main[start + 2 :].strip(), ""
    return main[start + 2 : end].strip(), main[end + 1 :].strip()


def render_document(document: BoardDocument) -> str:
    """The exact on-disk text of ``document``."""
    front = _dump_mapping("status", document.status)
    if document.labels:
        front += _dump_mapping("labels", list(document.labels))
    # Only newlines: str.rstrip() would also eat a trailing NBSP that is part of a value.
    front = front.rstrip("\n")
    # Rule: the marker is raw only before the comment block; in title/description it becomes `&lt;!--`.
    title = document.title.replace(COMMENTS_MARKER, _NEUTRAL_MARKER)
    sections = [f"---\n{front}\n---", f"# {title}"]
    description = document.description.strip().replace(COMMENTS_MARKER, _NEUTRAL_MARKER)
    if description:
        sections.append(description)
    comments = document.comments.strip()
    if comments:
        sections.append(f"{COMMENTS_MARKER}\n{_COMMENTS_HEADING}\n{comments}")
    return "\n\n".join(sections) + "\n"


def iso_timestamp(moment: datetime) -> str:
    """UTC ISO-8601 with milliseconds and ``Z`` (``2026-05-29T10:00:00.000Z``)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    utc = moment.astimezone(UTC)
    if utc.year >= 1000:  # isoformat pads the year to four digits, where strftime's %Y does not
        return utc.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def comment_line(body: str, now: datetime) -> str:
    """``- <timestamp> agent: <body>``."""
    return f"- {iso_timestamp(now)} agent: {body}"


def issue_record(issue_id: str, document: BoardDocument, st: os.stat_result) -> dict[str, Any]:
    """The tracker record of ``document``, dated by its file's ``st`` (birth time where kept)."""
    birth = getattr(st, "st_birthtime", None)
    created = birth if birth is not None else min(st.st_ctime, st.st_mtime)
    updated_at = iso_timestamp(datetime.fromtimestamp(st.st_mtime, UTC))
    return {
        "id": issue_id,
        "identifier": issue_id,
        "title": document.title or issue_id,
        "description": document.description or None,
        "state": document.status,
        "stateType": default_state_type(document.status) or "backlog",
        "labels": list(document.labels),
        # Unless born apart (birth time), a file written whole is created when it was last modified.
        "created_at": updated_at if created == st.st_mtime else iso_timestamp(datetime.fromtimestamp(created, UTC)),
        "updated_at": updated_at,
    }


def query_row(record: dict[str, Any]) -> dict[str, Any]:
    """``normalize_issue(record).to_query_row(with_url=False)`` for a ``record`` of
    :func:`issue_record`, without building the issue (a query needs a row of every file)."""
    return {
        "id": record["id"],
        "identifier": record["identifier"],
        "title": record["title"],
        "description": record["description"],
        "state": record["state"],
        "stateType": record["stateType"],
        "labels": [label.strip().lower() for label in record["labels"] if label.strip()],
        "createdAt": record["created_at"],
        "updatedAt": record["updated_at"],
    }


def document_content(issue_id: str, document: BoardDocument) -> dict[str, Any]:
    """``{id, status, title, description, comments: [line, ...]}`` with the raw status."""
    return {
        "id": issue_id,
        "status": document.status,
        "title": document.title,
        "description": document.description,
        "comments": document.comment_lines(),
    }
