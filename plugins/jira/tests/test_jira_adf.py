"""Markdown → ADF for descriptions and comments, and ADF → text when reading."""

from __future__ import annotations

import time
from typing import Any

from lorenz_jira.adf import adf_to_text, markdown_to_adf


def blocks(text: str) -> list[dict[str, Any]]:
    doc = markdown_to_adf(text)
    assert doc["type"] == "doc"
    assert doc["version"] == 1
    return list(doc["content"])


def test_heading_and_bold_paragraph() -> None:
    """A heading keeps its level and ``**bold**`` becomes a strong mark."""
    content = blocks("# Title\n\nHello **world**")
    assert [b["type"] for b in content] == ["heading", "paragraph"]
    assert content[0]["attrs"] == {"level": 1}
    assert content[1]["content"][1] == {"type": "text", "text": "world", "marks": [{"type": "strong"}]}


def test_fenced_code_block_keeps_language() -> None:
    """A fence becomes a codeBlock with its language and the raw code."""
    (code,) = blocks("```ts\nconst x = 1;\n```")
    assert code == {
        "type": "codeBlock",
        "attrs": {"language": "ts"},
        "content": [{"type": "text", "text": "const x = 1;"}],
    }


def test_empty_fence_without_language() -> None:
    """An empty fence without a language has no attrs and no content."""
    assert blocks("```\n```") == [{"type": "codeBlock", "attrs": {}, "content": []}]


def test_task_list_states() -> None:
    """``[ ]``/``[x]``/``[X]`` become TODO/DONE task items in one task list with local ids."""
    (tasks,) = blocks("- [ ] todo\n- [x] done\n- [X] also done")
    assert tasks["type"] == "taskList"
    assert isinstance(tasks["attrs"]["localId"], str)
    assert [i["attrs"]["state"] for i in tasks["content"]] == ["TODO", "DONE", "DONE"]
    assert tasks["content"][0]["content"][0]["text"] == "todo"
    ids = [i["attrs"]["localId"] for i in tasks["content"]] + [tasks["attrs"]["localId"]]
    assert ids == ["local-1", "local-2", "local-3", "local-4"]


def test_nested_task_list_is_a_sibling_item() -> None:
    """A deeper task list sits between its parent and the next task item."""
    (tasks,) = blocks("- [ ] parent\n  - [x] child\n- [ ] sibling")
    assert [i["type"] for i in tasks["content"]] == ["taskItem", "taskList", "taskItem"]
    assert tasks["content"][1]["content"][0]["attrs"]["state"] == "DONE"


def test_nested_bullet_list_goes_into_the_last_item() -> None:
    """A deeper bullet list is appended to the previous list item, after its paragraph."""
    (bullets,) = blocks("- parent a\n  - child a1\n- parent b")
    assert bullets["type"] == "bulletList"
    assert [c["type"] for c in bullets["content"][0]["content"]] == ["paragraph", "bulletList"]
    assert len(bullets["content"]) == 2


def test_kind_change_starts_a_new_list() -> None:
    """A bullet after a task item closes the task list."""
    assert [b["type"] for b in blocks("- [ ] task\n- plain bullet")] == ["taskList", "bulletList"]


def test_ordered_list() -> None:
    """``1.`` and ``2)`` items form one ordered list."""
    (ordered,) = blocks("1. one\n2) two")
    assert ordered["type"] == "orderedList"
    assert [i["content"][0]["content"][0]["text"] for i in ordered["content"]] == ["one", "two"]


def test_table_with_inline_code() -> None:
    """A pipe table has header cells, data cells and inline marks inside cells."""
    (table,) = blocks("| Grader | Status |\n| --- | --- |\n| `proper_i18n` | ⏳ attempt 1/3 |")
    assert table["type"] == "table"
    assert table["attrs"] == {"layout": "default"}
    header, row = table["content"]
    assert [c["type"] for c in header["content"]] == ["tableHeader", "tableHeader"]
    assert header["content"][0]["content"][0]["content"][0]["text"] == "Grader"
    code = row["content"][0]["content"][0]["content"][0]
    assert code == {"type": "text", "text": "proper_i18n", "marks": [{"type": "code"}]}
    assert row["content"][1]["content"][0]["content"][0]["text"] == "⏳ attempt 1/3"


def test_table_alignment_and_empty_cell_then_paragraph() -> None:
    """Alignment colons are ignored; an empty cell has an empty paragraph; the table ends at prose."""
    table, after = blocks("| A | B |\n| :-- | --: |\n| x | |\nafter")
    assert table["type"] == "table"
    assert table["content"][1]["content"][1]["content"][0] == {"type": "paragraph", "content": []}
    assert after == {"type": "paragraph", "content": [{"type": "text", "text": "after"}]}


def test_lone_pipe_line_is_a_paragraph() -> None:
    """A pipe row without a separator line is plain text."""
    assert [b["type"] for b in blocks("| not | a table |")] == ["paragraph"]


def test_blank_lines_split_paragraphs_without_empty_ones() -> None:
    """Blank lines separate paragraphs and produce none themselves."""
    assert blocks("First line\n\nSecond line") == [
        {"type": "paragraph", "content": [{"type": "text", "text": "First line"}]},
        {"type": "paragraph", "content": [{"type": "text", "text": "Second line"}]},
    ]


def test_empty_document_has_one_empty_paragraph() -> None:
    """Empty Markdown still makes a valid document."""
    assert blocks("") == [{"type": "paragraph", "content": []}]


def test_bare_list_marker_is_a_paragraph() -> None:
    """A lone ``- `` does not crash; it is kept as text."""
    assert blocks("- ") == [{"type": "paragraph", "content": [{"type": "text", "text": "- "}]}]


def test_inline_link_code_and_emphasis() -> None:
    """Links, code, ``*em*`` and ``_em_`` become marks on text nodes."""
    (para,) = blocks("see [docs](https://x.test/a) or `code` *a* _b_")
    marks = [n.get("marks") for n in para["content"]]
    assert [{"type": "link", "attrs": {"href": "https://x.test/a"}}] in marks
    assert [{"type": "code"}] in marks
    assert marks.count([{"type": "em"}]) == 2


def test_adf_to_text_joins_paragraph_parts_with_spaces() -> None:
    """Paragraph children join with spaces, blocks with newlines."""
    assert adf_to_text(markdown_to_adf("# Title\n\nHello **world**")) == "Title\nHello world"


def test_adf_to_text_concatenates_marked_runs() -> None:
    """Runs split by marks read back with single spaces; a hard break is a newline."""
    doc = markdown_to_adf("## Fix **the** `login`\n\nsee [docs](https://x.test) now")
    assert adf_to_text(doc) == "Fix the login\nsee docs now"
    assert (
        adf_to_text({"type": "paragraph", "content": [{"type": "text", "text": "a"}, {"type": "hardBreak"}]}) == "a\n"
    )


def test_adf_to_text_of_a_string_and_junk() -> None:
    """A plain string reads as itself; non-ADF values read as empty."""
    assert adf_to_text("already text") == "already text"
    assert adf_to_text(42) == ""


def test_round_trip_keeps_list_and_table_text() -> None:
    """Markdown → ADF → text keeps every item's and cell's words."""
    text = adf_to_text(markdown_to_adf("- [ ] write tests\n- [x] ship\n\n| k | v |\n| - | - |\n| a | b |"))
    for word in ("write tests", "ship", "k", "v", "a", "b"):
        assert word in text.split("\n")


def test_unclosed_brackets_parse_in_linear_time() -> None:
    """A run of ``[`` (no link) is plain text and parses quickly (the link pattern cannot go quadratic)."""
    started = time.perf_counter()
    (para,) = blocks("[" * 40000)
    assert time.perf_counter() - started < 1.0
    assert para["content"] == [{"type": "text", "text": "[" * 40000}]


def test_deeply_nested_adf_reads_flat_without_recursion_error() -> None:
    """A hostile, deeply nested document reads its text flat instead of raising ``RecursionError``."""
    node: dict[str, Any] = {"type": "text", "text": "deepest"}
    for level in range(10000):
        node = {"type": "bulletList", "content": [node, {"type": "text", "text": f"at {level}"}]}
    text = adf_to_text({"type": "doc", "content": [node]})
    lines = text.split("\n")
    assert lines[0] == "deepest"
    assert lines[-1] == "at 9999"
    assert len(lines) == 10001
