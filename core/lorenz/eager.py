"""Starting a coroutine at once, as Python 3.12's eager tasks do (``asyncio.Task(eager_start=True)``),
on 3.11 too.

A tool call that never waits (a read served from a cache) then finishes where it was started,
without a task, a loop turn to start it and another to resume its caller. One that waits goes on
as an ordinary task from its first suspension, in the same context: what the host does with it
(the deadline, abandoning it, cancelling it) is unchanged.
"""

from __future__ import annotations

import asyncio
import contextvars
import types
from collections.abc import Coroutine, Generator
from typing import Any, Generic, TypeVar

__all__ = ["Done", "start_eagerly"]

T = TypeVar("T")


class Done(Generic[T]):
    """The result of a coroutine that finished in its first step."""

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value


def start_eagerly(coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop) -> Done[T] | asyncio.Task[T]:
    """Run ``coro`` up to its first suspension now, in a copy of the current context (as a task
    would): :class:`Done` when it finished without suspending, else the task that runs the rest.
    What the first step raises is raised here."""
    context = contextvars.copy_context()
    try:
        awaited = context.run(coro.send, None)
    except StopIteration as stop:
        return Done(stop.value)
    return loop.create_task(_resume(coro, awaited), context=context)


@types.coroutine
def _resume(coro: Coroutine[Any, Any, T], awaited: Any) -> Generator[Any, Any, T]:
    """The rest of ``coro`` as a task's body: what it awaits is handed to the task, and what the
    task sends or throws (a cancellation) is passed on to it."""
    while True:
        try:
            sent = yield awaited
        except BaseException as exc:  # a cancellation, or an error thrown into the task
            try:
                awaited = coro.throw(exc)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            continue
        try:
            awaited = coro.send(sent)
        except StopIteration as stop:
            return stop.value  # type: ignore[no-any-return]
