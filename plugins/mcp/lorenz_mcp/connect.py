"""Opening one connection to an upstream MCP server: a stdio child (its stderr logged, its lines
bounded) or Streamable HTTP (with retries of what is safe to retry), and the SDK client over it.

Runs on the upstream's own loop (:mod:`.upstream` supervises); what the connection opens is
entered on the caller's exit stack, so closing the stack ends the child or the HTTP session.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .options import McpOptions
from .stderr import StderrPipe

if TYPE_CHECKING:
    from mcp.client.session import MessageHandlerFnT

__all__ = ["connect"]

logger = logging.getLogger("lorenz_mcp")


async def connect(
    stack: contextlib.AsyncExitStack,
    options: McpOptions,
    *,
    label: Callable[[], str],
    env: Mapping[str, str],
    headers: Mapping[str, str],
    secrets: Sequence[str],
    max_bytes: int,
    ended: Callable[[], None],
    idempotent: Callable[[], frozenset[str]],
    on_message: MessageHandlerFnT,
    callbacks: Mapping[str, Any],
) -> Any:
    """The SDK client, initialized, of a new connection to the server ``options`` names.

    ``ended`` is called (from another thread) when a stdio child's stderr ends; ``idempotent``
    names the tools whose calls may be retried over HTTP; ``on_message`` gets every notification;
    ``callbacks`` answer the server's requests to the client (:class:`.asks.Asks`).
    """
    from mcp import Client
    from mcp_types import Implementation

    from . import __version__

    server: Any
    if options.command is not None:
        from .stdio import bounded_stdio

        # Its own session and process group, and an environment of the declared variables
        # over the SDK's few basics (HOME, LOGNAME, PATH, SHELL, TERM, USER): no host secret.
        stderr = StderrPipe(label, secrets, ended)
        try:
            spawn = bounded_stdio(options.command, env, options.cwd, stderr.writer, max_bytes, label)
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

        from .retry import http_client

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
