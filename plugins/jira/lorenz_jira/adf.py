"""Atlassian Document Format: Markdown → ADF for what we write, ADF → text for what we read."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["adf_to_text", "markdown_to_adf"]

Node = dict[str, Any]

_FENCE = "```"
_HEADING = re.compile(r"^(#{1,6})\s+(.+)$")
_TASK = re.compile(r"^(\s*)[-*]\s+\[([ xX])\]\s+(.+)$")
_BULLET = re.compile(r"^(\s*)[-*]\s+(.+)$")
_ORDERED = re.compile(r"^(\s*)\d+[.)]\s+(.+)$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|(\s*:?-+:?\s*\|)+\s*$")
# Link text stops at any bracket and the URL at parens or whitespace, so a run of `[` cannot make the
# scan quadratic (each start fails at the next bracket).
_INLINE = re.compile(r"\[([^\[\]]+)\]\(([^()\s]+)\)|`([^`]+)`|\*\*(.+?)\*\*|\*(.+?)\*|_(.+?)_")

_INLINE_CONTAINERS = frozenset({"paragraph", "heading", "taskItem"})
# Below this nesting depth `adf_to_text` reads a node flat instead of recursing, so a hostile document
# cannot exhaust the stack.
_MAX_DEPTH = 64
_LIST_TYPES = {"task": "taskList", "bullet": "bulletList", "ordered": "orderedList"}


def _inline(text: str) -> list[Node]:
    nodes: list[Node] = []
    cursor = 0
    for match in _INLINE.finditer(text):
        if match.start() > cursor:
            nodes.append({"type": "text", "text": text[cursor : match.start()]})
        link_text, href, code, strong, star_em, under_em = match.groups()
        if link_text is not None:
            nodes.append({"type": "text", "text": link_text, "marks": [{"type": "link", "attrs": {"href": href}}]})
        elif code is not None:
            nodes.append({"type": "text", "text": code, "marks": [{"type": "code"}]})
        elif strong is not None:
            nodes.append({"type": "text", "text": strong, "marks": [{"type": "strong"}]})
        else:
            nodes.append({"type": "text", "text": star_em or under_em, "marks": [{"type": "em"}]})
        cursor = match.end()
    if cursor < len(text):
        nodes.append({"type": "text", "text": text[cursor:]})
    return nodes or [{"type": "text", "text": text}]


def _list_item(line: str) -> tuple[str, int, str, bool] | None:
    """``(kind, indent, text, done)`` of a list line with content, else ``None``.

    A bare ``- `` marker has no item text and reads as a paragraph.
    """
    if (task := _TASK.match(line)) is not None:
        return "task", len(task.group(1)), task.group(3), task.group(2) in "xX"
    if (bullet := _BULLET.match(line)) is not None:
        return "bullet", len(bullet.group(1)), bullet.group(2), False
    if (ordered := _ORDERED.match(line)) is not None:
        return "ordered", len(ordered.group(1)), ordered.group(2), False
    return None


def _cells(line: str) -> list[str]:
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|"):
        text = text[:-1]
    return [cell.strip() for cell in text.split("|")]


def _row(line: str, cell_type: str) -> Node:
    return {
        "type": "tableRow",
        "content": [
            {
                "type": cell_type,
                "attrs": {},
                "content": [{"type": "paragraph", "content": _inline(cell) if cell else []}],
            }
            for cell in _cells(line)
        ],
    }


class _Builder:
    """One pass over the lines; ``local_id`` numbers task items and task lists per document."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.index = 0
        self.counter = 0

    def next_local_id(self) -> str:
        self.counter += 1
        return f"local-{self.counter}"

    def build(self) -> list[Node]:
        blocks: list[Node] = []
        while self.index < len(self.lines):
            line = self.lines[self.index]
            if line.startswith(_FENCE):
                blocks.append(self._code_block(line))
            elif (heading := _HEADING.match(line)) is not None:
                blocks.append(
                    {"type": "heading", "attrs": {"level": len(heading.group(1))}, "content": _inline(heading.group(2))}
                )
                self.index += 1
            elif (item := _list_item(line)) is not None:
                blocks.append(self._list(item[0], item[1]))
            elif self._table_starts():
                blocks.append(self._table())
            elif not line.strip():
                self.index += 1
            else:
                blocks.append({"type": "paragraph", "content": _inline(line)})
                self.index += 1
        return blocks or [{"type": "paragraph", "content": []}]

    def _code_block(self, opening: str) -> Node:
        language = opening[len(_FENCE) :].strip()
        self.index += 1
        code: list[str] = []
        while self.index < len(self.lines) and not self.lines[self.index].startswith(_FENCE):
            code.append(self.lines[self.index])
            self.index += 1
        self.index += 1  # the closing fence (or EOF)
        text = "\n".join(code)
        return {
            "type": "codeBlock",
            "attrs": {"language": language} if language else {},
            "content": [{"type": "text", "text": text}] if text else [],
        }

    def _list(self, kind: str, base: int) -> Node:
        items: list[Node] = []
        while self.index < len(self.lines):
            item = _list_item(self.lines[self.index])
            if item is None:
                break
            item_kind, indent, text, done = item
            if indent < base:
                break
            if indent > base:
                if kind == "task" and item_kind != "task":
                    break
                nested = self._list(item_kind, indent)
                if kind == "task" or not items:
                    items.append(nested)
                else:
                    items[-1]["content"].append(nested)
                continue
            if item_kind != kind:
                break
            if kind == "task":
                items.append(
                    {
                        "type": "taskItem",
                        "attrs": {"localId": self.next_local_id(), "state": "DONE" if done else "TODO"},
                        "content": _inline(text),
                    }
                )
            else:
                items.append({"type": "listItem", "content": [{"type": "paragraph", "content": _inline(text)}]})
            self.index += 1
        node: Node = {"type": _LIST_TYPES[kind], "content": items}
        if kind == "task":
            node = {"type": "taskList", "attrs": {"localId": self.next_local_id()}, "content": items}
        return node

    def _table_starts(self) -> bool:
        return (
            _TABLE_ROW.match(self.lines[self.index]) is not None
            and self.index + 1 < len(self.lines)
            and _TABLE_SEPARATOR.match(self.lines[self.index + 1]) is not None
        )

    def _table(self) -> Node:
        rows = [_row(self.lines[self.index], "tableHeader")]
        self.index += 2
        while (
            self.index < len(self.lines)
            and _TABLE_ROW.match(self.lines[self.index]) is not None
            and _TABLE_SEPARATOR.match(self.lines[self.index]) is None
        ):
            rows.append(_row(self.lines[self.index], "tableCell"))
            self.index += 1
        return {"type": "table", "attrs": {"layout": "default"}, "content": rows}


def markdown_to_adf(text: str) -> Node:
    """The ADF document for a Markdown ``text``: headings, fenced code, (task/bullet/ordered)
    lists with nesting, pipe tables and paragraphs with links, code, bold and italics."""
    return {"type": "doc", "version": 1, "content": _Builder(re.split(r"\r?\n", text)).build()}


def adf_to_text(node: object, _depth: int = 0) -> str:
    """The plain text of an ADF node.

    The inline runs of a paragraph, heading or task item are concatenated (Jira splits text at
    every mark, so the runs carry their own spaces; a hard break is a newline, a mention or emoji
    its ``attrs.text``); list items join their parts with spaces, other containers with
    newlines; empty parts are dropped. Content nested deeper than ``_MAX_DEPTH`` is read flat.
    """
    if _depth >= _MAX_DEPTH:
        return _flat_text(node)
    if isinstance(node, str):
        return node
    if not isinstance(node, dict):
        return ""
    text = node.get("text")
    if isinstance(text, str):
        return text
    kind = node.get("type")
    if kind == "hardBreak":
        return "\n"
    attrs = node.get("attrs")
    if kind in ("mention", "emoji") and isinstance(attrs, dict) and isinstance(attrs.get("text"), str):
        return str(attrs["text"])
    content = node.get("content")
    if not isinstance(content, list):
        return ""
    parts = [part for part in (adf_to_text(child, _depth + 1) for child in content) if part]
    if kind in _INLINE_CONTAINERS:
        return "".join(parts)
    return (" " if kind == "listItem" else "\n").join(parts)


def _flat_text(node: object) -> str:
    """The text leaves under ``node`` in document order, one per line, without recursion."""
    parts: list[str] = []
    stack: list[object] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            parts.append(current)
        elif isinstance(current, dict):
            text, attrs, content = current.get("text"), current.get("attrs"), current.get("content")
            if isinstance(text, str):
                parts.append(text)
            elif (
                current.get("type") in ("mention", "emoji")
                and isinstance(attrs, dict)
                and isinstance(attrs.get("text"), str)
            ):
                parts.append(str(attrs["text"]))
            elif isinstance(content, list):
                stack.extend(reversed(content))
    return "\n".join(part for part in parts if part)
