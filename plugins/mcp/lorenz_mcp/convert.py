"""Upstream tools and results in Lorenz's terms, passed through as they came.

A tool keeps its name, title, description, both schemas and its annotations; a result keeps its
content blocks (images, audio, links, embedded resources) in wire form, its ``structuredContent``
as the payload and its ``isError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lorenz import ToolSpec
from lorenz.authoring import FormattedResult

__all__ = ["tool_spec", "tool_result"]

_EMPTY_SCHEMA: Mapping[str, Any] = {"type": "object", "properties": {}}


def tool_spec(tool: Mapping[str, Any]) -> ToolSpec:
    """A ``tools/list`` entry (wire form) as a :class:`ToolSpec`."""
    annotations = tool.get("annotations")
    output = tool.get("outputSchema")
    title = tool.get("title")
    return ToolSpec(
        name=str(tool["name"]),
        description=str(tool.get("description") or ""),
        input_schema=dict(tool.get("inputSchema") or _EMPTY_SCHEMA),
        title=title if isinstance(title, str) else None,
        annotations=dict(annotations) if isinstance(annotations, Mapping) and annotations else None,
        output_schema=dict(output) if isinstance(output, Mapping) else None,
    )


def tool_result(content: Sequence[Mapping[str, Any]], structured: Any, is_error: bool) -> FormattedResult:
    """A ``tools/call`` result (its wire parts) as the host's result: the same blocks, the same
    ``structuredContent`` (or, without one, the text as the payload), the same ``isError``."""
    blocks = tuple(dict(block) for block in content)
    text = "\n".join(str(block["text"]) for block in blocks if block.get("type") == "text")
    payload: Any = structured if isinstance(structured, dict) else text
    if is_error:
        return FormattedResult(
            success=False, error=text or "the upstream tool failed", result=payload, text=text, content=blocks
        )
    return FormattedResult(success=True, result=payload, text=text, content=blocks)
