"""What a tool call answers on the wire: a :class:`~lorenz.results.ToolResult` as one pretty-JSON
text item (or a typed tool's own content blocks), ``structuredContent`` when the payload is an
object, and ``isError`` when it failed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from attrs import frozen
from jsonschema.exceptions import best_match

from lorenz.contracts import ToolSpec
from lorenz.results import ToolResult, tool_failure
from lorenz.settings.model import DEFAULT_MAX_RESULT_BYTES
from lorenz.toolcall.wire import ResultTooLarge, encode_payload, json_size_exceeds, scrub_surrogates

if TYPE_CHECKING:
    from lorenz.toolcall.schemas import Validator

__all__ = ["RESULT_TOO_LARGE", "ToolReply", "call_result", "checked_reply"]

#: ``reason`` of the failure that replaces a result over ``server.max_result_bytes``.
RESULT_TOO_LARGE = "result_too_large"


@frozen
class ToolReply:
    """A ``CallToolResult`` of one text item, from parts already known to be well-formed (a str,
    a JSON object or ``None``, a bool): the SDK validates what it sends, so nothing here builds
    (or validates) its models on the way."""

    text: str
    structured_content: dict[str, Any] | None
    is_error: bool
    #: A typed tool's content blocks in wire form, sent instead of the one text item (``text`` is
    #: then their text, for the call log).
    content: tuple[dict[str, Any], ...] | None = None
    #: An ``InputRequiredResult`` in wire form, sent instead (2026-07-28: the client must answer first).
    input_required: dict[str, Any] | None = None

    def wire(self) -> dict[str, Any]:
        """The result as the SDK dumps a ``CallToolResult`` (by alias, without ``None`` fields;
        a handshake-era surface drops ``resultType``)."""
        if self.input_required is not None:
            return dict(self.input_required)
        blocks = list(self.content) if self.content is not None else [{"type": "text", "text": self.text}]
        wire: dict[str, Any] = {
            "content": blocks,
            "isError": self.is_error,
            "resultType": "complete",
        }
        if self.structured_content is not None:
            wire["structuredContent"] = self.structured_content
        return wire


def call_result(
    result: ToolResult,
    spec: ToolSpec | None = None,
    output: Validator | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_RESULT_BYTES,
) -> ToolReply:
    """The wire form of a tool result: one text item with the pretty JSON payload, ``isError``
    when it failed, and the payload as ``structuredContent`` when it is an object.

    A successful result for a tool advertising an ``outputSchema`` must match it (clients reject
    it otherwise), and one whose JSON exceeds ``max_bytes`` is not sent: either becomes an
    ``isError`` result naming the problem.
    """
    return checked_reply(result, spec, output, max_bytes=max_bytes)[1]


def checked_reply(
    result: ToolResult,
    spec: ToolSpec | None = None,
    output: Validator | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_RESULT_BYTES,
) -> tuple[ToolResult, ToolReply]:
    """:func:`call_result`, with the result it answers: ``result`` itself, or the failure that
    replaced it (too large, not matching the ``outputSchema``)."""
    blocks = getattr(result, "content", None)  # a typed tool's content blocks (images, links...)
    try:
        payload, text = encode_payload(result.payload(), max_bytes=max_bytes)
        # The blocks count against the same limit as the payload (an image's base64 is most of it).
        if isinstance(blocks, tuple) and json_size_exceeds(blocks, max_bytes - len(text.encode("utf-8"))):
            raise ResultTooLarge(max_bytes)
    except ResultTooLarge as exc:
        tool = spec.name if spec is not None else "the tool"
        message = f"{tool} returned {exc} (server.max_result_bytes): ask for less, e.g. a smaller limit"
        return _replaced(tool_failure(message, reason=RESULT_TOO_LARGE))
    if result.success and spec is not None and spec.output_schema is not None:
        problem = None
        if output is not None and not output.is_valid(payload):
            error = best_match(output.iter_errors(payload))
            if error is not None:
                problem = f"{error.json_path}: {error.message}"
        if problem is not None:
            return _replaced(
                tool_failure(f"tool {spec.name} returned a result that does not match its outputSchema: {problem}")
            )
    structured = payload if isinstance(payload, dict) else None
    custom = getattr(result, "text", None)  # a typed tool's own rendering (lorenz.authoring.FormattedResult)
    if isinstance(custom, str):
        text = scrub_surrogates(custom)
    content = tuple(scrub_surrogates(list(blocks))) if isinstance(blocks, tuple) else None
    return result, ToolReply(text=text, structured_content=structured, is_error=not result.success, content=content)


def _replaced(failure: ToolResult) -> tuple[ToolResult, ToolReply]:
    return failure, call_result(failure)
