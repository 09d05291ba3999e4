"""Running plugin code's tool calls: contained, bounded in time, and bounded per pack.

:func:`call_pack` awaits one ``execute_tool`` and turns whatever it raises into a failure naming
the pack. :class:`ToolRunner`, which the host uses, runs each call as a task of its own under the
pack's capacity limiter and answers at the tool timeout even when the pack is stuck where
cancellation cannot reach; the stuck call keeps its slot until it and its threads return
(:mod:`lorenz.toolcall.pack_threads`), so a pack whose calls hang delays only itself.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.to_thread
from anyio import CapacityLimiter
from attrs import field, frozen

from lorenz.contracts import send_progress
from lorenz.plugins.containment import PluginError, contain
from lorenz.redact import redact_text
from lorenz.results import ToolResult, error_message, tool_failure, tool_success

from .eager import eager_task
from .pack_threads import CURRENT_OWNER, CallSlot, PackThreads, ThreadOwner

if TYPE_CHECKING:
    from lorenz.contracts import ProgressSink, ToolContext, ToolProvider

__all__ = [
    "AnswersByDeadline",
    "CallOutcome",
    "ClientGone",
    "ToolRunner",
    "call_pack",
    "carry_on",
    "failure_from_exception",
    "report_progress",
    "run_in_thread",
    "time_left",
]

logger = logging.getLogger("lorenz.host")

T = TypeVar("T")


@frozen
class CallOutcome:
    """A call's result and how it ended: ``success``, ``failure`` (the pack said so), ``crash`` (the
    pack raised), ``timeout``, ``rejected`` (refused before it ran: busy, bad arguments, limits)."""

    result: ToolResult
    kind: str


class AnswersByDeadline:
    """A pack the core runs in a process of its own (an isolated pack's proxy, and the pack inside
    that process): a call is answered by its deadline at the latest (the host kills the process
    then), so the runner need not run it as a task to abandon. A type, not a flag: a plugin's pack
    cannot opt out of being contained."""


@frozen
class _PackCall:
    pack: str
    tool: str
    owner: ThreadOwner
    #: When the tool timeout answers this call (the event loop's clock).
    deadline: float
    progress: ProgressSink | None = None
    #: How the call ends where its work goes on after it was cancelled (:func:`carry_on`).
    elsewhere: list[asyncio.Future[CallOutcome]] = field(factory=list)


_CURRENT: contextvars.ContextVar[_PackCall | None] = contextvars.ContextVar("lorenz_pack_call", default=None)


def failure_from_exception(exc: BaseException, context: ToolContext | None) -> ToolResult:
    """The failure result for a pack that raised: its message with the workflow's secrets and
    credential-looking fragments redacted, since it goes to the agent.

    An ordinary exception reads as its bare message (packs raise to fail); what no tool should
    raise (``SystemExit``, ``KeyboardInterrupt``, its own ``CancelledError``, ``MemoryError``)
    reads ``pack acme: execute_tool raised SystemExit: 3``.
    """
    settings = getattr(context, "settings", None)
    secrets = getattr(settings, "secrets", None) or ()
    original = exc.original if isinstance(exc, PluginError) else exc
    plain = isinstance(original, Exception) and not isinstance(original, MemoryError)
    text = error_message(original) if plain else str(exc)
    # No absolute path outside the workflow directory either: a third-party pack's OSError names them.
    return tool_failure(redact_text(text, secrets, base_dir=getattr(settings, "base_dir", None)))


def _cancelled_by_caller(exc: BaseException) -> bool:
    """Whether ``exc`` is the cancellation of the task running it (a timeout, a client's cancel),
    which must propagate, rather than a ``CancelledError`` the pack raised of its own."""
    if not isinstance(exc, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def call_pack(pack: ToolProvider, name: str, arguments: Any, context: ToolContext) -> ToolResult:
    """``await pack.execute_tool(...)`` in-line; never raises except for a real host signal or the
    caller's own cancellation."""
    return (await _call_pack(pack, name, arguments, context)).result


async def _call_pack(pack: ToolProvider, name: str, arguments: Any, context: ToolContext) -> CallOutcome:
    running = asyncio.current_task()
    try:
        result = await pack.execute_tool(name, arguments, context)
    except BaseException as exc:
        # A GeneratorExit is Python closing this coroutine (from outside any step of its task),
        # which must propagate; one the pack raises in a step of its own is a crash like any other.
        own_exit = isinstance(exc, GeneratorExit) and running is not None and asyncio.current_task() is running
        if not (own_exit or contain(exc)) or _cancelled_by_caller(exc):
            raise
        crashed = PluginError(f"pack {pack.name}", "execute_tool", exc)
        return CallOutcome(failure_from_exception(crashed, context), "crash")
    if not isinstance(result, ToolResult):
        return CallOutcome(tool_failure(f"tool {name} returned {type(result).__name__}, not a ToolResult"), "crash")
    return CallOutcome(result, "success" if result.success else "failure")


async def report_progress(done: float, total: float | None = None, message: str | None = None) -> None:
    """:meth:`ToolContext.progress <lorenz.ToolContext.progress>` for code deep inside a tool call that
    has no context at hand (a client's paging loop): reports on behalf of the call running it, and
    does nothing outside a tool call."""
    call = _CURRENT.get()
    if call is not None:
        await send_progress(call.progress, done, total, message)


async def run_in_thread(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` in a worker thread, counted against the calling pack's own thread limit
    (the process-wide pool outside a tool call). Cancellation (the tool timeout) does not wait for
    the thread, but a thread that never returns keeps its pack's thread token and its call's slot:
    it costs its pack, not the host."""
    owner = CURRENT_OWNER.get()
    if owner is None:
        return await anyio.to_thread.run_sync(function, *args, abandon_on_cancel=True)
    return await owner.run(function, args)


def carry_on(outcome: asyncio.Future[CallOutcome]) -> None:
    """Said by a pack whose calls run elsewhere (an isolated pack's process) as its call is
    cancelled: the work goes on there, and ``outcome`` (a future of this loop) is how it ends. The
    call keeps its slot until then, and a caller that left is told that outcome, not ``cancelled``.
    Does nothing outside :class:`ToolRunner`."""
    call = _CURRENT.get()
    if call is None:
        return
    call.elsewhere.append(outcome)
    slot = call.owner.slot
    if slot is not None:
        slot.hold()
        outcome.add_done_callback(lambda _: slot.drop())


def time_left() -> float | None:
    """Seconds until the tool timeout answers the running call (``None`` outside
    :class:`ToolRunner`): an isolated pack's process is killed at that moment."""
    call = _CURRENT.get()
    return None if call is None else call.deadline - asyncio.get_running_loop().time()


class ClientGone:
    """What to do with a call whose caller stopped waiting (a dropped connection, a cancel):
    :meth:`ToolRunner.run` calls ``report`` with how the call really ended, once its task and
    threads have, in the caller's context. ``following`` says it will."""

    def __init__(self, report: Callable[[CallOutcome], None]) -> None:
        self.report = report
        self.following = False

    def follow(self, task: asyncio.Task[CallOutcome] | None, call: _PackCall) -> None:
        """Report how ``call`` ends, run by ``task`` (``None``: in the caller's own task)."""
        self.following = True
        context = contextvars.copy_context()
        slot = call.owner.slot
        if slot is not None:
            slot.when_free(lambda: context.run(self.report, _after_caller_left(task, slot, call)))


def _after_caller_left(task: asyncio.Task[CallOutcome] | None, slot: CallSlot, call: _PackCall) -> CallOutcome:
    """How a call cancelled by its caller ended: its own outcome when the pack finished anyway;
    where its work went on (:func:`carry_on`), how it ended there; when the cancel cut the task
    off from a thread doing its work (before or just after that thread returned), whether that
    thread raised or returned, and the tool result it returned; ``cancelled`` only when the work
    was stopped before it finished."""
    if task is not None and not task.cancelled():
        return task.result()
    if call.elsewhere and not call.elsewhere[-1].cancelled():
        return call.elsewhere[-1].result()  # done: the slot was held until it was
    if slot.orphan_errors:
        crashed = PluginError(f"pack {call.pack}", f"a thread of tool {call.tool}", slot.orphan_errors[0])
        return CallOutcome(failure_from_exception(crashed, None), "failure")
    if slot.orphans_returned:
        failed = [result for result in slot.orphan_results if not result.success]
        if failed:
            return CallOutcome(failed[0], "failure")
        return CallOutcome(slot.orphan_results[-1] if slot.orphan_results else tool_success(None), "success")
    if slot.last_returned is not None:  # the cancel overtook the tool result a thread returned
        returned = slot.last_returned
        return CallOutcome(returned, "success" if returned.success else "failure")
    return CallOutcome(tool_failure(f"tool {call.tool} was cancelled"), "cancelled")


class ToolRunner:
    """Runs the host's tool calls, each pack within its own concurrency limit."""

    def __init__(self) -> None:
        self._slots: dict[str, CapacityLimiter] = {}
        self._threads: dict[str, PackThreads] = {}
        #: Calls that outlived the timeout (or their caller), kept referenced until they end.
        self._abandoned: dict[asyncio.Task[CallOutcome], _PackCall] = {}

    def _limiters(self, pack: str, concurrency: int) -> tuple[CapacityLimiter, PackThreads]:
        slots = self._slots.get(pack)
        if slots is None:
            slots = self._slots[pack] = CapacityLimiter(concurrency)
            self._threads[pack] = PackThreads(concurrency)
        elif slots.total_tokens != concurrency:  # server.pack_concurrency changed on reload
            slots.total_tokens = concurrency
            self._threads[pack].tokens.total_tokens = concurrency
        return slots, self._threads[pack]

    def abandoned(self) -> list[str]:
        """``pack/tool`` of each call the host stopped waiting for that has not returned since."""
        return [f"{call.pack}/{call.tool}" for call in self._abandoned.values()]

    def in_flight(self, pack: str) -> int:
        slots = self._slots.get(pack)
        return slots.borrowed_tokens if slots is not None else 0

    async def run(
        self,
        pack: ToolProvider,
        name: str,
        arguments: Any,
        context: ToolContext,
        *,
        time_limit: float,
        concurrency: int,
        when_left: ClientGone | None = None,
    ) -> CallOutcome:
        """One call, answered within ``time_limit`` seconds at the latest, and how it ended; never
        raises except for a real host signal or this call's own cancellation (which cancels the
        pack's task too, and tells ``when_left`` how the call ended once its work has)."""
        pack_name = str(pack.name)
        slots, threads = self._limiters(pack_name, concurrency)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + time_limit
        token = object()
        if not self._take_slot(slots, token) and not await self._wait_for_slot(slots, token, time_limit):
            busy = tool_failure(
                f"pack {pack_name} is busy: all {concurrency} of its call slots stayed taken for {time_limit:g} s "
                "(calls that outlive the tool timeout keep theirs until they and their threads return); "
                "try again later"
            )
            return CallOutcome(busy, "rejected")
        sink = getattr(context, "progress_sink", None)
        slot = CallSlot(lambda: slots.release_on_behalf_of(token))
        call = _PackCall(pack=pack_name, tool=name, owner=ThreadOwner(threads, slot), deadline=deadline, progress=sink)
        if isinstance(pack, AnswersByDeadline):  # the core's own: never an attribute a plugin could set
            # An isolated pack answers by the deadline itself (its process is killed then): no
            # task of its own to abandon, one fewer loop turn per call (one task fewer in the process).
            current, owner = _CURRENT.set(call), CURRENT_OWNER.set(call.owner)
            try:
                return await _call_pack(pack, name, arguments, context)
            except BaseException:
                if when_left is not None:  # told once the work elsewhere, or the call's threads, end
                    when_left.follow(None, call)
                raise
            finally:
                CURRENT_OWNER.reset(owner)
                _CURRENT.reset(current)
                slot.end_task()
        finished: asyncio.Future[None] = loop.create_future()
        task = eager_task(_guarded(call, pack, arguments, context, finished), loop)
        if task.done():  # answered without waiting (a cached read): no turn of the loop, no timer
            slot.end_task()
            return _outcome(task, name)
        # The slot goes back when the pack's code and its threads end, however they end.
        task.add_done_callback(lambda _: slot.end_task())
        try:
            await _until_done(task, finished, deadline)
        except BaseException:
            task.cancel()
            self._keep(task, call, reason="cancelled")
            if when_left is not None:
                when_left.follow(task, call)
            raise
        if not task.done():
            task.cancel()
            self._keep(task, call, reason=f"did not finish within {time_limit:g} s")
            late = tool_failure(f"tool {name} did not finish within {time_limit:g} s (server.tool_timeout_seconds)")
            return CallOutcome(late, "timeout")
        return _outcome(task, name)

    @staticmethod
    def _take_slot(slots: CapacityLimiter, token: object) -> bool:
        """A free slot at once, without a turn of the event loop (the common case)."""
        try:
            slots.acquire_on_behalf_of_nowait(token)
        except anyio.WouldBlock:
            return False
        return True

    @staticmethod
    async def _wait_for_slot(slots: CapacityLimiter, token: object, time_limit: float) -> bool:
        with anyio.move_on_after(time_limit):
            await slots.acquire_on_behalf_of(token)
            return True
        return False

    def _keep(self, task: asyncio.Task[CallOutcome], call: _PackCall, *, reason: str) -> None:
        """Hold on to a call the host stopped waiting for, and log when it finally ends."""
        if task.done():
            return
        self._abandoned[task] = call
        if reason != "cancelled":
            logger.warning(
                "lorenz: tool %s (pack %s) %s; abandoned it: it keeps one of the pack's call slots until it returns",
                call.tool,
                call.pack,
                reason,
            )

        def ended(finished: asyncio.Task[CallOutcome]) -> None:
            self._abandoned.pop(finished, None)
            if reason != "cancelled":
                logger.info("lorenz: abandoned call of tool %s (pack %s) has ended", call.tool, call.pack)

        task.add_done_callback(ended)

    async def aclose(self) -> None:
        """Cancel the calls still running after their timeout (at shutdown)."""
        for task in list(self._abandoned):
            task.cancel()


def _outcome(task: asyncio.Task[CallOutcome], name: str) -> CallOutcome:
    if task.cancelled():
        return CallOutcome(tool_failure(f"tool {name} was cancelled"), "cancelled")
    return task.result()


async def _until_done(task: asyncio.Task[Any], finished: asyncio.Future[None], deadline: float) -> None:
    """Wait for ``task`` until ``deadline`` (the loop's clock), leaving it running past it: what
    ``asyncio.wait({task}, timeout=...)`` does, for half its cost. ``finished`` is set by the task
    itself as it ends (one loop turn sooner than its done callbacks), by those callbacks, or at
    the deadline."""
    loop = asyncio.get_running_loop()

    def wake(_: object = None) -> None:
        if not finished.done():
            finished.set_result(None)

    task.add_done_callback(wake)
    timer = loop.call_at(deadline, wake)
    try:
        await finished
    finally:
        timer.cancel()
        task.remove_done_callback(wake)


async def _guarded(
    call: _PackCall, pack: ToolProvider, arguments: Any, context: ToolContext, finished: asyncio.Future[None]
) -> CallOutcome:
    """The task body of one call. Its frame marks the running pack for the event-loop watchdog."""
    _CURRENT.set(call)
    CURRENT_OWNER.set(call.owner)
    try:
        return await _call_pack(pack, call.tool, arguments, context)
    finally:
        if not finished.done():
            finished.set_result(None)
