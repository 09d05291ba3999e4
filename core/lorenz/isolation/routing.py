"""Routing one isolated pack's calls to its processes: each goes to the least busy process that is
up, multiplexed over its pipe by request id, waits for a process while none is, and is answered
by its tool timeout at the latest (the process still running it is killed and restarted).
:class:`~lorenz.isolation.supervisor.Supervisor` starts and keeps the processes this routes to.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import math
import secrets
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from attrs import define

from lorenz.results import ToolResult, tool_failure
from lorenz.toolcall.execution import CallOutcome
from lorenz.toolcall.wire import json_survey

from .process import ChildProcess
from .protocol import Event, Reply, encode

if TYPE_CHECKING:
    from lorenz.sandbox.host import PackSandbox

    from .plan import Plan

__all__ = ["Call", "CallRouter", "new_call"]

logger = logging.getLogger("lorenz.isolation")

#: A cancel this close to the call's deadline is the timeout itself: the process is killed at once.
_DEADLINE_SLACK_SECONDS = 0.05


@define(eq=False)
class Call:
    """One tool call on its way through the supervisor."""

    id: int
    #: What the reply must echo: the host takes a result only from the call's own runtime task.
    nonce: str
    tool: str
    frame: bytes
    #: Seconds from submission to the tool timeout.
    timeout: float
    #: Called once, with the call's result and how it ended.
    deliver: Callable[[CallOutcome], None]
    #: Where the call's progress and log events go (on the isolation loop); ``None``: dropped.
    notify: Callable[[Event], None] | None = None
    process: ChildProcess | None = None
    #: When it was sent to its process (the loop's clock).
    sent_at: float = 0.0
    timer: asyncio.TimerHandle | None = None
    done: bool = False

    def finish(self, result: ToolResult, kind: str | None = None) -> None:
        """Answer the call with ``result``, which ended it as ``kind`` (by default, as it says)."""
        if self.done:
            return
        self.done = True
        if self.timer is not None:
            self.timer.cancel()
        self.deliver(CallOutcome(result, kind or ("success" if result.success else "failure")))


_ids = itertools.count(1)


def new_call(
    tool: str,
    arguments: Any,
    timeout: float,
    deliver: Callable[[CallOutcome], None],
    *,
    notify: Callable[[Event], None] | None = None,
    wants: Mapping[str, Any] | None = None,
) -> Call:
    """A call ready to submit (its frame encoded by the caller's thread). ``wants`` tells the pack's
    process what the call's context offers: ``progress``, ``log``, the ``enabled`` tool names; what
    is not offered (false or ``None``) is left out of the frame. The process is told the ``timeout``
    too (what its :func:`~lorenz.toolcall.execution.time_left` says)."""
    request_id, nonce = next(_ids), secrets.token_hex(16)
    call = {"op": "call", "id": request_id, "nonce": nonce, "tool": tool, "arguments": arguments, "timeout": timeout}
    if wants:
        call.update((key, value) for key, value in wants.items() if value is not None and value is not False)
    # The rest is the host's own plain data (names, flags, numbers): only what a caller passed is surveyed.
    plain = json_survey(arguments, math.inf)[1] and json_survey(call.get("input"), math.inf)[1]
    return Call(
        id=request_id,
        nonce=nonce,
        tool=tool,
        frame=encode(call, fast=True, plain=plain),
        timeout=timeout,
        deliver=deliver,
        notify=notify,
    )


class CallRouter:
    """The calls half of a supervisor: what it routes between, and how."""

    plan: Plan
    slots: list[ChildProcess | None]
    calls: dict[int, Call]
    #: Calls waiting for a process to come up (after a crash).
    waiting: collections.deque[Call]
    #: Why the pack was marked failed (it crashed too often), if it was.
    failed: str | None
    closed: str | None
    sandboxing: PackSandbox | None
    #: Set while no call is in flight (what a draining stop waits for).
    _idle: asyncio.Event

    @property
    def pack(self) -> str:
        return self.plan.pack

    # -- calls --------------------------------------------------------------------------

    def submit(self, call: Call) -> None:
        if self.closed is not None:
            call.finish(tool_failure(f"pack {self.pack} was stopped ({self.closed}); try again"))
            return
        if self.failed is not None:
            call.finish(tool_failure(self.failed))
            return
        self.calls[call.id] = call
        self._idle.clear()
        loop = asyncio.get_running_loop()
        call.timer = loop.call_later(max(0.0, call.timeout), self._expire, call)
        process = self._least_busy()
        if process is None:
            self.waiting.append(call)
        else:
            self._send(process, call)

    def cancel(self, call: Call) -> None:
        """The caller stopped waiting: at its timeout, kill the process now; earlier (a client's
        cancel), ask the pack to cancel the call (its timer still runs)."""
        if call.done:
            return
        if call.timer is not None and call.timer.when() - asyncio.get_running_loop().time() < _DEADLINE_SLACK_SECONDS:
            call.timer.cancel()
            self._expire(call)
            return
        if call.process is None:
            with contextlib.suppress(ValueError):
                self.waiting.remove(call)
            self._settle(call, tool_failure(f"tool {call.tool} was cancelled"), "cancelled")
            return
        call.process.send(encode({"op": "cancel", "id": call.id}))

    def _least_busy(self) -> ChildProcess | None:
        slots = self.slots
        if len(slots) == 1:  # server.pack_processes' default
            only = slots[0]
            return only if only is not None and only.alive else None
        alive = [process for process in slots if process is not None and process.alive]
        return min(alive, key=lambda process: len(process.pending), default=None)

    def _send(self, process: ChildProcess, call: Call) -> None:
        call.process = process
        call.sent_at = asyncio.get_running_loop().time()
        process.pending[call.id] = call.nonce
        process.send(call.frame)

    def _dispatch_waiting(self) -> None:
        while self.waiting:
            process = self._least_busy()
            if process is None:
                return
            self._send(process, self.waiting.popleft())

    def _on_event(self, event: Event) -> None:
        call = self.calls.get(event.id)
        if call is not None and call.notify is not None and not call.done:
            call.notify(event)

    def _on_reply(self, process: ChildProcess, reply: Reply) -> None:
        call = self.calls.get(reply.id)
        if call is not None:
            result = reply.to_result()
            if self.sandboxing is not None:
                if reply.denied is not None:  # refused in the process: already explained there
                    self.sandboxing.denials += 1
                else:
                    result = self.sandboxing.explain(result, call.sent_at)
            # The process says whether a cancel stopped the work; any other end is as the result says.
            self._settle(call, result, "cancelled" if reply.outcome == "cancelled" and not result.success else None)

    def _settle(self, call: Call, result: ToolResult, kind: str | None = None) -> None:
        self.calls.pop(call.id, None)
        if not self.calls:
            self._idle.set()
        call.finish(result, kind)

    def _expire(self, call: Call) -> None:
        """A call still running at its tool timeout: its process is killed, unless the call spent
        part of that time waiting for a slot (then it is answered now, cancelled in the process,
        and the process killed only if it still runs the call a full tool timeout after it got it)."""
        if call.done:
            return
        limit = f"{self.plan.timeout:g} s (server.tool_timeout_seconds)"
        process = call.process
        if process is None:
            with contextlib.suppress(ValueError):
                self.waiting.remove(call)
            self._settle(call, tool_failure(f"pack {self.pack} did not come back up within {limit}; try again"))
            return
        loop = asyncio.get_running_loop()
        if loop.time() - call.sent_at < self.plan.timeout - _DEADLINE_SLACK_SECONDS:
            process.send(encode({"op": "cancel", "id": call.id}))
            self._settle(call, tool_failure(f"tool {call.tool} did not finish within {limit}"), "timeout")
            loop.call_at(call.sent_at + self.plan.timeout, self._overrun, process, call)
            return
        self._overrun(process, call)
        restarted = tool_failure(f"tool {call.tool} did not finish within {limit}; its process was restarted")
        self._settle(call, restarted, "timeout")

    def _overrun(self, process: ChildProcess, call: Call) -> None:
        """Kill ``process`` if it still runs ``call``."""
        if call.id not in process.pending:
            return
        limit = f"{self.plan.timeout:g} s (server.tool_timeout_seconds)"
        logger.warning(
            "lorenz: pack %s: tool %s did not finish within %s; killing its process (pid %d)",
            self.pack,
            call.tool,
            limit,
            process.pid,
        )
        process.kill(f"tool {call.tool} did not finish within {limit}")
