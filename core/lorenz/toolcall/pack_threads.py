"""The threads a pack's tool calls start, bounded per pack until they actually end.

A thread a timed-out call leaves behind holds one of its pack's ``server.pack_concurrency`` thread
tokens and its call's slot until it returns, so a pack whose threads hang ends up busy, never over
its limit. Every way a pack starts a thread comes here: :func:`lorenz.run_in_thread`, the loop's
default executor (:class:`HostExecutor`) and ``anyio.to_thread`` (:func:`route_anyio_threads`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import functools
import math
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from anyio import CapacityLimiter
from anyio._backends._asyncio import AsyncIOBackend

from lorenz.results import ToolResult

__all__ = ["CURRENT_OWNER", "CallSlot", "HostExecutor", "PackThreads", "ThreadOwner", "route_anyio_threads"]

T = TypeVar("T")

_run_in_worker = AsyncIOBackend.run_sync_in_worker_thread


class CallSlot:
    """One call's hold on its pack's call slot: the call's task and every thread it started each
    hold it; it goes back when the last of them ends. Used on the event loop only."""

    def __init__(self, release: Callable[[], None]) -> None:
        self._release = release
        self._holders = 1  # the call's task
        self.task_ended = False
        #: Threads cut off from the task (it ended, or stopped awaiting them) that then returned,
        #: the tool results among what they returned, and what those that raised raised.
        self.orphans_returned = 0
        self.orphan_results: list[ToolResult] = []
        self.orphan_errors: list[BaseException] = []
        #: The tool result the last thread the task did await returned: a cancel that lands while
        #: that result is on its way back to the task (loop turns after the thread ended) loses it.
        self.last_returned: ToolResult | None = None
        self._when_free: list[Callable[[], None]] = []

    def hold(self) -> None:
        self._holders += 1

    def drop(self) -> None:
        """One holder ended (a hold taken with :meth:`hold`)."""
        self._holders -= 1
        if self._holders == 0:
            self._release()
            for callback in self._when_free:
                callback()

    def end_task(self) -> None:
        self.task_ended = True
        self.drop()

    def end_thread(self, error: BaseException | None, value: Any = None, *, cut_off: bool = False) -> bool:
        """A thread ended, returning ``value`` or raising ``error``; whether it counts as an orphan
        (the task had ended, or was ``cut_off`` from it, before it did)."""
        orphan = self.task_ended or cut_off
        if orphan:
            self.orphan_ended(error, value)
        elif error is None:
            self.last_returned = value if isinstance(value, ToolResult) else None
        self.drop()
        return orphan

    def orphan_ended(self, error: BaseException | None, value: Any = None) -> None:
        """How a thread whose result its task never received ended."""
        if error is not None:
            self.orphan_errors.append(error)
            return
        self.orphans_returned += 1
        if isinstance(value, ToolResult):
            self.orphan_results.append(value)

    def when_free(self, callback: Callable[[], None]) -> None:
        """``callback()`` once the task and all its threads have ended (now, if they have)."""
        if self._holders == 0:
            callback()
        else:
            self._when_free.append(callback)


class PackThreads:
    """A pack's thread tokens (``server.pack_concurrency``), each held until its thread returns."""

    def __init__(self, limit: int) -> None:
        self.tokens = CapacityLimiter(limit)

    async def run(
        self,
        slot: CallSlot | None,
        function: Callable[..., T],
        args: tuple[Any, ...],
        *,
        abandon_on_cancel: bool = True,
        limiter: Any = None,
    ) -> T:
        """``function(*args)`` in an anyio worker thread once a token is free; cancellation
        abandons the thread only if ``abandon_on_cancel``, but its token and ``slot`` stay taken
        until it returns."""
        loop = asyncio.get_running_loop()
        borrower = object()
        await self.tokens.acquire_on_behalf_of(borrower)
        if slot is not None:
            slot.hold()
        lock = threading.Lock()
        state = ["queued"]
        cut_off = [False]  # the awaiting task was cancelled while the thread ran
        ended_as: list[tuple[BaseException | None, Any, bool]] = []  # once its end reached the loop

        def ended(error: BaseException | None, value: Any = None) -> None:
            self.tokens.release_on_behalf_of(borrower)
            counted = slot.end_thread(error, value, cut_off=cut_off[0]) if slot is not None else False
            ended_as.append((error, value, counted))

        def job() -> T:
            with lock:
                if state[0] == "skipped":  # cancelled before it started: already released
                    raise asyncio.CancelledError
                state[0] = "running"
            error: BaseException | None = None
            value: Any = None
            try:
                result = function(*args)
                value = result
                return result
            except BaseException as exc:
                error = exc
                raise
            finally:
                with contextlib.suppress(RuntimeError):  # the loop is closed: nothing left to release
                    loop.call_soon_threadsafe(ended, error, value)

        try:
            return await _run_in_worker(job, (), abandon_on_cancel, limiter or _UNBOUNDED)
        except asyncio.CancelledError:
            # The task stops awaiting a thread that started: whatever the thread does, or did while
            # its result was on its way to the task, the task never sees. Say how it ends.
            with lock:
                started = state[0] == "running"
            if started and slot is not None:
                if not ended_as:
                    cut_off[0] = True
                elif not ended_as[0][2]:
                    slot.orphan_ended(ended_as[0][0], ended_as[0][1])
            raise
        finally:
            with lock:
                skipped = state[0] == "queued"
                if skipped:
                    state[0] = "skipped"
            if skipped:
                ended(None)


#: anyio's own tokens for pack threads: :class:`PackThreads` bounds them, not the shared limiter.
_UNBOUNDED = CapacityLimiter(math.inf)


class ThreadOwner:
    """Whose threads the running code starts: its pack's tokens and its call's slot."""

    __slots__ = ("slot", "threads")

    def __init__(self, threads: PackThreads, slot: CallSlot | None) -> None:
        self.threads = threads
        self.slot = slot

    async def run(self, function: Callable[..., T], args: tuple[Any, ...], **options: Any) -> T:
        return await self.threads.run(self.slot, function, args, **options)


#: The pack call running in this context, if any (set by :class:`lorenz.toolcall.execution.ToolRunner`).
CURRENT_OWNER: contextvars.ContextVar[ThreadOwner | None] = contextvars.ContextVar("lorenz_thread_owner", default=None)


class HostExecutor(concurrent.futures.ThreadPoolExecutor):
    """The loop's default executor: the host's own work runs in this pool; work submitted from a
    pack's call runs on that pack's threads instead, so it cannot take the host's."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> concurrent.futures.Future[T]:
        owner = CURRENT_OWNER.get()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if owner is None or loop is None:
            return super().submit(fn, *args, **kwargs)
        out: concurrent.futures.Future[T] = concurrent.futures.Future()
        task = loop.create_task(owner.run(functools.partial(fn, *args, **kwargs), ()))

        def settle(done: asyncio.Task[T]) -> None:
            if out.cancelled():
                return
            if done.cancelled():
                out.cancel()
            elif (error := done.exception()) is not None:
                out.set_exception(error)
            else:
                out.set_result(done.result())

        task.add_done_callback(settle)
        # The waiter gave up (asyncio cancels the concurrent future): abandon the thread.
        out.add_done_callback(lambda f: f.cancelled() and loop.call_soon_threadsafe(task.cancel))
        return out


async def _routed_run_sync(
    cls: type[AsyncIOBackend],
    func: Callable[..., T],
    args: tuple[Any, ...],
    abandon_on_cancel: bool = False,
    limiter: Any = None,
) -> T:
    owner = CURRENT_OWNER.get()
    if owner is None:
        return await _run_in_worker(func, args, abandon_on_cancel, limiter)
    return await owner.run(func, args, abandon_on_cancel=abandon_on_cancel, limiter=limiter)


def route_anyio_threads() -> None:
    """Make ``anyio.to_thread.run_sync`` from a pack's call use that pack's threads (anyio picks
    its limiter and worker inside its backend, which has no per-caller hook)."""
    AsyncIOBackend.run_sync_in_worker_thread = classmethod(_routed_run_sync)  # type: ignore[assignment,method-assign]
