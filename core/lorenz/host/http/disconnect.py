"""A request's work, cancelled when its client goes away before the answer: with no session, a
dropped connection is how a stateless client cancels. Under the host's own protocol the connection
says so (:data:`~lorenz.host.scope.CANCEL_ON_DISCONNECT`); elsewhere a task watches ``receive``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import anyio
from starlette.types import Message, Receive, Scope

from lorenz.host.scope import CANCEL_ON_DISCONNECT, READ_DEADLINES

__all__ = ["until_disconnect"]


async def until_disconnect(scope: Scope, receive: Receive, work: Callable[[Receive], Awaitable[None]]) -> None:
    """``work(receive)``, cancelled when the client disconnects before it is done. Under the host's
    own HTTP protocol the connection says so; under another server a plain task watches once
    ``work`` has read the whole body (no task group: its ending would format a task's repr for its
    cancel message on every request)."""
    if scope.get("state", {}).get(READ_DEADLINES):  # the host's protocol cancels on a lost connection
        await _cancelled_by_protocol(scope, receive, work)
        return
    body_read: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    async def tracked() -> Message:
        message = await receive()
        if not body_read.done() and (message["type"] != "http.request" or not message.get("more_body", False)):
            body_read.set_result(None)
        return message

    with anyio.CancelScope() as call:

        async def watch() -> None:
            await body_read
            while (await receive())["type"] != "http.disconnect":
                pass
            call.cancel()

        watcher = asyncio.get_running_loop().create_task(watch())
        try:
            await work(tracked)
        finally:
            watcher.cancel()


async def _cancelled_by_protocol(scope: Scope, receive: Receive, work: Callable[[Receive], Awaitable[None]]) -> None:
    """``work(receive)``, its task cancelled when the host's protocol reports the connection lost
    (what a cancel scope around it would do, without making one for every request)."""
    task = asyncio.current_task()
    assert task is not None
    lost = False

    def cancel() -> None:
        nonlocal lost
        if not lost:
            lost = True
            task.cancel()

    scope[CANCEL_ON_DISCONNECT] = cancel
    try:
        await work(receive)
    except asyncio.CancelledError:
        if not lost or task.uncancel() > 0:  # cancelled by someone else too: theirs to handle
            raise
    finally:
        del scope[CANCEL_ON_DISCONNECT]
