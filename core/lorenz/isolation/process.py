"""One isolated pack process as the host sees it: frames in and out over its pipes, and its stderr
logged under the pack's name (:mod:`lorenz.stderr_relay`). Everything here runs on the pool's
home loop (:mod:`lorenz.isolation.pool`)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import hmac
import logging
import os
import subprocess
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lorenz.stderr_relay import StderrLimits, StderrRelay

from . import reaper
from .frames import MAX_CONTROL_FRAME_BYTES, FrameReader, ProtocolError, small_reads
from .plan import Plan
from .protocol import Event, Failed, Ready, Reply, encode, structure
from .replies import read_event, read_reply
from .survey import child_command

if TYPE_CHECKING:
    from lorenz.sandbox.host import PackSandbox

__all__ = ["ChildProcess"]

logger = logging.getLogger("lorenz.isolation")

#: Each pack process's stderr: bursts of 200 lines or 256 KiB, then 20 lines and 16 KiB a second.
STDERR_LIMITS = StderrLimits()

#: After the process exits, how long to wait for its pipes to close (a grandchild may hold them).
_PIPES_GRACE_SECONDS = 0.5
#: Slack over ``server.max_result_bytes`` (twice: a result and its text) for the rest of a reply.
_REPLY_SLACK_BYTES = 1024 * 1024


class _Pipe(asyncio.Protocol):
    """One of a child's output pipes: its bytes to ``received``, its end to ``closed``."""

    def __init__(self, received: Callable[[bytes], None], closed: Callable[[], None]) -> None:
        self._received = received
        self._closed = closed

    def data_received(self, data: bytes) -> None:
        self._received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed()


class ChildProcess:
    """A spawned child: :attr:`ready` resolves with its first frame, :attr:`exited` with its exit
    code once it is gone (and reaped), each reply goes to ``on_reply`` and each progress or log
    event of a call in flight to ``on_event``.

    A plain :class:`subprocess.Popen` with its pipes on the loop (asyncio's subprocess transport
    would add a loop turn to every read, and a thread per child to reap it); the exit is seen
    through a pidfd where there is one."""

    def __init__(
        self,
        plan: Plan,
        on_reply: Callable[[ChildProcess, Reply], None],
        on_event: Callable[[Event], None],
        process: subprocess.Popen[bytes],
    ) -> None:
        self.plan = plan
        self._on_reply = on_reply
        self._on_event = on_event
        self._process = process
        self.pid = process.pid
        loop = asyncio.get_running_loop()
        self.ready: asyncio.Future[Ready | Failed] = loop.create_future()
        self.exited: asyncio.Future[int] = loop.create_future()
        #: The calls sent to this process and not answered yet: their ids, and the nonce each
        #: reply must echo.
        self.pending: dict[int, str] = {}
        #: Why the host killed it (a timeout, a protocol violation, stopping), if it did.
        self.kill_reason: str | None = None
        self._frames = FrameReader(MAX_CONTROL_FRAME_BYTES, fast=True)
        self._stderr = StderrRelay(logger, self._stderr_name, plan.secrets, STDERR_LIMITS)
        self._stdin: asyncio.WriteTransport | None = None
        self._outputs: list[asyncio.BaseTransport] = []
        self._open_outputs = 2

    @classmethod
    async def spawn(
        cls,
        plan: Plan,
        on_reply: Callable[[ChildProcess, Reply], None],
        on_event: Callable[[Event], None],
        sandboxing: PackSandbox | None = None,
    ) -> ChildProcess:
        """Start a child (from the loop's thread: on Linux it dies with that thread) and send it
        its :class:`~lorenz.isolation.protocol.Launch`."""
        loop = asyncio.get_running_loop()
        env = {name: value for name, value in os.environ.items() if name not in plan.withheld}
        if sandboxing is not None:
            env = sandboxing.env(env)
        if plan.memory_mb is not None:
            # glibc reserves 64 MiB of address space per thread arena, which a small limit cannot afford.
            env.setdefault("MALLOC_ARENA_MAX", "2")
        # In this (the loop's) thread on purpose, as asyncio's own subprocess_exec does: fork+exec
        # takes a millisecond, and the child's parent-death signal is tied to the forking thread.
        # A session of its own: a signal to the host's process group is the host's to sequence, and
        # without a keeper (lorenz.isolation.reaper) the host kills the child's group.
        process = subprocess.Popen(  # noqa: ASYNC220
            child_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        child = cls(plan, on_reply, on_event, process)
        stdin, _ = await loop.connect_write_pipe(asyncio.Protocol, process.stdin)
        assert isinstance(stdin, asyncio.WriteTransport)
        child._stdin = stdin
        for pipe, received in ((process.stdout, child._stdout), (process.stderr, child._stderr.feed)):
            transport, _ = await loop.connect_read_pipe(functools.partial(_Pipe, received, child._output_closed), pipe)
            small_reads(transport)
            child._outputs.append(transport)
        stderr = child._outputs[-1]
        assert isinstance(stderr, asyncio.ReadTransport)
        child._stderr.transport = stderr  # paused while its lines are being dropped
        child._watch_exit(loop)
        child.send(encode(plan.launch(sandboxing.sandbox if sandboxing is not None else None)))
        return child

    @property
    def alive(self) -> bool:
        """Ready for calls: it said it is ready, and it is not dying."""
        ready = self.ready
        if self.kill_reason is not None or self.exited.done() or not ready.done() or ready.exception() is not None:
            return False
        return isinstance(ready.result(), Ready)

    # -- input --------------------------------------------------------------------------

    def _stderr_name(self) -> str:
        return f"lorenz: pack {self.plan.pack} [pid {self.pid}]"

    def _stdout(self, data: bytes) -> None:
        try:
            for frame in self._frames.feed(data):
                self._received(frame)
        except ProtocolError as exc:
            self.kill(f"sent {exc}")

    def _received(self, frame: Any) -> None:
        if not self.ready.done():
            message: Ready | Failed = (
                structure(frame, Failed) if frame.get("op") == "failed" else structure(frame, Ready)
            )
            # From now on only replies, bounded by the result cap (a result and its text).
            limit = self.plan.settings.get("server", {}).get("max_result_bytes", MAX_CONTROL_FRAME_BYTES)
            self._frames.limit = 2 * int(limit) + _REPLY_SLACK_BYTES
            if isinstance(message, Ready):
                self.pid = message.pid  # the pack's own process (its keeper's child), as its stderr says
            self.ready.set_result(message)
            return
        if isinstance(frame, dict) and frame.get("op") in ("progress", "log"):
            event = read_event(frame)
            expected = self.pending.get(event.id)
            # Only the call's own context knows its nonce; a stray event (its call answered) is dropped.
            if expected is not None and hmac.compare_digest(event.nonce.encode(), expected.encode()):
                self._on_event(event)
            return
        reply = read_reply(frame)
        nonce = self.pending.get(reply.id)
        if nonce is None or not hmac.compare_digest(reply.nonce.encode(), nonce.encode()):
            # Pack code forging another call's result (or answering one twice): never delivered.
            msg = f"a result for a call it was not answering (id {reply.id})"
            raise ProtocolError(msg)
        del self.pending[reply.id]
        self._on_reply(self, reply)

    # -- the end ------------------------------------------------------------------------

    def _watch_exit(self, loop: asyncio.AbstractEventLoop) -> None:
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # no pidfd here: a thread waits for it
            # Host work, though a pack's call may start it: not on the pack's own threads.
            waiting = contextvars.Context().run(lambda: loop.run_in_executor(None, self._process.wait))
            waiting.add_done_callback(lambda _: self._exit_seen())
            return

        def readable() -> None:
            loop.remove_reader(pidfd)
            os.close(pidfd)
            self._process.wait()  # reaps it: it has exited
            self._exit_seen()

        loop.add_reader(pidfd, readable)

    def _exit_seen(self) -> None:
        if self._open_outputs:  # replies written before the end may still be in the pipe
            asyncio.get_running_loop().call_later(_PIPES_GRACE_SECONDS, self._gone)
        else:
            self._gone()

    def _output_closed(self) -> None:
        self._open_outputs -= 1
        if not self._open_outputs and self._process.returncode is not None:
            self._gone()

    def _gone(self) -> None:
        code = self._process.returncode
        if self.exited.done() or code is None:
            return
        self._stderr.flush()
        for transport in [self._stdin, *self._outputs]:
            if transport is not None:
                transport.close()
        if not self.ready.done():
            self.ready.set_exception(ChildGone(code))
        self.exited.set_result(code)

    # -- control ------------------------------------------------------------------------

    def send(self, frame: bytes) -> None:
        if self._stdin is not None and not self._stdin.is_closing():
            self._stdin.write(frame)

    def kill(self, reason: str) -> None:
        """Kill it and all it started, once; ``reason`` says why (the supervisor words the failures
        with it). Its process group is killed outright if it is not gone in a while."""
        if self.kill_reason is not None or self._process.returncode is not None:
            return
        self.kill_reason = reason
        reaper.kill(self._process)
        asyncio.get_running_loop().call_later(reaper.KEEPER_GRACE_SECONDS, self._kill_group)

    def _kill_group(self) -> None:
        if self._process.returncode is None:
            reaper.kill_group(self._process)

    async def stop(self, grace: float) -> None:
        """Ask it to stop (a ``stop`` frame, then end of stdin), and kill it after ``grace`` s."""
        if self.exited.done():
            return
        self.send(encode({"op": "stop"}))
        if self._stdin is not None:
            self._stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(self.exited), grace)
        except TimeoutError:
            self.kill("stopping")
            await asyncio.shield(self.exited)


class ChildGone(Exception):
    """The child exited before it said it was ready."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code
