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
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from attrs import field, frozen

__all__ = ["Asks", "Suspend"]

#: Hands a 2026-07-28 call's request to its client (an ``input_required`` round): the answer to come.
Suspend = Callable[[Mapping[str, Any]], "concurrent.futures.Future[Any]"]

_WHAT = {"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}


@frozen
class _Call:
    tool: str
    client_input: Any  # lorenz's ClientInput, or None
    loop: asyncio.AbstractEventLoop
    suspend: Suspend | None
    #: Why each of its requests was declined.
    declined: list[str] = field(factory=list)


class Asks:
    """The calls in flight on one upstream, and the SDK client callbacks that route its requests."""

    def __init__(self, describe: str) -> None:
        self._describe = describe
        self._calls: dict[int, _Call] = {}
        self._ids = itertools.count()

    @contextlib.contextmanager
    def calling(self, tool: str, client_input: Any, suspend: Suspend | None = None) -> Iterator[list[str]]:
        """While a call of ``tool`` is in flight (entered on the caller's loop): why each of the
        upstream's requests meanwhile was declined."""
        key = next(self._ids)
        call = self._calls[key] = _Call(tool, client_input, asyncio.get_running_loop(), suspend)
        try:
            yield call.declined
        finally:
            del self._calls[key]

    def callbacks(self) -> dict[str, Any]:
        """The SDK ``Client``'s callbacks (so it declares sampling, elicitation and roots)."""
        return {
            "sampling_callback": self._sampling,
            "elicitation_callback": self._elicitation,
            "list_roots_callback": self._roots,
        }

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
