"""A 2026-07-28 client answers what an upstream asks of it by retrying the tool call: the upstream's
call is kept waiting here, in this process, keyed by a nonce in the ``requestState`` the host seals;
the call answers ``input_required`` with the upstream's request, and the retry hands the client's
answer to the upstream and waits for its next request or its result.

A suspended call waits at most its lifetime (the sealed state's, bounded by
``server.tool_timeout_seconds``) for the retry, and is cancelled upstream when none comes. A retry
that reaches another worker or process finds nothing pending, and is told so.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import secrets
from collections.abc import Mapping
from typing import Any

import attrs

from lorenz import InputRequired, ToolContext, tool_failure

from .upstream import Upstream

__all__ = ["STATE_PREFIX", "Suspended"]

#: What begins the ``requestState`` this module mints (then the nonce).
STATE_PREFIX = "lorenz-mcp/1:"
#: The most a suspended call waits for its retry: the lifetime of a sealed ``requestState``.
STATE_TTL_SECONDS = 600.0
#: The name of the one request of each round.
REQUEST = "upstream"


@attrs.define
class _Call:
    """One upstream call across its rounds."""

    task: asyncio.Task[Any] | None = None
    questions: asyncio.Queue[tuple[Mapping[str, Any], concurrent.futures.Future[Any]]] = attrs.field(
        factory=asyncio.Queue
    )
    answer: concurrent.futures.Future[Any] | None = None
    progress: Any = None
    expiry: asyncio.TimerHandle | None = None

    log: Any = None

    async def relay(self, done: float, total: float | None, message: str | None) -> None:
        """Progress, to the round's own request."""
        if self.progress is not None:
            await self.progress(done, total, message)

    async def relay_log(self, level: str, text: str) -> None:
        """A log message, to the round's own request."""
        if self.log is not None:
            await self.log(level, text)


class Suspended:
    """The upstream calls of one pack waiting for their clients' retries (see the module docstring)."""

    def __init__(self) -> None:
        self._pending: dict[str, _Call] = {}

    async def call(self, upstream: Upstream, name: str, arguments: Mapping[str, Any], context: ToolContext) -> Any:
        """The upstream's ``CallToolResult``, an ``InputRequired`` round, or a failed ``ToolResult``."""
        client = context.client_input
        if client is None or client.mode != "retry":
            return await upstream.call(
                name, arguments, context.progress, client, log=context.log, level=context.log_level
            )
        loop = asyncio.get_running_loop()
        if client.state is None:
            if client.responses:
                return tool_failure(f"{name} got input responses without the requestState they answer")
            call = _Call()

            def suspend(request: Mapping[str, Any]) -> concurrent.futures.Future[Any]:
                answer: concurrent.futures.Future[Any] = concurrent.futures.Future()
                loop.call_soon_threadsafe(call.questions.put_nowait, (request, answer))
                return answer

            work = upstream.call(
                name, arguments, call.relay, client, suspend, log=call.relay_log, level=context.log_level
            )
            call.task = loop.create_task(work)
        else:
            nonce = client.state.removeprefix(STATE_PREFIX)
            found = self._pending.pop(nonce, None) if client.state.startswith(STATE_PREFIX) else None
            if found is None:
                return tool_failure(
                    f"the call of {name} this retry answers is no longer waiting here: it ended, waited "
                    "longer than it may, or was started in another worker or process (an upstream's call "
                    "waits in the process that began it); call the tool again without requestState",
                    reason="invalid_request_state",
                )
            call = found
            if call.expiry is not None:
                call.expiry.cancel()
            answer = (client.responses or {}).get(REQUEST)
            assert call.answer is not None
            if answer is None:
                call.answer.set_exception(RuntimeError(f"the client retried without an answer to {REQUEST!r}"))
            else:
                call.answer.set_result(answer)
        call.progress, call.log = context.progress, context.log
        lifetime = min(STATE_TTL_SECONDS, context.settings.server.tool_timeout_seconds)
        return await self._next(call, lifetime)

    async def _next(self, call: _Call, lifetime: float) -> Any:
        """Wait for the upstream's next request (answered ``input_required``) or its result."""
        assert call.task is not None
        asked = asyncio.ensure_future(call.questions.get())
        try:
            await asyncio.wait({call.task, asked}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the round itself ended (the host's timeout): so does the call
            asked.cancel()
            call.task.cancel()
            raise
        if call.task.done():  # its result, even when a last question came with it: moot now
            if asked.done():
                asked.result()[1].cancel()
            asked.cancel()
            return call.task.result()
        request, call.answer = asked.result()
        nonce = secrets.token_urlsafe(18)
        self._pending[nonce] = call
        call.progress = call.log = None
        call.expiry = asyncio.get_running_loop().call_later(lifetime, self._expire, nonce)
        return InputRequired(requests={REQUEST: dict(request)}, state=STATE_PREFIX + nonce)

    def _expire(self, nonce: str) -> None:
        call = self._pending.pop(nonce, None)
        if call is None:
            return
        answer, task = call.answer, call.task
        if task is None:
            return
        # The upstream hears of the cancellation first; its question is dropped once its call ended.
        task.cancel()
        if answer is not None:
            task.add_done_callback(lambda _: answer.cancel())

    def close(self) -> None:
        """Cancel every call still waiting for its retry."""
        for nonce in list(self._pending):
            with contextlib.suppress(RuntimeError):  # its loop is gone
                self._expire(nonce)
