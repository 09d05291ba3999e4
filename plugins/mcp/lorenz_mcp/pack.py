"""The ``mcp`` pack: the tools of the one upstream MCP server its options name.

Upstreams are keyed by their options, so two mounts with different options (pack instances) each
get their own server, and a reload that keeps a mount's options keeps its server. The keyed table
is shared by the pack objects of one process (:data:`UPSTREAMS`): the host makes a new pack object
when it rediscovers plugins, and a second process for the same server (on the same data files)
would be wrong. Every upstream stops when the interpreter exits.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from lorenz import Settings, ToolContext, ToolResult, ToolSpec, tool_failure, unsupported_tool_failure

from .options import McpOptions, parse_options, unset_references
from .upstream import Upstream, UpstreamError

__all__ = ["McpPack"]


class Upstreams:
    """The running upstreams, by their options' key."""

    def __init__(self) -> None:
        self._running: dict[str, Upstream] = {}
        self._lock = threading.Lock()
        atexit.register(self.close)

    def get(self, options: McpOptions, label: str, settings: Settings) -> Upstream:
        with self._lock:
            upstream = self._running.get(options.key)
            if upstream is None:
                upstream = Upstream(options, label, tuple(settings.secrets), os.environ)
                self._running[options.key] = upstream
            return upstream

    def close(self) -> None:
        """Stop every upstream."""
        with self._lock:
            upstreams, self._running = list(self._running.values()), {}
        for upstream in upstreams:
            upstream.close()


#: This process's upstreams (see the module docstring).
UPSTREAMS = Upstreams()


class McpPack:
    """One upstream MCP server's tools, passed through (see the module docstring)."""

    name = "mcp"

    def __init__(self, upstreams: Upstreams = UPSTREAMS) -> None:
        self._upstreams = upstreams

    def validate_options(self, options: Mapping[str, Any]) -> None:
        parse_options(options)

    def check_settings(self, settings: Settings) -> Sequence[str]:
        options = self._options(settings)
        return unset_references(options, os.environ) if options is not None else []

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        options = self._options(settings)
        if options is None:
            return []
        from .convert import tool_spec  # lorenz.authoring: only once a workflow mounts the pack

        return [tool_spec(tool) for tool in self._upstream(options, settings).tools()]

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        options = self._options(context.settings)
        if options is None:
            return unsupported_tool_failure(name, [])
        upstream = self._upstream(options, context.settings)
        try:
            tools = upstream.tools()
        except UpstreamError as exc:
            return tool_failure(str(exc), reason="upstream_unavailable", retryable=True)
        if not any(tool["name"] == name for tool in tools):
            return unsupported_tool_failure(name, [str(tool["name"]) for tool in tools])
        try:
            result = await upstream.call(name, input if isinstance(input, Mapping) else {}, context.progress)
        except UpstreamError as exc:
            return tool_failure(str(exc), reason="upstream_unavailable", retryable=True)
        from .convert import tool_result

        wire = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        return tool_result(wire.get("content") or [], wire.get("structuredContent"), bool(wire.get("isError")))

    def _options(self, settings: Settings) -> McpOptions | None:
        raw = (settings.tool_options or {}).get(self.name)
        return parse_options(raw) if raw else None

    def _upstream(self, options: McpOptions, settings: Settings) -> Upstream:
        return self._upstreams.get(options, f"{self.name} ({options.describe()})", settings)
