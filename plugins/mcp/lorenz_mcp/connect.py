"""Opening one connection to an upstream MCP server: a stdio child (its stderr logged, its lines
bounded) or Streamable HTTP (with retries of what is safe to retry), and the SDK client over it.

Runs on the upstream's home loop (:mod:`.upstream` supervises; it may be the host's); what the
connection opens is entered on the caller's exit stack, so closing the stack ends the child or the
HTTP session.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import __version__
from .options import McpOptions
from .stderr import StderrPipe

if TYPE_CHECKING:
    from mcp.client.session import MessageHandlerFnT

    from lorenz import SandboxedCommand

__all__ = ["CONFINED", "connect"]

logger = logging.getLogger("lorenz_mcp")

#: The sandbox each running sandboxed server (by its options' key) runs under: it names denials.
CONFINED: dict[str, SandboxedCommand] = {}


async def connect(
    stack: contextlib.AsyncExitStack,
    options: McpOptions,
    *,
    label: Callable[[], str],
    env: Mapping[str, str],
    headers: Mapping[str, str],
    secrets: Sequence[str],
    max_bytes: int,
    ended: Callable[[Sequence[str]], None],
    idempotent: Callable[[], frozenset[str]],
    on_message: MessageHandlerFnT,
    callbacks: Mapping[str, Any],
) -> Any:
    """The SDK client, initialized, of a new connection to the server ``options`` names.

    ``ended`` is called (from another thread) with its last lines when a stdio child's stderr
    ends; ``idempotent``
    names the tools whose calls may be retried over HTTP; ``on_message`` gets every notification;
    ``callbacks`` answer the server's requests to the client (:class:`.asks.Asks`).
    """
    from mcp import Client
    from mcp_types import Implementation

    server: Any
    if options.command is not None:
        from .stdio import bounded_stdio  # only a stdio upstream

        # Its own session and process group, and an environment of the declared variables
        # over the SDK's few basics (HOME, LOGNAME, PATH, SHELL, TERM, USER): no host secret.
        command = options.command
        if options.sandbox:
            confined, prepared = await _confine(stack, options)
            command, env = confined.argv, confined.env(os.environ) | prepared | dict(env)
        stderr = StderrPipe(label, secrets, ended)
        try:
            spawn = bounded_stdio(command, env, options.cwd, stderr.writer, max_bytes, label)
            streams = await stack.enter_async_context(spawn)
        except BaseException:
            stderr.close()
            raise
        stderr.start()

        @contextlib.asynccontextmanager
        async def spawned() -> Any:
            yield streams

        server = spawned()
    else:
        from mcp.client.streamable_http import streamable_http_client

        from .retry import http_client  # httpx2: only a remote upstream

        def retried(what: str, status: int, delay: float) -> None:
            describe = options.describe()
            logger.warning("pack %s: %s answered %d to %s; retrying in %g s", label(), describe, status, what, delay)

        assert options.url is not None
        session = http_client(headers, options.timeout_seconds, max_bytes, idempotent, retried)
        http = await stack.enter_async_context(session)
        server = streamable_http_client(options.url, http_client=http, max_sse_event_size=max_bytes)

    client = Client(
        server,
        # The initialize handshake: every server speaks it, and it delivers list_changed unasked.
        mode="legacy",
        message_handler=on_message,
        client_info=Implementation(name="lorenz-mcp", version=__version__),
        cache=None,
        **callbacks,
    )
    return await stack.enter_async_context(client)


async def _confine(stack: contextlib.AsyncExitStack, options: McpOptions) -> tuple[SandboxedCommand, dict[str, str]]:
    """The sandbox ``options``' server runs under until ``stack`` closes, its runtime's preset
    granted, and the variables pointing the runtime at what the preset prepared."""
    import anyio.to_thread

    from lorenz import Permissions, sandboxed_command  # only a sandboxed upstream

    from .presets import preset_for  # only a sandboxed upstream

    assert options.command is not None and options.instance is not None
    permissions = options.permissions or Permissions()
    preset = preset_for(options.command, os.environ)
    sandboxed = sandboxed_command(
        options.instance,
        preset.command if preset is not None and preset.command is not None else options.command,
        permissions,
        runtime=preset.read if preset is not None else (),
        preset=preset.name if preset is not None else None,
        workflow_dir=options.workflow_dir,
    )
    confined = await stack.enter_async_context(sandboxed)
    CONFINED[options.key] = confined
    stack.callback(CONFINED.pop, options.key, None)
    if preset is None:
        return confined, {}
    # Copying a package cache's index: in a thread, for this may be the loop the host serves on.
    return confined, await anyio.to_thread.run_sync(preset.prepare, confined.sandbox.temp_dir)
