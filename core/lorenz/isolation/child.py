"""An isolated pack's process: ``python -m lorenz.isolation.child``, started by the host.

It reads one :class:`~lorenz.isolation.protocol.Launch` frame from stdin, then either surveys an
entry point (for discovery) or imports one pack and serves its calls until told to stop. stdin and
stdout carry only frames; whatever the pack prints goes to stderr, which the host logs. It ends
itself when the host goes away or the pack runs out of memory (:data:`EXIT_OUT_OF_MEMORY`), and
ignores SIGINT and SIGTERM: the host stops it. On Linux it forks a keeper first
(:mod:`lorenz.isolation.reaper`).
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from lorenz.contracts import Caller, ToolContext, ToolSpec
from lorenz.plugins.containment import PluginError
from lorenz.results import ToolResult, tool_failure
from lorenz.sandbox.confine import Confinement, confine
from lorenz.sandbox.policy import denial_message
from lorenz.settings.model import Settings
from lorenz.toolcall.client_input import NONE, RETRY, ClientInput
from lorenz.toolcall.execution import call_pack, failure_from_exception
from lorenz.toolcall.wire import ResultTooLarge, json_size_exceeds

from .loading import computed_permissions, linted, listed, start, survey
from .protocol import (
    CONVERTER,
    EXIT_OUT_OF_MEMORY,
    Failed,
    FrameReader,
    Launch,
    encode,
    read_frame,
    reply_result,
    small_reads,
)
from .reaper import SUBREAPING, keep

if TYPE_CHECKING:
    from lorenz.contracts import ToolProvider

__all__ = ["main"]

#: How often the child looks whether its parent is still the host (without prctl).
_PARENT_POLL_SECONDS = 0.5
#: Frames from the host are trusted; this only bounds a defect.
_HOST_FRAME_LIMIT = 1024 * 1024 * 1024


def _out_of_memory() -> None:
    os.write(2, b"lorenz: this pack ran out of memory (server.pack_memory_mb); exiting\n")
    os._exit(EXIT_OUT_OF_MEMORY)


def _protocol_fds() -> tuple[int, int]:
    """The frame pipes, moved off fd 0/1: stdin reads nothing and stdout writes to stderr."""
    fd_in, fd_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return fd_in, fd_out


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _watch_parent() -> None:
    """End this process when the host is gone, even while the pack holds the event loop or the
    GIL: an orphan must not spin on alone. Without a keeper (:mod:`lorenz.isolation.reaper`, which
    has the kernel's parent-death signal) a thread looks at the parent pid (which costs every
    call some GIL traffic, hence not where there is a keeper)."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(_PARENT_POLL_SECONDS)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="lorenz-parent-watch", daemon=True).start()


class _MemoryGuard:
    """The pack, except that a ``MemoryError`` ends the process (the host restarts it) instead of
    leaving a half-working interpreter behind."""

    def __init__(self, pack: ToolProvider) -> None:
        self.name = pack.name
        self._pack = pack

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        return self._pack.tool_specs(settings)

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        try:
            return await self._pack.execute_tool(name, input, context)
        except MemoryError:
            _out_of_memory()
            raise


class _Offering(_MemoryGuard):
    """One resource read (``name``: its URI) or prompt render, run like a call of the pack (its
    containment, its failures as results)."""

    def __init__(self, pack: ToolProvider, kind: str) -> None:
        super().__init__(pack)
        self._hook = "read_resource" if kind == "resource" else "get_prompt"

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        hook = getattr(self._pack, self._hook, None)
        if not callable(hook):
            missing = f"Resource not found: {name}" if self._hook == "read_resource" else f"Unknown prompt: {name}"
            return tool_failure(missing, reason="not_found")
        try:
            if self._hook == "read_resource":
                result: ToolResult = await hook(name, context)
            else:
                result = await hook(name, input, context)
        except MemoryError:
            _out_of_memory()
            raise
        return result


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
        self._offerings = {kind: _Offering(pack, kind) for kind in ("resource", "prompt")}
        self._confinement = confinement
        self._context = context
        self._out = out
        self._reader = FrameReader(_HOST_FRAME_LIMIT)
        self._tasks: dict[int, asyncio.Task[None]] = {}
        self.finished = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        for frame in self._reader.feed(data):
            op = frame.get("op")
            if op == "call":
                call = self._run(frame["id"], frame["nonce"], frame["tool"], frame["arguments"], frame)
                task = asyncio.get_running_loop().create_task(call)
                if not task.done():  # an eager task may have finished already
                    self._tasks[frame["id"]] = task
            elif op == "cancel":
                cancelled = self._tasks.get(frame["id"])
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
        out = self._out

        async def progress(done: float, total: float | None, message: str | None) -> None:
            event = {"op": "progress", "id": request_id, "nonce": nonce, "done": done, "total": total}
            out.write(encode({**event, "message": message}))

        async def log(level: str, message: str) -> None:
            out.write(encode({"op": "log", "id": request_id, "nonce": nonce, "level": level, "message": message}))

        enabled = frame.get("enabled")
        return ToolContext(
            settings=self._context.settings,
            http=self._context.http,
            progress_sink=progress if frame.get("progress") else None,
            log_sink=log if frame.get("log") else None,
            enabled=frozenset(enabled).__contains__ if isinstance(enabled, list) else None,
            client_input=_client_input(frame.get("input")),
            caller=_caller(frame.get("caller")),
        )

    async def _run(self, request_id: int, nonce: str, tool: str, arguments: Any, frame: Mapping[str, Any]) -> None:
        confinement = self._confinement
        watching = confinement.begin() if confinement is not None else None
        try:
            pack = self._offerings.get(frame.get("kind", "tool"), self._pack)
            result = await call_pack(pack, tool, arguments, self._call_context(request_id, nonce, frame))
        except asyncio.CancelledError:
            result = tool_failure(f"tool {tool} was cancelled")
        except BaseException as exc:
            # What call_pack lets through as the host's own (GeneratorExit; SystemExit or
            # KeyboardInterrupt after a signal, which this process ignores) is the pack's here:
            # left to the task, it would answer nothing and the call would hang to its timeout.
            result = failure_from_exception(PluginError(f"pack {self._pack.name}", "execute_tool", exc), self._context)
        finally:
            self._tasks.pop(request_id, None)
        denied = None
        if confinement is not None and watching is not None:
            denial = confinement.end(watching)
            if denial is not None and not result.success:
                result = tool_failure(denial_message(self._pack.name, denial))
                denied = denial.kind
        limit = self._context.settings.server.max_result_bytes
        if json_size_exceeds((result.result, getattr(result, "text", None)), limit):
            result = tool_failure(f"{tool} returned {ResultTooLarge(limit)} (server.max_result_bytes): ask for less")
        self._out.write(encode(reply_result(request_id, nonce, result, denied=denied)))

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
    hello, pack, settings = start(launch)
    if pack is None:
        _write_all(fd_out, encode(hello))
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
        _out_of_memory()
    loop.default_exception_handler(context)


def _limit_memory(megabytes: int) -> None:
    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main() -> int:
    fd_in, fd_out = _protocol_fds()
    # Ctrl-C in a terminal, or a SIGTERM to the whole process group (systemd, `kill -- -PGID`), is
    # the host's to handle: it stops its children in order.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    faulthandler.enable()  # a segfault's Python traceback reaches the host's log
    frame = read_frame(fd_in)
    if frame is None:
        return 0
    launch: Launch = CONVERTER.structure(frame, Launch)
    if launch.sys_path:
        sys.path[:] = launch.sys_path
    if SUBREAPING:
        keep((fd_in, fd_out))
    else:
        _watch_parent()
    try:
        if launch.memory_mb is not None:
            _limit_memory(launch.memory_mb)
        confinement = None
        if launch.sandbox is not None:
            try:  # before the pack's code runs, while this process has one thread
                confinement = confine(launch.sandbox)
            except OSError as exc:
                _write_all(fd_out, encode(Failed(op="failed", error=f"it could not be sandboxed: {exc}")))
                os._exit(0)
        if launch.mode == "survey":
            report, discovery = survey(launch.source)
            _write_all(fd_out, encode(report))
            _write_all(fd_out, encode(listed(discovery)))
        elif launch.mode == "permissions":
            _write_all(fd_out, encode(computed_permissions(launch)))
        elif launch.mode == "lint":
            _write_all(fd_out, encode(linted(launch.source)))
        else:
            # Not asyncio.run: it would wait at exit for the pack's threads, which may never end.
            asyncio.new_event_loop().run_until_complete(serve(launch, fd_in, fd_out, confinement))
    except MemoryError:
        _out_of_memory()
    sys.stderr.flush()
    os._exit(0)


def _caller(raw: Any) -> Caller | None:
    """The caller the host sent with the call (never its token: the host has none to send)."""
    if not isinstance(raw, Mapping):
        return None
    text = {key: raw.get(key) if isinstance(raw.get(key), str) else None for key in ("subject", "client_id", "issuer")}
    scopes = raw.get("scopes")
    return Caller(**text, scopes=tuple(s for s in scopes if isinstance(s, str)) if isinstance(scopes, list) else ())


def _client_input(raw: Any) -> ClientInput | None:
    """How the call may ask its client: a round always ends the call here (its state unsealed: the
    host seals it, or asks the client itself) and comes back with the answers; or why it cannot."""
    if not isinstance(raw, Mapping):
        return None
    if raw.get("mode") != RETRY:
        refusal = raw.get("refusal")
        return ClientInput(mode=NONE, refusal=refusal if isinstance(refusal, str) else None)
    state, responses = raw.get("state"), raw.get("responses")
    return ClientInput(
        mode=RETRY,
        state=state if isinstance(state, str) else None,
        responses=responses if isinstance(responses, Mapping) else None,
    )


if __name__ == "__main__":
    sys.exit(main())
