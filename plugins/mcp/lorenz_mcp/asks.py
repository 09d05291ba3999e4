"""What an upstream MCP server asks the client — sampling (``sampling/createMessage``), elicitation
(form and URL, ``elicitation/create``) and roots (``roots/list``) — routed to the tool call in flight
that it belongs to and asked of that call's client through ``ToolContext.client_input``: at once
(handshake era, over stdio or a stateful HTTP session), or by suspending the upstream's call while a
2026-07-28 client answers an ``input_required`` round (:mod:`.suspend`).

The SDK client's callbacks run on the upstream's loop; the client is asked on the caller's. An
upstream's request does not say which of its calls it belongs to (over stdio nothing on the wire
does), so it goes to the one call in flight: while several are, or none, or the call's client cannot
answer (a stateless handshake-era HTTP client), the upstream's request is declined with an error
naming why, and its call goes on to its end; so is one the call's client did not declare it can answer
(a client's SDK fails the whole call on a request it cannot answer).

The upstream's log messages (``notifications/message``) go the same way, redacted: to the client of
the one call in flight when it asked for messages at that level; any other goes to the host's log.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
import json
import logging
from collections.abc import Callable, Coroutine, Iterator, Mapping
from typing import Any

from attrs import field, frozen

__all__ = ["LEVELS", "Asks", "Log", "Suspend"]

logger = logging.getLogger("lorenz_mcp")

#: Hands a 2026-07-28 call's request to its client (an ``input_required`` round): the answer to come.
Suspend = Callable[[Mapping[str, Any]], "concurrent.futures.Future[Any]"]

_WHAT = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}


#: Hands one of the upstream's log messages to a call's client: ``(level, text)``.
Log = Callable[[str, str], Coroutine[Any, Any, None]]
#: The MCP log levels, least severe first.
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@frozen
class _Call:
    tool: str
    client_input: Any  # lorenz's ClientInput, or None
    loop: asyncio.AbstractEventLoop
    suspend: Suspend | None
    log: Log | None = None
    #: The least severe level its client asked log messages at (``None``: none).
    level: str | None = None
    #: Why each of its requests was declined.
    declined: list[str] = field(factory=list)
    #: Its log messages on their way to its client.
    relayed: list[concurrent.futures.Future[None]] = field(factory=list)


class Asks:
    """The calls in flight on one upstream, and the SDK client callbacks that route its requests."""

    def __init__(self, describe: str, redact: Callable[[str], str] = str) -> None:
        self._describe = describe
        self._redact = redact
        self._calls: dict[int, _Call] = {}
        self._ids = itertools.count()

    @contextlib.contextmanager
    def calling(
        self,
        tool: str,
        client_input: Any,
        suspend: Suspend | None = None,
        log: Log | None = None,
        level: str | None = None,
    ) -> Iterator[_Call]:
        """While a call of ``tool`` is in flight (entered on the caller's loop): the call, noting why
        each of the upstream's requests meanwhile was declined, and its log messages relayed to
        ``log`` (to be awaited before its result is handed on)."""
        key = next(self._ids)
        wanted = level if log is not None and level in LEVELS else None
        call = self._calls[key] = _Call(tool, client_input, asyncio.get_running_loop(), suspend, log, wanted)
        try:
            yield call
        finally:
            del self._calls[key]

    def level(self) -> str | None:
        """The least severe level a call in flight asked log messages at (``None``: none did)."""
        levels = [LEVELS.index(call.level) for call in self._calls.values() if call.level is not None]
        return LEVELS[min(levels)] if levels else None

    def callbacks(self) -> dict[str, Any]:
        """The SDK ``Client``'s callbacks (so it declares sampling, elicitation and roots, and hears
        the upstream's log messages)."""
        return {
            "sampling_callback": self._sampling,
            "elicitation_callback": self._elicitation,
            "list_roots_callback": self._roots,
            "logging_callback": self._log,
        }

    async def _log(self, params: Any) -> None:
        """A log message, to the client of the one call in flight, if it asked for that level; any
        other is the host's to log (it cannot say whose it is)."""
        data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
        text = self._redact(f"{params.logger}: {data}" if params.logger else data)
        calls = list(self._calls.values())
        call = calls[0] if len(calls) == 1 else None
        if call is None or call.log is None or call.level is None:
            logger.debug("MCP server %s logged (%s) %s", self._describe, params.level, text)
            return
        if params.level in LEVELS and LEVELS.index(params.level) >= LEVELS.index(call.level):
            call.relayed.append(asyncio.run_coroutine_threadsafe(call.log(params.level, text), call.loop))

    async def _sampling(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        result = types.CreateMessageResultWithTools if params.tools else types.CreateMessageResult
        return await self._forward("sampling/createMessage", _wire(params), result)

    async def _elicitation(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        return await self._forward("elicitation/create", _wire(params), types.ElicitResult)

    async def _roots(self, context: Any) -> Any:
        import mcp_types as types

        return await self._forward("roots/list", None, types.ListRootsResult)

    async def _forward(self, method: str, params: dict[str, Any] | None, result: type[Any]) -> Any:
        """The client's answer to the upstream's request, or the ``ErrorData`` that declines it."""
        import mcp_types as types

        calls = list(self._calls.values())
        what = f"MCP server {self._describe} asked the client for {_WHAT[method]} ({method})"
        if len(calls) != 1:
            why = "while no tool call of it was in flight" if not calls else f"while {len(calls)} tool calls of it "
            why += "were in flight, and its request does not say which one it belongs to" if calls else ""
            return _declined(f"{what} {why}", calls)
        call = calls[0]
        client = call.client_input
        mode = getattr(client, "mode", None)
        if client is None or mode not in ("ask", "retry") or (mode == "ask" and client.ask is None):
            why = getattr(client, "refusal", None) or "this call has no client to ask"
            return _declined(f"{what} during {call.tool}, but {why}", calls)
        request = {"method": method, **({"params": params} if params is not None else {})}
        missing = client.undeclared(request)
        if missing is not None:  # its SDK would fail the whole call rather than answer
            why = f"this client did not declare the {missing} capability"
            return _declined(f"{what} during {call.tool}, but {why}", calls)
        if mode == "retry":
            if call.suspend is None:
                return _declined(f"{what} during {call.tool}, but this call cannot be suspended", calls)
            future = call.suspend(request)
        else:
            future = asyncio.run_coroutine_threadsafe(_ask(client.ask, request), call.loop)
        try:
            answer = await asyncio.wrap_future(future)
        except (asyncio.CancelledError, concurrent.futures.CancelledError):
            task = asyncio.current_task()
            if not future.cancelled() or (task is not None and task.cancelling()):
                future.cancel()
                raise
            return _declined(f"{what} during {call.tool}, which ended before the client answered", calls)
        except Exception as exc:
            while isinstance(exc, ExceptionGroup) and exc.exceptions:
                exc = exc.exceptions[0]
            message = getattr(getattr(exc, "error", None), "message", None) or str(exc) or type(exc).__name__
            return _declined(f"{what} during {call.tool}, and the client answered with an error: {message}", calls)
        try:
            return result.model_validate(answer)
        except Exception:
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"{what}: the client's answer is not valid MCP")


async def _ask(ask: Any, request: Mapping[str, Any]) -> Any:
    answers = await ask({"upstream": request})
    return answers["upstream"]


def _wire(params: Any) -> dict[str, Any]:
    wire: dict[str, Any] = params.model_dump(by_alias=True, mode="json", exclude_none=True)
    return wire


def _declined(message: str, calls: list[_Call]) -> Any:
    """The error the upstream gets, recorded on each call in flight (whose client is told it)."""
    import mcp_types as types

    for call in calls:
        call.declined.append(message)
    return types.ErrorData(code=types.INVALID_REQUEST, message=message)
