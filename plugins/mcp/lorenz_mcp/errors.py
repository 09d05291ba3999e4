"""What an upstream's failures say: :class:`UpstreamError`, and an exception raised starting,
listing or calling an upstream put in one line: a start that timed out or a program not found in
the options' words, an answer over the cap in the host's (``server.max_result_bytes``), the rest
redacted of the upstream's secrets.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from .limits import is_too_large, too_large
from .options import McpOptions

__all__ = ["UpstreamError", "describe", "request_error"]


class UpstreamError(Exception):
    """The upstream could not answer: not started, gone mid-call, or broke the protocol; ``code``:
    the JSON-RPC error code when it answered with an error; ``too_large``: its answer was over
    ``server.max_result_bytes``."""

    def __init__(self, message: str, code: int | None = None, *, too_large: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.too_large = too_large


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException, options: McpOptions, max_bytes: int, redact: Callable[[str], str]) -> str:
    """``exc`` in one line (``max_bytes``: the bound its messages were held to)."""
    exc = _leaf(exc)
    if isinstance(exc, TimeoutError):
        return f"did not answer within {options.start_timeout_seconds:g} s (start_timeout_seconds)"
    if isinstance(exc, FileNotFoundError):
        return f"cannot start: {exc.strerror}: {exc.filename}"
    text = str(exc) or type(exc).__name__
    if is_too_large(text):
        return too_large(max_bytes)
    return redact(f"{type(exc).__name__}: {text}" if text != type(exc).__name__ else text)


def request_error(
    exc: Exception, options: McpOptions, max_bytes: int, redact: Callable[[str], str], broken: asyncio.Event
) -> UpstreamError:
    """The :class:`UpstreamError` a request that raised ``exc`` ends in; a closed connection sets
    ``broken``, so the upstream is restarted."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    if isinstance(exc, MCPError):
        if is_too_large(str(exc)):
            message = f"MCP server {options.describe()}: {too_large(max_bytes)}"
            return UpstreamError(message, exc.code, too_large=True)
        if exc.code == CONNECTION_CLOSED:
            broken.set()
            msg = f"MCP server {options.describe()} ended during the call; it is being restarted"
            return UpstreamError(msg)
        message = redact(f"MCP server {options.describe()}: {exc}")
        return UpstreamError(message, exc.code)
    return UpstreamError(f"MCP server {options.describe()}: {describe(exc, options, max_bytes, redact)}")
