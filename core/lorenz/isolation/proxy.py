"""What the host mounts in place of an isolated pack: an ordinary :class:`~lorenz.ToolProvider`
whose ``execute_tool`` (and ``read_resource``, ``get_prompt``, ``complete``) sends the call to the pack's
processes and awaits the reply; a typed tool's questions for the client come back as the reply,
and the call is sent again with the answers.

The host's own machinery (argument checks, :class:`~lorenz.toolcall.execution.ToolRunner`'s per-pack
limits and timeout, result encoding) treats it like any pack. A call from the pool's home
loop (``lorenz serve``) is submitted directly; one from another loop crosses to the home loop and
back with one ``call_soon_threadsafe`` each way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from lorenz.client_input import ASK, NONE, RETRY, InputRequired
from lorenz.contracts import send_progress
from lorenz.results import ToolResult, error_message, failure_result
from lorenz.toolcall.execution import AnswersByDeadline, CallOutcome, carry_on, time_left

from .protocol import MAX_EVENT_MESSAGE_CHARS, Event
from .routing import new_call

if TYPE_CHECKING:
    from lorenz.contracts import PromptSpec, ResourceSpec, ToolContext, ToolSpec
    from lorenz.settings.model import Settings

    from .protocol import DisabledEntry, Ready
    from .supervisor import Supervisor

__all__ = ["IsolatedPack"]

#: Rounds of questions one call sends back at most (the process's kit refuses more itself).
_MAX_ROUNDS = 16
#: Events of one call waiting to be sent to its client, at most.
_MAX_QUEUED_EVENTS = 256
#: How long a call's answer waits for the events sent before it to reach the client.
_DRAIN_SECONDS = 1.0


def _resolve(future: asyncio.Future[CallOutcome], outcome: CallOutcome) -> None:
    if not future.done():
        future.set_result(outcome)


class _Events:
    """A call's progress and log events, sent to its context's sinks one at a time and in order,
    on the caller's loop. At most :data:`_MAX_QUEUED_EVENTS` wait: past that they are dropped, as
    progress and client logs are best effort and a pack must not fill the host's memory with them."""

    def __init__(self, context: ToolContext) -> None:
        self._context = context
        self._queue: asyncio.Queue[Event] | None = None  # with the first event: most calls send none
        self._pump: asyncio.Task[None] | None = None

    def notifier(self, loop: asyncio.AbstractEventLoop, home: bool) -> Callable[[Event], None]:
        def put(event: Event) -> None:
            if self._queue is None:
                self._queue = asyncio.Queue(_MAX_QUEUED_EVENTS)
            with contextlib.suppress(asyncio.QueueFull):
                self._queue.put_nowait(event)
            if self._pump is None:
                self._pump = loop.create_task(self._send(self._queue))

        if home:
            return put

        def cross(event: Event) -> None:  # on the home loop
            with contextlib.suppress(RuntimeError):  # the caller's loop is closed: nobody is waiting
                loop.call_soon_threadsafe(put, event)

        return cross

    async def _send(self, queue: asyncio.Queue[Event]) -> None:
        context = self._context
        while True:
            event = await queue.get()
            try:
                message = None if event.message is None else event.message[:MAX_EVENT_MESSAGE_CHARS]
                if event.op == "progress":
                    await send_progress(context.progress_sink, event.done, event.total, message)
                elif message is not None:
                    await context.log(event.level, message)
            finally:
                queue.task_done()

    async def drain(self) -> None:
        """Wait (briefly) until every event queued so far is sent."""
        if self._pump is None or self._queue is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._queue.join(), _DRAIN_SECONDS)
        self._pump.cancel()

    def abandon(self) -> None:
        if self._pump is not None:
            self._pump.cancel()


class IsolatedPack(AnswersByDeadline):
    """A pack running in processes of its own (``server.isolated_packs``); its calls are answered by
    their deadline (the supervisor kills the process then)."""

    #: Read by the landing page and ``/healthz``.
    isolated = True

    def __init__(self, supervisor: Supervisor, ready: Ready, home: asyncio.AbstractEventLoop) -> None:
        self.name = supervisor.pack
        self.supervisor = supervisor
        #: The pack's own flag: it refuses bad arguments itself, so the host skips its schema check.
        self.validates_arguments = ready.validates_arguments
        self.skills = ready.skills
        self._resources = ready.resources
        self._prompts = ready.prompts
        self._asking = ready.asking
        self._specs = ready.specs
        self._disabled = ready.disabled
        #: The loop the supervisor runs on.
        self._home = home
        #: The tool names last listed for callers without a grant of their own, and of which tools.
        self._names: tuple[object, list[str]] | None = None

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        """The tools the pack listed in its process, for the settings it was started with."""
        return list(self._specs)

    def validate_options(self, options: Any) -> None:
        """Nothing to do: the pack checked its options in its process, before it said it was ready."""

    def disabled_tools(self, settings: Settings) -> list[DisabledEntry]:
        return list(self._disabled)

    def resource_specs(self, settings: Settings) -> list[ResourceSpec]:
        """The resources and templates the pack listed in its process."""
        return list(self._resources)

    def prompt_specs(self, settings: Settings) -> list[PromptSpec]:
        return list(self._prompts)

    def client_input_tools(self, settings: Settings) -> list[str]:
        return list(self._asking)

    async def read_resource(self, uri: str, context: ToolContext) -> ToolResult:
        return await self._send(uri, None, context, {"kind": "resource"})

    async def get_prompt(self, name: str, arguments: Mapping[str, Any] | None, context: ToolContext) -> ToolResult:
        return await self._send(name, dict(arguments or {}), context, {"kind": "prompt"})

    async def complete(
        self,
        ref: Mapping[str, Any],
        argument: Mapping[str, Any],
        context_arguments: Mapping[str, Any],
        context: ToolContext,
    ) -> ToolResult:
        """Suggestions for a prompt's or template's argument, from the pack's ``complete`` in its process."""
        asked = {"ref": dict(ref), "argument": dict(argument), "contextArguments": dict(context_arguments)}
        return await self._send(str(ref.get("name") or ref.get("uri")), asked, context, {"kind": "completion"})

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        """The call, sent again with the answers while the pack's tool asks its client for input:
        the process never asks itself, so it needs no session and no sealing key."""
        client = context.client_input
        if client is None:
            return await self._send(name, input, context, {"input": None})
        if client.mode not in (ASK, RETRY):
            return await self._send(name, input, context, {"input": {"mode": NONE, "refusal": client.refusal}})
        known = {"capabilities": client.capabilities}
        asking = {"mode": RETRY, "state": client.state, "responses": client.responses, **known}
        for _ in range(_MAX_ROUNDS):
            result = await self._send(name, input, context, {"input": asking})
            if not isinstance(result, InputRequired) or client.mode == RETRY:
                return result  # a 2026-07-28 client answers; the host seals the state on the way out
            assert client.ask is not None
            try:
                responses = await client.ask(result.requests)
            except Exception as exc:
                text = f"{name} asked the client for input and got no answer: {error_message(exc)}"
                return failure_result(text, reason="client_input_failed")
            asking = {"mode": RETRY, "state": result.state, "responses": dict(responses), **known}
        return failure_result(f"{name} asked the client for input too many times", reason="too_many_rounds")

    async def _send(self, name: str, input: Any, context: ToolContext, extra: Mapping[str, Any]) -> ToolResult:
        """One call frame to the pack's processes, and its reply."""
        loop = asyncio.get_running_loop()
        # How the call ends, kept when this caller is cancelled; and what this caller awaits, which
        # a cancel cancels (asyncio.shield's pair, resolved together: no loop turn between them).
        future: asyncio.Future[CallOutcome] = loop.create_future()
        waiter: asyncio.Future[CallOutcome] = loop.create_future()
        home = loop is self._home

        def resolve(outcome: CallOutcome) -> None:
            _resolve(future, outcome)
            _resolve(waiter, outcome)

        def deliver(outcome: CallOutcome) -> None:  # on the home loop
            if home:
                resolve(outcome)
                return
            with contextlib.suppress(RuntimeError):  # the caller's loop is closed: nobody is waiting
                loop.call_soon_threadsafe(resolve, outcome)

        events = _Events(context) if context.progress_sink is not None or context.log_sink is not None else None
        wants = {
            "progress": context.progress_sink is not None,
            "log": context.log_sink is not None,
            "logLevel": context.log_level if context.log_sink is not None else None,
            "enabled": self._enabled_names(context.enabled),
            "caller": attrs.asdict(context.caller) if context.caller is not None else None,
            "concurrency": context.settings.server.pack_concurrency,
            **extra,
        }
        left = time_left()  # the host's ToolRunner answers at its deadline: the process is killed then too
        timeout = context.settings.server.tool_timeout_seconds if left is None else left
        notify = None if events is None else events.notifier(loop, home)
        call = new_call(name, input, timeout, deliver, notify=notify, wants=wants)
        if home:
            self.supervisor.submit(call)
        else:
            self._home.call_soon_threadsafe(self.supervisor.submit, call)
        try:
            outcome = await waiter
        except asyncio.CancelledError:
            if home:
                self.supervisor.cancel(call)
            else:
                self._home.call_soon_threadsafe(self.supervisor.cancel, call)
            # The process answers once the pack's work has ended (the cancel may come too late
            # to stop it): that answer, not the cancel, says how the call ended.
            carry_on(future)
            if events is not None:
                events.abandon()
            raise
        if events is not None:  # what the call sent before it answered reaches the client first
            await events.drain()
        return outcome.result

    def _enabled_names(self, enabled: object) -> list[str] | None:
        """The tools the caller may call (a process cannot ask the host back: it is told): the
        same list for every caller without a grant of its own while the workflow's tools stay."""
        names = getattr(enabled, "names", None)
        if not callable(names):
            return None
        owners = getattr(enabled, "owners", None)
        if owners is None or getattr(enabled, "allows", True) is not None:
            listed: list[str] = names()
            return listed
        if self._names is None or self._names[0] is not owners:
            self._names = (owners, names())
        return self._names[1]

    def status(self) -> dict[str, Any]:
        return self.supervisor.status()
