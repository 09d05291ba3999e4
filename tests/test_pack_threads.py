"""A pack's threads: bounded by its own limit until they end, whichever way it starts them; a call
whose client left is recorded as it really ended; whatever a tool raises is a failure result."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest

from lorenz import Settings, ToolContext, ToolResult, run_in_thread, tool_failure, tool_success
from lorenz.calllog.writer import CallRecord
from lorenz.host.ops.watchdog import size_thread_pools
from lorenz.toolcall.execution import AnswersByDeadline, CallOutcome, ClientGone, ToolRunner

pytestmark = pytest.mark.anyio


class Pack:
    def __init__(self, name: str, behaviour: Callable[[], Awaitable[ToolResult]]) -> None:
        self.name = name
        self.behaviour = behaviour

    async def execute_tool(self, name: str, input: Any, context: Any) -> ToolResult:
        return await self.behaviour()


async def _run(runner: ToolRunner, pack: Pack, **options: Any) -> CallOutcome:
    context = ToolContext(settings=Settings(), http=httpx.AsyncClient())
    options.setdefault("time_limit", 0.2)
    options.setdefault("concurrency", 2)
    return await runner.run(pack, "go", {}, context, **options)  # type: ignore[arg-type]


def _in_thread(how: str, function: Callable[[], Any]) -> Awaitable[Any]:
    if how == "run_in_thread":
        return run_in_thread(function)
    if how == "asyncio.to_thread":
        return asyncio.to_thread(function)
    if how == "run_in_executor":
        return asyncio.get_running_loop().run_in_executor(None, function)
    return anyio.to_thread.run_sync(function, abandon_on_cancel=True)


@pytest.mark.parametrize("how", ["run_in_thread", "asyncio.to_thread", "run_in_executor", "anyio.to_thread"])
async def test_hung_threads_keep_their_slots_until_they_end(how: str) -> None:
    """Each hung thread keeps its call's slot: the pack turns busy with no more threads than its
    limit, the host's own threads stay free, and the slots come back when the threads end."""
    size_thread_pools(asyncio.get_running_loop())
    release = threading.Event()
    started: list[int] = []

    def hang() -> None:
        started.append(1)
        release.wait(30)

    async def hangs() -> ToolResult:
        await _in_thread(how, hang)
        return tool_success({"done": True})

    runner, pack = ToolRunner(), Pack("hangs", hangs)
    try:
        outcomes = [await _run(runner, pack) for _ in range(4)]
        assert [o.kind for o in outcomes] == ["timeout", "timeout", "rejected", "rejected"]
        assert outcomes[-1].result.error is not None
        assert outcomes[-1].result.error.startswith("pack hangs is busy: all 2 of its call slots")
        assert len(started) == 2
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, lambda: "host") == "host"  # the host's pool is its own
    finally:
        release.set()
    # It waits for a slot, which comes back once a thread has ended.
    assert (await _run(runner, pack, time_limit=5)).result.result == {"done": True}


class InCallersTask(Pack, AnswersByDeadline):
    """A pack the runner runs in the caller's own task (as in an isolated pack's process)."""


@pytest.mark.parametrize("kind", [Pack, InCallersTask])
async def test_a_call_whose_client_left_is_reported_as_it_really_ended(kind: type[Pack]) -> None:
    """The client leaves while the pack's thread is writing: the write completes, and the call is
    reported a success once it has, not ``cancelled`` (whether the call ran in a task of its own or
    in its caller's)."""
    started, gate, written = threading.Event(), threading.Event(), threading.Event()

    def write() -> None:
        started.set()
        gate.wait(10)
        written.set()

    async def comments() -> ToolResult:
        await run_in_thread(write)
        return tool_success()

    reported: list[CallOutcome] = []
    told = anyio.Event()
    left = ClientGone(lambda outcome: (reported.append(outcome), told.set()))
    runner = ToolRunner()
    async with anyio.create_task_group() as group:

        async def leave_once_writing() -> None:  # the client leaves while the thread writes
            await anyio.to_thread.run_sync(started.wait, 10)
            group.cancel_scope.cancel()

        group.start_soon(leave_once_writing)
        await _run(runner, kind("local", comments), time_limit=5, when_left=left)
    assert left.following and reported == []  # not before the work has ended
    gate.set()
    with anyio.fail_after(5):
        await told.wait()
    assert written.is_set()
    assert [o.kind for o in reported] == ["success"]
    assert runner.in_flight("local") == 0


async def _cancelled_as_the_thread_returns(returns: Any, monkeypatch: pytest.MonkeyPatch) -> list[CallOutcome]:
    """A pack whose thread does its work, then has the call's caller cancelled as it returns: the
    cancel reaches the loop before the thread's end does (a dropped connection landing as a write
    completes). What the client-left report says.

    The loop is held until the thread's end is queued behind the cancel, so the order is certain."""
    loop = asyncio.get_running_loop()
    wrote, queued = threading.Event(), threading.Event()
    worker: list[threading.Thread] = []
    from_worker = [0]
    queue_soon = loop.call_soon_threadsafe

    def counting(callback: Any, *args: Any, **kwargs: Any) -> asyncio.Handle:
        handle = queue_soon(callback, *args, **kwargs)
        if worker and threading.current_thread() is worker[0]:
            from_worker[0] += 1
            if from_worker[0] == 3:  # the hold, the cancel, then the thread's end
                queued.set()
        return handle

    monkeypatch.setattr(loop, "call_soon_threadsafe", counting)
    caller: asyncio.Future[CallOutcome] | None = None

    def write() -> Any:
        wrote.set()
        worker.append(threading.current_thread())
        assert caller is not None
        loop.call_soon_threadsafe(queued.wait, 5)  # holds the loop
        loop.call_soon_threadsafe(caller.cancel)
        return returns

    async def comments() -> ToolResult:
        result = await run_in_thread(write)
        return result if isinstance(result, ToolResult) else tool_success()

    reported: list[CallOutcome] = []
    told = asyncio.Event()
    left = ClientGone(lambda outcome: (reported.append(outcome), told.set()))
    runner = ToolRunner()
    caller = asyncio.ensure_future(_run(runner, Pack("local", comments), time_limit=5, when_left=left))
    with pytest.raises(asyncio.CancelledError):
        await caller
    async with asyncio.timeout(5):
        await told.wait()
    monkeypatch.undo()
    assert wrote.is_set() and queued.is_set() and left.following
    assert runner.in_flight("local") == 0
    return reported


@pytest.mark.parametrize(
    ("returns", "kind"),
    [
        (tool_success({"comment": "added"}), "success"),
        (tool_failure("board issue BOARD-9 not found"), "failure"),
        (None, "success"),
    ],
)
async def test_a_call_cancelled_as_its_thread_returns_is_reported_as_it_ended(
    returns: Any, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The work completed before the cancel took effect: the call is reported as it ended (with
    the tool result the thread returned, if it did), never ``cancelled``."""
    [outcome] = await _cancelled_as_the_thread_returns(returns, monkeypatch)
    assert outcome.kind == kind
    assert outcome.result == (returns if returns is not None else tool_success())


async def test_a_call_cancelled_before_its_work_finished_is_reported_cancelled() -> None:
    async def waits() -> ToolResult:
        await anyio.sleep_forever()
        raise AssertionError

    reported: list[CallOutcome] = []
    told = anyio.Event()
    left = ClientGone(lambda outcome: (reported.append(outcome), told.set()))
    with anyio.move_on_after(0.1):
        await _run(ToolRunner(), Pack("slow", waits), time_limit=5, when_left=left)
    with anyio.fail_after(5):
        await told.wait()
    assert [o.kind for o in reported] == ["cancelled"]


def test_the_call_log_marks_calls_whose_client_left() -> None:
    common: dict[str, Any] = {"ts": "t", "tool": "go", "pack": "p", "distribution": None, "duration_ms": 1.0}
    assert CallRecord(outcome="success", client_gone=True, **common).to_json()["clientGone"] is True
    assert "clientGone" not in CallRecord(outcome="success", **common).to_json()


class Custom(BaseException):
    pass


@pytest.mark.parametrize(
    "exc",
    [GeneratorExit(), Custom("odd"), BaseExceptionGroup("many", [KeyboardInterrupt()]), asyncio.CancelledError()],
)
async def test_any_base_exception_a_tool_raises_is_a_failure(exc: BaseException) -> None:
    async def raises() -> ToolResult:
        raise exc

    outcome = await _run(ToolRunner(), Pack("rude", raises), time_limit=5)
    assert outcome.kind == "crash"
    assert outcome.result.error is not None
    assert outcome.result.error.startswith(f"pack rude: execute_tool raised {type(exc).__name__}")
