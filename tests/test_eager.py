"""Eager tasks: the first step runs before ``eager_task`` returns, as the new task itself."""

from __future__ import annotations

import asyncio
import contextvars
import sys
from typing import Any

import anyio
import pytest

from lorenz.toolcall.eager import eager_task

pytestmark = pytest.mark.anyio

_VAR: contextvars.ContextVar[str] = contextvars.ContextVar("eager_test", default="caller's")


async def test_a_coroutine_that_never_waits_is_done_when_its_task_is_returned() -> None:
    seen: list[Any] = []

    async def quick() -> str:
        seen.append(asyncio.current_task())
        _VAR.set("the task's")
        return "answer"

    caller = asyncio.current_task()
    task = eager_task(quick())
    assert task.done() and task.result() == "answer"
    assert seen == [task]  # it ran as its own task, not as the caller
    assert asyncio.current_task() is caller
    assert _VAR.get() == "caller's"  # the task's context is its own copy


async def test_a_cancel_scope_entered_in_the_first_step_is_left_in_a_later_one() -> None:
    """anyio binds a cancel scope to the task that entered it: entered during the eager step and
    left after a wait, it must be the same task (an HTTP call in a pack does just this)."""

    async def waits() -> str:
        with anyio.fail_after(5):
            await asyncio.sleep(0)
            with anyio.CancelScope():
                await asyncio.sleep(0.01)
        return "done"

    task = eager_task(waits())
    assert not task.done()
    assert await task == "done"


async def test_a_task_that_waits_can_be_cancelled_like_any_other() -> None:
    started = asyncio.Event()

    async def forever() -> None:
        started.set()
        await asyncio.Event().wait()

    task = eager_task(forever())
    assert started.is_set()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_what_the_first_step_raises_is_the_tasks_exception() -> None:
    async def fails() -> None:
        raise ValueError("boom")

    task = eager_task(fails())
    assert task.done()
    with pytest.raises(ValueError, match="boom"):
        task.result()


async def test_eager_tasks_nest() -> None:
    order: list[str] = []

    async def inner() -> str:
        order.append("inner")
        await asyncio.sleep(0)
        return "inner done"

    async def outer() -> str:
        order.append("outer")
        child = eager_task(inner())
        order.append("outer again")
        return await child

    task = eager_task(outer())
    assert order == ["outer", "inner", "outer again"]
    assert await task == "inner done"


async def test_a_task_whose_first_step_is_not_next_in_line_starts_on_the_loops_next_turn() -> None:
    """A task factory that schedules something after the task's first step: that step is left
    where it is, to run on the next turn (on 3.12 the task starts eagerly without the factory)."""
    loop = asyncio.get_running_loop()
    also: list[str] = []

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        loop.call_soon(also.append, "scheduled after the task")
        return task

    async def quick() -> int:
        return 1

    loop.set_task_factory(factory)
    try:
        task = eager_task(quick())
    finally:
        loop.set_task_factory(None)
    if sys.version_info < (3, 12):
        assert not task.done() and also == []
    assert await task == 1
