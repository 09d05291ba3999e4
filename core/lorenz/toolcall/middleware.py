"""The call-middleware chain: built once per workflow from ``server.middleware``, run per call.

:func:`lorenz.toolcall.extensions.build_extensions` asks each named provider for its middleware
(validating its options); :func:`run_chain` runs a call through the layers in the order the
workflow lists them, the first outermost. A layer that raises, returns something other than a
result, or spends more than its budget of its own time (the time inside ``call_next`` does not
count) answers as an ``isError`` failure naming it, never a crash of the host. With no middleware
configured the host does not come here at all.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from attrs import frozen

from lorenz.contracts import Caller
from lorenz.extensions import Listing
from lorenz.middleware import Call, Middleware
from lorenz.plugins.containment import PluginError, call_plugin
from lorenz.redact import redact_text
from lorenz.results import ToolResult, error_message, failure_result

__all__ = ["CallOrigin", "Layer", "close_layers", "layer_health", "run_chain"]

#: How long one middleware's ``aclose()`` may take when the host stops.
CLOSE_SECONDS = 5.0

logger = logging.getLogger("lorenz.host")


@frozen
class Layer:
    """One configured middleware, under the name the workflow gave it."""

    name: str
    middleware: Middleware


@frozen
class CallOrigin:
    """Who calls and how, as the caller of :func:`lorenz.toolcall.call.call_tool` knows it
    (in-process and anonymous unless it says)."""

    token_name: str | None = None
    caller: Caller | None = None
    transport: str = "in-process"
    protocol: str | None = None

    def listing(self) -> Listing:
        """Who lists the catalog, for the workflow's catalog shapers."""
        return Listing(token_name=self.token_name, caller=self.caller, transport=self.transport, protocol=self.protocol)

    def call(self, tool: str, pack: str, arguments: Any) -> Call:
        return Call(
            tool=tool,
            pack=pack,
            arguments=arguments,
            token_name=self.token_name,
            caller=self.caller,
            transport=self.transport,
            protocol=self.protocol,
        )


def layer_health(layers: tuple[Layer, ...]) -> dict[str, Any]:
    """``{name: what its optional health() says}`` for ``/healthz``; a health() that raises or
    returns something else reads as ``{"error": …}``."""
    found: dict[str, Any] = {}
    for layer in layers:
        health = getattr(layer.middleware, "health", None)
        if not callable(health):
            continue
        try:
            said = call_plugin(f"middleware {layer.name}", "health", health)
        except PluginError as exc:
            said = {"error": str(exc)}
        found[layer.name] = dict(said) if isinstance(said, Mapping) else {"error": "health() did not return a mapping"}
    return found


async def close_layers(layers: tuple[Layer, ...]) -> None:
    """Await each layer's optional ``aclose()`` as the host stops, each bounded in time; what one
    raises is logged, never stops the host."""
    for layer in layers:
        close = getattr(layer.middleware, "aclose", None)
        if not callable(close):
            continue
        try:
            async with asyncio.timeout(CLOSE_SECONDS):
                await close()
        except Exception as exc:
            logger.warning("lorenz: middleware %s: aclose() failed: %s", layer.name, error_message(exc))


Terminal = Callable[[Call], Awaitable[ToolResult]]


async def run_chain(
    layers: tuple[Layer, ...], call: Call, terminal: Terminal, *, budget: float, secrets: Iterable[str] = ()
) -> ToolResult:
    """``call`` through ``layers`` to ``terminal``; never raises but for this task's cancellation.

    ``budget`` bounds the layers' own time (before ``call_next`` and after it, each), not the
    tool's, which has its own timeout."""
    loop = asyncio.get_running_loop()
    limit = asyncio.timeout_at(loop.time() + budget)
    running = [""]  # the layer whose code runs now, to name it when the budget runs out

    async def inner(index: int, current: Call) -> ToolResult:
        if index == len(layers):
            limit.reschedule(None)
            try:
                return await terminal(current)
            finally:
                limit.reschedule(loop.time() + budget)
        layer = layers[index]

        async def call_next(passed: Call) -> ToolResult:
            if not isinstance(passed, Call):
                passed = current  # a middleware passing something else: the call as it got it
            result = await inner(index + 1, _same_tool(passed, current))
            running[0] = layer.name
            return result

        running[0] = layer.name
        try:
            result = await layer.middleware(current, call_next)
        except Exception as exc:
            text = redact_text(error_message(exc), secrets)
            logger.warning("lorenz: middleware %s raised on tool %s: %s", layer.name, call.tool, text)
            return _middleware_failure(layer.name, f"raised: {text}")
        if not isinstance(result, ToolResult):
            return _middleware_failure(layer.name, f"returned {type(result).__name__}, not a ToolResult")
        return result

    try:
        async with limit:
            return await inner(0, call)
    except TimeoutError:
        if not limit.expired():
            raise
    logger.warning("lorenz: middleware %s did not answer within %g s on tool %s", running[0], budget, call.tool)
    return _middleware_failure(running[0], f"did not answer within {budget:g} s")


def _same_tool(passed: Call, original: Call) -> Call:
    """What a middleware passes on may change the arguments only: the tool, pack and caller are
    the host's (a middleware cannot turn a call into one of another tool or caller)."""
    if passed is original:
        return passed
    arguments: Mapping[str, Any] = passed.arguments
    return original.with_arguments(arguments)


def _middleware_failure(name: str, what: str) -> ToolResult:
    return failure_result(
        f"middleware {name} {what}",
        reason="middleware_failed",
        recovery="this is a fault in the server's configuration, not in the call; tell the server's operator",
    )
