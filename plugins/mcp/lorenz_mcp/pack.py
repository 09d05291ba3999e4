"""The ``mcp`` pack: the tools of the one upstream MCP server its options name.

The pack object owns its upstreams, keyed by their options: two mounts with equal options share
one, and a reload that keeps a mount's options keeps its server. The host attaches each served
configuration and detaches it once it is no longer served; an upstream no served configuration
mounts is stopped then (and any left at interpreter exit, for the CLI, which never detaches).

Mounting one instance starts every other ``mcp`` instance the settings show, so their first
listings run at once and mounting waits :data:`MOUNT_WAIT_SECONDS` in all, not once per upstream.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from attrs import evolve

from lorenz import (
    ConfigError,
    PackInstance,
    Permissions,
    PromptSpec,
    ResourceSpec,
    SandboxedCommand,
    Settings,
    ToolContext,
    ToolResult,
    ToolSpec,
    tool_failure,
    tool_success,
    unsupported_tool_failure,
)

from .options import McpOptions, parse_options, unset_references

if TYPE_CHECKING:
    from .suspend import Suspended
    from .upstream import Upstream

__all__ = ["MOUNT_WAIT_SECONDS", "McpPack"]

#: How long after its start mounting waits for an upstream's first ``tools/list`` (at most its start
#: timeout); a slower one is mounted without tools and its tools are added when it answers.
MOUNT_WAIT_SECONDS = 5.0


def _own_key(settings: Settings, provider: str) -> str:
    """The ``tools:`` key of the mount these settings are for: an instance's view holds its options
    under the pack's name, so its own key is the one instance whose options are not listed."""
    for key, instance in settings.tool_instances.items():
        if instance.provider == provider and key not in (settings.tool_options or {}):
            return key
    return provider


def _confined(options: McpOptions, settings: Settings, key: str) -> McpOptions:
    """``options`` with what a sandboxed server runs under: ``tools.<key>.permissions``. A server is
    sandboxed by ``sandbox: true``, or by ``server.sandboxed_packs`` naming its instance (or ``mcp``);
    a remote one named there is refused: it runs nowhere the host could confine."""
    named = key in settings.server.sandboxed_packs or McpPack.name in settings.server.sandboxed_packs
    if named and options.url is not None:
        msg = (
            f"tools.{key}: server.sandboxed_packs names it, but a remote MCP server (url) runs elsewhere: "
            "nothing here can confine it; leave it out of server.sandboxed_packs"
        )
        raise ConfigError(msg)
    if not (options.sandbox or named):
        return options
    granted = settings.tool_permissions.get(key) or Permissions()
    return evolve(options, sandbox=True, permissions=granted, instance=key, workflow_dir=str(settings.base_dir))


def _denial(options: McpOptions, content: Sequence[Any], since: float) -> str | None:
    """What a sandboxed server's failed call was refused, named with the permission to add."""
    from .connect import CONFINED  # the SDK client: on first use, not at registration

    confined = CONFINED.get(options.key)
    if confined is None:
        return None
    text = "\n".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return confined.denial(text, since)


class McpPack:
    """One upstream MCP server's tools, passed through (see the module docstring)."""

    name = "mcp"
    #: Its tools are the upstream's: one the host cannot serve is dropped, never a mount error.
    dynamic_tools = True
    #: ``server.sandboxed_packs`` naming it confines the server it runs, with its runtime's preset,
    #: not the pack's own process.
    sandboxes_itself = True

    def __init__(self) -> None:
        self._running: dict[str, Upstream] = {}
        #: The instances of the attached configurations that mount each upstream.
        self._claims: dict[str, list[str]] = {}
        self._lock = threading.Lock()
        #: Upstream calls waiting for a 2026-07-28 client's retry (made with the first call).
        self._waiting: Suspended | None = None
        atexit.register(self.close)

    def _suspended(self) -> Suspended:
        if self._waiting is None:
            from .suspend import Suspended  # asyncio: only once a call runs

            self._waiting = Suspended()
        return self._waiting

    def validate_options(self, options: Mapping[str, Any]) -> None:
        parse_options(options)

    def check_settings(self, settings: Settings) -> Sequence[str]:
        try:
            options = self._options(settings)
        except ConfigError as exc:
            return [str(exc)]
        return unset_references(options, os.environ) if options is not None else []

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        options = self._options(settings)
        if options is None:
            return []
        from .convert import tool_spec  # lorenz.authoring: only once a workflow mounts the pack

        upstream = self._upstream(options, settings)
        self._start_others(settings)
        wait = min(options.start_timeout_seconds, MOUNT_WAIT_SECONDS)
        return [tool_spec(tool) for tool in upstream.listed(wait)]

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        options = self._options(context.settings)
        if options is None:
            return unsupported_tool_failure(name, [])
        from .errors import UpstreamError  # httpx2, through .limits: on first use, not at registration

        upstream = self._upstream(options, context.settings)
        try:
            tools = await upstream.callable_tools()
        except UpstreamError as exc:
            return tool_failure(str(exc), reason="upstream_unavailable", retryable=True)
        if not any(tool["name"] == name for tool in tools):
            return unsupported_tool_failure(name, [str(tool["name"]) for tool in tools])
        since = time.monotonic()
        try:
            arguments = input if isinstance(input, Mapping) else {}
            result = await self._suspended().call(upstream, name, arguments, context)
        except UpstreamError as exc:
            if exc.too_large:
                return tool_failure(f"{exc}: ask for less", reason="result_too_large")
            return tool_failure(str(exc), reason="upstream_unavailable", retryable=True)
        if isinstance(result, ToolResult):  # a round for a 2026-07-28 client, or why there is none
            return result
        from .convert import tool_result  # the SDK's types: on the first call

        wire = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        content = wire.get("content") or []
        if wire.get("isError") and options.sandbox:
            denied = _denial(options, content, since)
            if denied is not None:
                return tool_failure(denied)
        return tool_result(content, wire.get("structuredContent"), bool(wire.get("isError")))

    # -- resources and prompts (the host's optional offer hooks) ------------------------------------

    def resource_specs(self, settings: Settings) -> Sequence[ResourceSpec]:
        options = self._options(settings)
        if options is None or not options.resources:
            return []
        from .offers import resource_specs  # the SDK's types: on first use

        wait = min(options.start_timeout_seconds, MOUNT_WAIT_SECONDS)
        return resource_specs(self._upstream(options, settings).offers(wait))

    def prompt_specs(self, settings: Settings) -> Sequence[PromptSpec]:
        options = self._options(settings)
        if options is None or not options.prompts:
            return []
        from .offers import prompt_specs  # the SDK's types: on first use

        wait = min(options.start_timeout_seconds, MOUNT_WAIT_SECONDS)
        return prompt_specs(self._upstream(options, settings).offers(wait))

    async def read_resource(self, uri: str, context: ToolContext) -> ToolResult:
        from .errors import UpstreamError  # httpx2, through .limits: on first use, not at registration
        from .offers import failure, read_result  # the SDK's types: on first use

        options = self._options(context.settings)
        if options is None or not options.resources:
            return tool_failure(f"Resource not found: {uri}", reason="not_found")
        try:
            return read_result(await self._upstream(options, context.settings).read(uri))
        except UpstreamError as exc:
            return failure(str(exc), exc.code)

    async def get_prompt(self, name: str, arguments: Mapping[str, Any] | None, context: ToolContext) -> ToolResult:
        from .errors import UpstreamError  # httpx2, through .limits: on first use, not at registration
        from .offers import failure, prompt_result  # the SDK's types: on first use

        options = self._options(context.settings)
        if options is None or not options.prompts:
            return tool_failure(f"Unknown prompt: {name}", reason="not_found")
        values = {str(key): str(value) for key, value in (arguments or {}).items()}
        try:
            return prompt_result(await self._upstream(options, context.settings).prompt(name, values))
        except UpstreamError as exc:
            return failure(str(exc), exc.code)

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, str],
        context_arguments: Mapping[str, str],
        context: ToolContext,
    ) -> ToolResult:
        """The upstream's completions of a prompt's or resource template's argument."""
        from .errors import UpstreamError  # httpx2, through .limits: on first use, not at registration
        from .offers import failure  # the SDK's types: on first use

        options = self._options(context.settings)
        if options is None:
            return tool_success({"values": []})
        try:
            return tool_success(
                await self._upstream(options, context.settings).complete(ref, argument, context_arguments)
            )
        except UpstreamError as exc:
            return failure(str(exc), exc.code)

    async def subscribe_resource(self, uri: str, context: ToolContext) -> ToolResult:
        """Watch the upstream's resource ``uri`` (its updates reach the host through ``attach``)."""
        return await self._watch(uri, context, subscribe=True)

    async def unsubscribe_resource(self, uri: str, context: ToolContext) -> ToolResult:
        return await self._watch(uri, context, subscribe=False)

    async def _watch(self, uri: str, context: ToolContext, *, subscribe: bool) -> ToolResult:
        from .errors import UpstreamError  # httpx2, through .limits: on first use, not at registration
        from .offers import failure  # the SDK's types: on first use

        options = self._options(context.settings)
        if options is None or not options.resources:
            return tool_failure(f"Resource not found: {uri}", reason="not_found")
        upstream = self._upstream(options, context.settings)
        try:
            await (upstream.subscribe(uri) if subscribe else upstream.unsubscribe(uri))
        except UpstreamError as exc:
            return failure(str(exc), exc.code)
        return tool_success({})

    # -- the host's lifecycle hooks ---------------------------------------------------------------

    def attach(self, instance: PackInstance) -> None:
        """A served configuration mounts the upstream: keep it running, named after the instance,
        and tell the host when its tools change."""
        options = self._options(instance.settings)
        if options is None:
            return
        upstream = self._upstream(options, instance.settings)
        with self._lock:
            claims = self._claims.setdefault(options.key, [])
            claims.append(instance.name)
            upstream.label = ", ".join(dict.fromkeys(claims))
        upstream.lists.listen(instance.tools_changed)
        upstream.watched.listeners.append(instance.resource_updated)

    def detach(self, instance: PackInstance) -> None:
        """A configuration is no longer served: stop the upstream if no other one mounts it."""
        options = self._options(instance.settings)
        if options is None:
            return
        with self._lock:
            upstream = self._running.get(options.key)
            claims = self._claims.get(options.key, [])
            if upstream is None or instance.name not in claims:
                return
            if instance.tools_changed in upstream.lists.listeners:
                upstream.lists.listeners.remove(instance.tools_changed)
            if instance.resource_updated in upstream.watched.listeners:
                upstream.watched.listeners.remove(instance.resource_updated)
            claims.remove(instance.name)
            if claims:
                upstream.label = ", ".join(dict.fromkeys(claims))
                return
            del self._claims[options.key], self._running[options.key]
        upstream.close()

    def sandboxed(self, settings: Settings) -> SandboxedCommand | None:
        """The sandbox its server runs under, started (``None``: not sandboxed, or not running)."""
        from .connect import CONFINED  # the SDK client: on first use, not at registration

        options = self._options(settings)
        if options is None or not options.sandbox:
            return None
        upstream = self._upstream(options, settings)
        upstream.listed(options.start_timeout_seconds)
        return CONFINED.get(options.key)

    def health(self, instance: PackInstance) -> str | None:
        options = self._options(instance.settings)
        upstream = self._running.get(options.key) if options is not None else None
        return upstream.health() if upstream is not None else None

    def starting(self, instance: PackInstance) -> bool:
        options = self._options(instance.settings)
        upstream = self._running.get(options.key) if options is not None else None
        return upstream is not None and upstream.starting

    def close(self) -> None:
        """Stop every upstream."""
        with self._lock:
            upstreams, self._running, self._claims = list(self._running.values()), {}, {}
        if self._waiting is not None:
            self._waiting.close()
        for upstream in upstreams:
            upstream.close()

    def _options(self, settings: Settings) -> McpOptions | None:
        raw = (settings.tool_options or {}).get(self.name)
        return _confined(parse_options(raw), settings, _own_key(settings, self.name)) if raw else None

    def _upstream(self, options: McpOptions, settings: Settings, key: str | None = None) -> Upstream:
        """The running upstream of ``options``, started (named ``key``, else this mount's key) if
        none is."""
        from .upstream import Upstream  # asyncio, httpx2 and the SDK: only for a pack that is mounted

        with self._lock:
            upstream = self._running.get(options.key)
            if upstream is None:
                label = key or _own_key(settings, self.name)
                max_bytes = settings.server.max_result_bytes
                upstream = Upstream(options, label, tuple(settings.secrets), os.environ, max_bytes)
                self._running[options.key] = upstream
            return upstream

    def _start_others(self, settings: Settings) -> None:
        """Start the upstreams of the other ``mcp`` instances these settings show (see the module
        docstring); one whose options are bad is left to its own mount to report."""
        for key, instance in settings.tool_instances.items():
            raw = (settings.tool_options or {}).get(key)
            if instance.provider != self.name or not raw:
                continue
            try:
                options = _confined(parse_options(raw, f"tools.{key}"), settings, key)
            except ValueError:
                continue
            self._upstream(options, settings, key)
