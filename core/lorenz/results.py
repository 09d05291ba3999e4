"""Tool results and the helpers that build them: failure is data, never an exception."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from attrs import frozen

__all__ = [
    "FormattedResult",
    "ToolResult",
    "error_message",
    "failure_result",
    "tool_failure",
    "tool_success",
    "unsupported_tool_failure",
]


@frozen(kw_only=True)
class ToolResult:
    """What a tool call returns.

    ``result`` reaches the agent verbatim; ``error`` is a one-line human summary, set when
    ``success`` is false.
    """

    success: bool
    result: Any = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The wire form: ``{success, result?, error?}`` with absent keys left out."""
        out: dict[str, Any] = {"success": self.success}
        if self.result is not None:
            out["result"] = self.result
        if self.error is not None:
            out["error"] = self.error
        return out

    def payload(self) -> Any:
        """The value an MCP client sees: ``result`` (or ``{}``), or ``{"error": {"message": …}}``."""
        if self.result is not None:
            return self.result
        if self.success:
            return {}
        return {"error": {"message": self.error if self.error is not None else "dynamic tool failed"}}


@frozen(kw_only=True)
class FormattedResult(ToolResult):
    """A :class:`ToolResult` that also carries the text for MCP ``content[]``
    (a host that knows about it shows ``text`` instead of the JSON dump of the payload).

    ``content``, when set, is the whole ``content[]`` in MCP wire form (text, image, audio,
    resource link and embedded resource blocks, from :mod:`lorenz.authoring`'s helpers); ``text``
    is then its text blocks joined."""

    text: str | None = None
    content: tuple[dict[str, Any], ...] | None = None


def failure_result(
    message: str, *, reason: str, retryable: bool = False, recovery: str | None = None, **details: Any
) -> FormattedResult:
    """``{"error": {"message", "reason", "retryable", "recovery"?, **details}}`` with the text
    ``Error: <message>`` plus the reason and, when known, ``Recovery: <hint>``."""
    error: dict[str, Any] = {"message": message, **details, "reason": reason, "retryable": retryable}
    if recovery:
        error["recovery"] = recovery
    lines = [f"Error: {message}", "", f"Reason: {reason} ({'retryable' if retryable else 'not retryable'})"]
    if recovery:
        lines.append(f"Recovery: {recovery}")
    return FormattedResult(success=False, error=message, result={"error": error}, text="\n".join(lines))


def tool_success(result: Any = None) -> ToolResult:
    """``{success: true, result}``."""
    return ToolResult(success=True, result=result)


def tool_failure(message: str, /, **details: Any) -> ToolResult:
    """``{success: false, error: message, result: {error: {message, **details}}}``.

    ``details`` are merged after ``message``, so a ``message`` detail overrides the nested
    message while the top-level ``error`` keeps ``message``.
    """
    return ToolResult(success=False, error=message, result={"error": {"message": message, **details}})


def unsupported_tool_failure(name: str, supported: Iterable[str]) -> ToolResult:
    """The failure for a tool name no mounted pack declares: ``Unsupported tool: "x".``."""
    message = f"Unsupported tool: {json.dumps(name, ensure_ascii=False)}."
    return tool_failure(message, supportedTools=list(supported))


def error_message(error: BaseException | object) -> str:
    """The message of an exception (``str(exc)``), or ``str(value)`` for anything else.

    A ``KeyError`` keeps its bare key text instead of Python's quoted repr.
    """
    if isinstance(error, KeyError) and len(error.args) == 1:
        return str(error.args[0])
    if isinstance(error, BaseException):
        text = str(error)
        return text if text else type(error).__name__
    return "null" if error is None else str(error)
