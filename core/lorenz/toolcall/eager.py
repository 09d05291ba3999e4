"""Tasks whose first step runs at once, as the task itself, before the caller goes on.

A pack call that answers without waiting costs no turn of the event loop: the task is done when
:func:`eager_task` returns. Python 3.12 builds this in (``eager_start=True``); on 3.11 the new
task's first step is run with the task swapped in as the loop's current one, as 3.12 does.
:func:`start_now` does that for a task someone else just created (uvicorn's, for a request).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from lorenz._internals import callbacks_due, run_as_current, task_of

__all__ = ["eager_task", "start_now"]

T = TypeVar("T")


def eager_task(coro: Coroutine[Any, Any, T], loop: asyncio.AbstractEventLoop | None = None) -> asyncio.Task[T]:
    """``coro`` as a task of the running loop (``loop``, when the caller has it at hand), its
    first step already run."""
    if loop is None:
        loop = asyncio.get_running_loop()
    if sys.version_info >= (3, 12):
        return asyncio.Task(coro, loop=loop, eager_start=True)
    task = loop.create_task(coro)
    start_now(loop, lambda owner: owner is task)
    return task


def start_now(loop: asyncio.AbstractEventLoop, is_new: Callable[[object], bool]) -> bool:
    """Run now the first step of the task just created on ``loop`` (the last callback due), when
    ``is_new`` says its task is the one meant; ``False`` (it starts on the loop's next turn) on
    another loop, a task factory of its own, or anything else scheduled since."""
    ready = callbacks_due(loop)
    step = ready[-1] if ready else None
    owner = task_of(step)
    if ready is None or step is None or owner is None or owner.done() or not is_new(owner):
        return False
    ready.pop()
    run_as_current(loop, step)
    return True
