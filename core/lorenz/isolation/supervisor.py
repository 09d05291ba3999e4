"""Supervision of one isolated pack's processes (``server.pack_processes`` of them): starting them
and the pack's sandbox, restarting, stopping, reporting (its calls: :mod:`.routing`).

A process that dies fails its calls in flight and is restarted with backoff. A pack that crashes
:data:`MAX_CRASHES` times within :data:`CRASH_WINDOW_SECONDS` is marked failed (its calls fail at
once, ``/healthz`` says so) until a reload mounts it afresh. Everything here runs on the isolation loop.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import time
from typing import Any

from lorenz.backoff import Backoff
from lorenz.plugins.containment import host_interrupted
from lorenz.plugins.hint import SandboxHint
from lorenz.results import tool_failure
from lorenz.sandbox.host import PackSandbox, SandboxUnavailable

from .plan import Plan, sandboxing_for
from .process import ChildGone, ChildProcess
from .protocol import EXIT_OUT_OF_MEMORY, Failed, Ready
from .routing import Call, CallRouter
from .survey import computed_permissions, describe_exit

__all__ = [
    "CRASH_WINDOW_SECONDS",
    "MAX_CRASHES",
    "START_TIMEOUT_SECONDS",
    "Call",
    "StartError",
    "Supervisor",
]

logger = logging.getLogger("lorenz.isolation")

MAX_CRASHES = 5
CRASH_WINDOW_SECONDS = 60.0
#: How long a process has to import its pack and list its tools.
START_TIMEOUT_SECONDS = 30.0
#: Restart delays after a crash: 0.1 s, doubling per recent crash, at most 5 s.
_BACKOFF = Backoff(0.1, 5.0)


class StartError(Exception):
    """The pack's process could not start; the message names the pack and says why."""


class Supervisor(CallRouter):
    """The processes of one :class:`~lorenz.isolation.plan.Plan`: starting them (and the pack's
    sandbox), restarting them, stopping them and reporting on them."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.slots: list[ChildProcess | None] = [None] * plan.processes
        self.ready: Ready | None = None
        self.calls: dict[int, Call] = {}
        #: Calls waiting for a process to come up (after a crash).
        self.waiting: collections.deque[Call] = collections.deque()
        self.crashes: collections.deque[float] = collections.deque()
        self.restarts = 0
        #: Why the pack was marked failed (it crashed too often), if it was.
        self.failed: str | None = None
        self.closed: str | None = None
        self._keepers: list[asyncio.Task[None]] = []
        #: Set while no call is in flight (what a draining stop waits for).
        self._idle = asyncio.Event()
        self.sandboxing = sandboxing_for(plan)

    # -- starting -----------------------------------------------------------------------

    async def start(self) -> Ready:
        """Start every process; the first's :class:`Ready`. Raises :class:`StartError`."""
        if self.sandboxing is not None:
            try:
                if self.plan.computes_permissions:
                    await self._compute_permissions(self.sandboxing)
                await self.sandboxing.start()
            except SandboxUnavailable as exc:
                await self.aclose("it cannot be sandboxed")
                raise StartError(str(exc)) from None
        started = await asyncio.gather(*(self._spawn(slot) for slot in range(len(self.slots))), return_exceptions=True)
        processes = [process for process in started if isinstance(process, ChildProcess)]
        if len(processes) < len(started):
            await self.aclose("it failed to start")
            error = next(error for error in started if isinstance(error, BaseException))
            raise error
        ready = processes[0].ready.result()
        assert isinstance(ready, Ready)
        self.ready = ready
        if ready.options_error is not None:
            await self.aclose("its options were refused")
            return ready
        loop = asyncio.get_running_loop()
        self._keepers = [loop.create_task(self._keep(slot, process)) for slot, process in enumerate(processes)]
        return ready

    async def _compute_permissions(self, sandboxing: PackSandbox) -> None:
        """Ask a short-lived child what the pack's settings make its permissions (plus the operator's)."""
        env = {name: value for name, value in os.environ.items() if name not in self.plan.withheld}
        plan = self.plan
        base_dir = plan.settings.get("base_dir")
        confine = SandboxHint(
            packs=(plan.pack,), fallback=plan.sandbox_fallback, workflow_dir=str(base_dir) if base_dir else None
        )
        computed = await asyncio.to_thread(computed_permissions, plan.source, plan.pack, plan.settings, env, confine)
        if isinstance(computed, str):
            raise SandboxUnavailable(f"pack {plan.pack} could not compute its permissions: {computed}")
        sandboxing.computed = computed
        sandboxing.permissions = computed.widened(sandboxing.permissions)

    async def _spawn(self, slot: int) -> ChildProcess:
        """A new process in ``slot``, once it said it is ready; raises :class:`StartError` (the
        process is gone by then)."""
        try:
            process = await ChildProcess.spawn(self.plan, self._on_reply, self._on_event, self.sandboxing)
        except OSError as exc:
            msg = f"pack {self.pack} could not start its process: {exc}"
            raise StartError(msg) from None
        if self.closed is not None:
            await process.stop(0.0)
            raise StartError(f"pack {self.pack} was stopped ({self.closed})")
        self.slots[slot] = process
        try:
            hello = await asyncio.wait_for(asyncio.shield(process.ready), START_TIMEOUT_SECONDS)
        except TimeoutError:
            process.kill("starting")
            await asyncio.shield(process.exited)
            msg = f"pack {self.pack} did not start within {START_TIMEOUT_SECONDS:g} s (importing it, listing its tools)"
            raise StartError(msg) from None
        except ChildGone as exc:
            raise StartError(self._start_crash(exc.code)) from None
        if isinstance(hello, Failed):
            await asyncio.shield(process.exited)
            raise StartError(f"pack {self.pack} failed to start in its own process: {hello.error}")
        if self.ready is not None and hello.specs != self.ready.specs:
            process.kill("its tools differ")
            await asyncio.shield(process.exited)
            msg = f"pack {self.pack} listed other tools after a restart than before; reload the workflow"
            raise StartError(msg)
        return process

    def _start_crash(self, code: int) -> str:
        if code == EXIT_OUT_OF_MEMORY:
            return f"pack {self.pack} ran out of memory while starting (server.pack_memory_mb: {self.plan.memory_mb})"
        return f"pack {self.pack} crashed while starting ({describe_exit(code)})"

    async def _keep(self, slot: int, process: ChildProcess) -> None:
        """Watch one slot's process and restart it when it dies (with backoff after a crash),
        until the pack is stopped or marked failed."""
        while True:
            crashed = self._exited(process, await asyncio.shield(process.exited))
            delay = self._backoff() if crashed else 0.0
            while True:
                await asyncio.sleep(delay)
                if self.closed is not None or self.failed is not None:
                    self.slots[slot] = None
                    return
                self.restarts += 1
                try:
                    process = await self._spawn(slot)
                    break
                except StartError as exc:
                    self.slots[slot] = None
                    if self.closed is not None:
                        return
                    logger.warning("lorenz: %s", exc)
                    self._note_crash(str(exc))
                    delay = self._backoff()
            logger.info("lorenz: pack %s restarted (pid %d)", self.pack, process.pid)
            self._dispatch_waiting()

    # -- exits --------------------------------------------------------------------------

    def _exited(self, process: ChildProcess, code: int) -> bool:
        """Settle the calls a process took with it; whether it crashed (the host did not end it)."""
        reason = process.kill_reason
        if self.closed is None and host_interrupted():
            self.closed = "the host is shutting down"
        if self.closed is not None:
            message, crashed = f"pack {self.pack} was stopped ({self.closed}); try again", False
        elif reason is None:
            message, crashed = self._crash_message(code), True
        elif reason.startswith("sent "):  # a protocol violation: misbehaving like a crash
            message, crashed = f"pack {self.pack} {reason}; restarted", True
        else:
            message, crashed = f"pack {self.pack}'s process was restarted while this call ran: {reason}", False
        if crashed:
            self._note_crash(message)
            if self.failed is None:
                logger.warning("lorenz: %s", message)
        for request_id in list(process.pending):
            call = self.calls.get(request_id)
            if call is not None:
                self._settle(call, tool_failure(self.failed or message))
        process.pending.clear()
        return crashed

    def _crash_message(self, code: int) -> str:
        if code == EXIT_OUT_OF_MEMORY:
            return f"pack {self.pack} ran out of memory (server.pack_memory_mb: {self.plan.memory_mb}); restarted"
        return f"pack {self.pack} crashed ({describe_exit(code)}); restarted"

    def _note_crash(self, message: str) -> None:
        now = time.monotonic()
        self.crashes.append(now)
        while self.crashes and self.crashes[0] < now - CRASH_WINDOW_SECONDS:
            self.crashes.popleft()
        if len(self.crashes) >= MAX_CRASHES and self.failed is None:
            self.failed = (
                f"{message.removesuffix('; restarted')}; it crashed {len(self.crashes)} times within "
                f"{CRASH_WINDOW_SECONDS:g} s, so it is not restarted until the workflow is reloaded"
            )
            logger.error("lorenz: %s", self.failed)
            for process in self.slots:
                if process is not None:
                    process.kill("the pack was marked failed")
            while self.waiting:
                self._settle(self.waiting.popleft(), tool_failure(self.failed))

    def _backoff(self) -> float:
        return _BACKOFF.delay(max(1, len(self.crashes)))

    # -- stopping -----------------------------------------------------------------------

    async def aclose(self, reason: str, *, drain: float = 0.0, grace: float = 1.0) -> None:
        """Stop every process: new calls are refused at once, calls in flight get ``drain`` s to
        end, then each process is asked to stop and killed ``grace`` s later if it has not."""
        if self.closed is None:
            self.closed = reason
        while self.waiting:
            self._settle(self.waiting.popleft(), tool_failure(f"pack {self.pack} was stopped ({reason}); try again"))
        if self.calls and drain > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle.wait(), drain)
        for keeper in self._keepers:
            keeper.cancel()
        await asyncio.gather(*self._keepers, return_exceptions=True)
        processes = [process for process in self.slots if process is not None]
        await asyncio.gather(*(process.stop(grace) for process in processes))
        for process in processes:
            self._exited(process, process.exited.result())
        self.slots = [None] * len(self.slots)
        if self.sandboxing is not None:
            await self.sandboxing.aclose()

    # -- reporting ----------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """For ``/healthz``: ``running``, ``restarting``, ``failed`` or ``stopped``, and the processes."""
        pids = [process.pid for process in self.slots if process is not None and process.alive]
        if self.closed is not None:
            state = "stopped"
        elif self.failed is not None:
            state = "failed"
        else:
            state = "running" if len(pids) == len(self.slots) else "restarting"
        status: dict[str, Any] = {"pack": self.pack, "state": state, "pids": pids, "restarts": self.restarts}
        status["recentCrashes"] = len(self.crashes)
        if self.sandboxing is not None:
            status["sandboxed"] = self.sandboxing.sandbox is not None
            status["denials"] = self.sandboxing.denials
        if self.failed is not None:
            status["error"] = self.failed
        return status
