"""An isolated pack's process serving its calls: each call frame from the host runs as a task of
its own, the pack's code in it (under a :class:`~lorenz.toolcall.execution.ToolRunner`, as in the
host: its slots and threads; its deadline is the host's, which kills this process then), its
progress and log messages go back as events, and its reply when it ends. A call the host cancels
is answered once the pack's work (its threads included) has ended, saying how it ended."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from attrs import evolve

from lorenz.client_input import NONE, RETRY, ClientInput
from lorenz.contracts import Caller, ToolContext, ToolSpec
from lorenz.plugins.containment import PluginError
from lorenz.results import ToolResult, tool_failure, tool_success
from lorenz.sandbox.policy import denial_message
from lorenz.settings.model import Settings
from lorenz.toolcall.eager import eager_task
from lorenz.toolcall.execution import (
    AnswersByDeadline,
    CallOutcome,
    ClientGone,
    ToolRunner,
    failure_from_exception,
)
from lorenz.toolcall.pack_threads import HostExecutor, route_anyio_threads
from lorenz.toolcall.wire import ResultTooLarge, json_survey

from .frames import FrameReader, small_reads, write_all
from .loading import start
from .protocol import Launch, encode, exit_out_of_memory, reply_result

if TYPE_CHECKING:
    from lorenz.contracts import ToolProvider
    from lorenz.sandbox.confine import Confinement

__all__ = ["serve"]

#: Frames from the host are trusted; this only bounds a defect.
_HOST_FRAME_LIMIT = 1024 * 1024 * 1024
#: How long past the host's deadline for a call it may wait here for one of the pack's call slots.
_HOST_DEADLINE_FIRST_SECONDS = 5.0


class _MemoryGuard(AnswersByDeadline):
    """The pack, except that a ``MemoryError`` ends the process (the host restarts it) instead of
    leaving a half-working interpreter behind. Its calls run in the task of their frame: the host
    answers each by its deadline and kills this process then."""

    def __init__(self, pack: ToolProvider) -> None:
        self.name = pack.name
        self._pack = pack

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        return self._pack.tool_specs(settings)

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        try:
            return await self._pack.execute_tool(name, input, context)
        except MemoryError:
            exit_out_of_memory()
            raise


class _Offering(_MemoryGuard):
    """One resource read (``name``: its URI), prompt render or completion (``input``: its ``ref``,
    ``argument`` and ``contextArguments``), run like a call of the pack (its containment, its
    failures as results)."""

    def __init__(self, pack: ToolProvider, kind: str) -> None:
        super().__init__(pack)
        self._kind = kind

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        kind = self._kind
        hook = getattr(self._pack, _HOOKS[kind], None)
        if not callable(hook):
            if kind == "completion":  # a pack that suggests nothing
                return tool_success({"values": []})
            missing = f"Resource not found: {name}" if kind == "resource" else f"Unknown prompt: {name}"
            return tool_failure(missing, reason="not_found")
        try:
            if kind == "resource":
                result: ToolResult = await hook(name, context)
            elif kind == "prompt":
                result = await hook(name, input, context)
            else:  # the host's frame: trusted
                result = await hook(input["ref"], input["argument"], input["contextArguments"], context)
        except MemoryError:
            exit_out_of_memory()
            raise
        return result


#: The pack's member each kind of offering calls.
_HOOKS = {"resource": "read_resource", "prompt": "get_prompt", "completion": "complete"}


class _Calls(asyncio.Protocol):
    """The host's frames: each call runs as a task of its own; its reply goes out when it ends."""

    def __init__(
        self,
        pack: ToolProvider,
        context: ToolContext,
        out: asyncio.WriteTransport,
        confinement: Confinement | None = None,
    ) -> None:
        self._pack = _MemoryGuard(pack)
        self._offerings = {kind: _Offering(pack, kind) for kind in _HOOKS}
        self._confinement = confinement
        self._context = context
        self._out = out
        self._reader = FrameReader(_HOST_FRAME_LIMIT, fast=True)
        self._runner = ToolRunner()
        self._loop = asyncio.get_running_loop()
        #: The task of each call still running, by request id (what a cancel cancels).
        self._tasks: dict[int, asyncio.Task[None]] = {}
        #: The last ``enabled`` list a call was sent, and its set: the same for most calls.
        self._enabled: tuple[list[str], Callable[[str], bool]] | None = None
        #: The context of a call without progress, log messages, client input or a caller.
        self._plain: ToolContext | None = None
        self.finished = self._loop.create_future()

    def data_received(self, data: bytes) -> None:
        for frame in self._reader.feed(data):
            op = frame.get("op")
            if op == "call":
                # Started at once: a call that never waits is answered before the next frame is read.
                task = eager_task(self._run(frame), self._loop)
                if not task.done():
                    self._tasks[frame["id"]] = task
            elif op == "cancel":
                cancelled = self._tasks.pop(frame["id"], None)  # once: then it waits for the pack's work
                if cancelled is not None:
                    cancelled.cancel()
            elif op == "stop":
                self._finish()

    def eof_received(self) -> bool:
        self._finish()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()

    def _finish(self) -> None:
        if not self.finished.done():
            self.finished.set_result(None)

    def _call_context(self, request_id: int, nonce: str, frame: Mapping[str, Any]) -> ToolContext:
        """The context of one call: its progress and log messages go to the host as events, and
        ``is_enabled`` answers from the tools the host said this caller may call."""
        get = frame.get
        enabled = self._is_enabled(get("enabled"))
        if not (get("progress") or get("log") or get("input") or get("caller")):
            # Nothing of the call's own: one context serves every such call while the tools stay.
            plain = self._plain
            if plain is None or plain.enabled is not enabled:
                plain = self._plain = evolve(self._context, enabled=enabled)
            return plain
        out = self._out

        async def progress(done: float, total: float | None, message: str | None) -> None:
            event = {"op": "progress", "id": request_id, "nonce": nonce, "done": done, "total": total}
            out.write(encode({**event, "message": message}))

        async def log(level: str, message: str) -> None:
            out.write(encode({"op": "log", "id": request_id, "nonce": nonce, "level": level, "message": message}))

        logs = bool(get("log"))
        level = get("logLevel")
        return ToolContext(
            settings=self._context.settings,
            http=self._context.http,
            progress_sink=progress if get("progress") else None,
            log_sink=log if logs else None,
            log_level=level if logs and isinstance(level, str) else None,
            enabled=enabled,
            client_input=_client_input(get("input")),
            caller=_caller(get("caller")),
        )

    def _is_enabled(self, enabled: Any) -> Callable[[str], bool] | None:
        if not isinstance(enabled, list):
            return None
        known = self._enabled
        if known is None or known[0] != enabled:
            known = self._enabled = (enabled, frozenset(enabled).__contains__)
        return known[1]

    async def _run(self, frame: Mapping[str, Any]) -> None:
        request_id, nonce, tool = frame["id"], frame["nonce"], frame["tool"]
        confinement = self._confinement
        watching = confinement.begin() if confinement is not None else None
        try:
            outcome = await self._outcome(request_id, nonce, tool, frame)
        except BaseException as exc:
            # What the runner lets through as the host's own (GeneratorExit; SystemExit or
            # KeyboardInterrupt after a signal, which this process ignores) is the pack's here:
            # left to the task, it would answer nothing and the call would hang to its timeout.
            crashed = PluginError(f"pack {self._pack.name}", "execute_tool", exc)
            outcome = CallOutcome(failure_from_exception(crashed, self._context), "crash")
        finally:
            self._tasks.pop(request_id, None)
        result = outcome.result
        denied = None
        if confinement is not None and watching is not None:
            denial = confinement.end(watching)
            if denial is not None and not result.success:
                result = tool_failure(denial_message(self._pack.name, denial))
                denied = denial.kind
        text = getattr(result, "text", None)
        limit = self._context.settings.server.max_result_bytes
        size, plain = json_survey((result.result, text), limit)
        if size > limit:
            result = tool_failure(f"{tool} returned {ResultTooLarge(limit)} (server.max_result_bytes): ask for less")
        reply = reply_result(request_id, nonce, result, denied=denied, outcome=outcome.kind)
        # Plain data with fields of the types a result declares: no need to survey the whole frame.
        plain = plain and type(result.success) is bool and (result.error is None or type(result.error) is str)
        plain = plain and "content" not in reply and "inputRequired" not in reply
        self._out.write(encode(reply, fast=True, plain=plain))

    async def _outcome(self, request_id: int, nonce: str, tool: str, frame: Mapping[str, Any]) -> CallOutcome:
        """How the call ended: when the host cancelled it, once its work (threads included) has."""
        pack = self._offerings.get(frame.get("kind", "tool"), self._pack)
        context = self._call_context(request_id, nonce, frame)
        server = self._context.settings.server
        timeout, concurrency = frame.get("timeout"), frame.get("concurrency")
        ended: asyncio.Future[CallOutcome] = self._loop.create_future()
        left = ClientGone(lambda outcome: None if ended.done() else ended.set_result(outcome))
        try:
            return await self._runner.run(
                pack,
                tool,
                frame.get("arguments"),
                context,
                # The host answers at the call's deadline and kills this process: never this first.
                # (Only waiting for a slot is bounded here: the pack's own work is the host's to stop.)
                time_limit=(timeout if isinstance(timeout, (int, float)) else server.tool_timeout_seconds)
                + _HOST_DEADLINE_FIRST_SECONDS,
                concurrency=concurrency if isinstance(concurrency, int) else server.pack_concurrency,
                when_left=left,
            )
        except asyncio.CancelledError:
            if not left.following:  # stopped before the pack's code began
                return CallOutcome(tool_failure(f"tool {tool} was cancelled"), "cancelled")
            return await ended

    async def aclose(self) -> None:
        for task in list(self._tasks.values()):
            task.cancel()


async def serve(launch: Launch, fd_in: int, fd_out: int, confinement: Confinement | None = None) -> None:
    """Start the pack, say so (:class:`Ready`) and answer calls until the host stops this process."""
    import httpx

    loop = asyncio.get_running_loop()
    loop.set_exception_handler(_exception_handler)
    factory = getattr(asyncio, "eager_task_factory", None)  # 3.12+: a call that never waits needs no loop turn
    if factory is not None:
        loop.set_task_factory(factory)
    # The pack's threads (however it starts them) are its call's, as in the host: a cancelled call
    # is answered when they end.
    loop.set_default_executor(HostExecutor(thread_name_prefix="lorenz-pack-io"))
    route_anyio_threads()
    hello, pack, settings = start(launch)
    if pack is None:
        write_all(fd_out, encode(hello))
        return
    out, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(fd_out, "wb", buffering=0))
    async with httpx.AsyncClient(timeout=30.0) as http:
        context = ToolContext(settings=settings, http=http)
        calls = _Calls(pack, context, out, confinement)
        reading, _ = await loop.connect_read_pipe(lambda: calls, os.fdopen(fd_in, "rb", buffering=0))
        small_reads(reading)
        out.write(encode(hello))
        await calls.finished
        await calls.aclose()


def _exception_handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    if isinstance(context.get("exception"), MemoryError):
        exit_out_of_memory()
    loop.default_exception_handler(context)


def _caller(raw: Any) -> Caller | None:
    """The caller the host sent with the call (never its token: the host has none to send)."""
    if not isinstance(raw, dict):  # a frame's JSON object
        return None
    text = {key: raw.get(key) if isinstance(raw.get(key), str) else None for key in ("subject", "client_id", "issuer")}
    scopes = raw.get("scopes")
    return Caller(**text, scopes=tuple(s for s in scopes if isinstance(s, str)) if isinstance(scopes, list) else ())


def _client_input(raw: Any) -> ClientInput | None:
    """How the call may ask its client: a round always ends the call here (its state unsealed: the
    host seals it, or asks the client itself) and comes back with the answers; or why it cannot."""
    if not isinstance(raw, dict):  # a frame's JSON object
        return None
    if raw.get("mode") != RETRY:
        refusal = raw.get("refusal")
        return ClientInput(mode=NONE, refusal=refusal if isinstance(refusal, str) else None)
    state, responses, capabilities = raw.get("state"), raw.get("responses"), raw.get("capabilities")
    return ClientInput(
        mode=RETRY,
        state=state if isinstance(state, str) else None,
        responses=responses if isinstance(responses, Mapping) else None,
        capabilities=capabilities if isinstance(capabilities, Mapping) else None,
    )
