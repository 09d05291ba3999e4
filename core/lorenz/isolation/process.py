"""One isolated pack process as the host sees it: frames in and out over its pipes, and its stderr
logged line by line, redacted, under the pack's name. Everything here runs on the isolation loop
(:mod:`lorenz.isolation.pool`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
from collections.abc import Callable
from typing import Any

from ..redact import redact_text
from .plan import Plan
from .protocol import MAX_CONTROL_FRAME_BYTES, Failed, FrameReader, ProtocolError, Ready, Reply, encode, structure
from .survey import child_command

__all__ = ["ChildProcess"]

logger = logging.getLogger("lorenz.isolation")

#: After the process exits, how long to wait for its pipes to close (a grandchild may hold them).
_PIPES_GRACE_SECONDS = 0.5
#: One logged line of a child's stderr is cut at this many characters.
_MAX_LOG_LINE = 4000
#: Slack over ``server.max_result_bytes`` (twice: a result and its text) for the rest of a reply.
_REPLY_SLACK_BYTES = 1024 * 1024


class ChildProcess(asyncio.SubprocessProtocol):
    """A spawned child: :attr:`ready` resolves with its first frame, :attr:`exited` with its exit
    code once it is gone (and reaped), and each reply goes to ``on_reply``."""

    def __init__(self, plan: Plan, on_reply: Callable[[ChildProcess, Reply], None]) -> None:
        self.plan = plan
        self._on_reply = on_reply
        loop = asyncio.get_running_loop()
        self.ready: asyncio.Future[Ready | Failed] = loop.create_future()
        self.exited: asyncio.Future[int] = loop.create_future()
        self.transport: asyncio.SubprocessTransport | None = None
        self.pid = 0
        #: Ids of the calls sent to this process and not answered yet.
        self.pending: set[int] = set()
        #: Why the host killed it (a timeout, a protocol violation, stopping), if it did.
        self.kill_reason: str | None = None
        self._frames = FrameReader(MAX_CONTROL_FRAME_BYTES)
        self._stderr = bytearray()

    @classmethod
    async def spawn(cls, plan: Plan, on_reply: Callable[[ChildProcess, Reply], None]) -> ChildProcess:
        loop = asyncio.get_running_loop()
        env = {name: value for name, value in os.environ.items() if name not in plan.withheld}
        if plan.memory_mb is not None:
            # glibc reserves 64 MiB of address space per thread arena, which a small limit cannot afford.
            env.setdefault("MALLOC_ARENA_MAX", "2")
        child = cls(plan, on_reply)
        await loop.subprocess_exec(
            lambda: child,
            *child_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        child.send(encode(plan.launch()))
        return child

    @property
    def alive(self) -> bool:
        """Ready for calls: it said it is ready, and it is not dying."""
        ready = self.ready
        if self.kill_reason is not None or self.exited.done() or not ready.done() or ready.exception() is not None:
            return False
        return isinstance(ready.result(), Ready)

    # -- asyncio.SubprocessProtocol ---------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport
        self.pid = transport.get_pid()

    def pipe_data_received(self, fd: int, data: bytes | str) -> None:
        assert isinstance(data, bytes)
        if fd == 2:
            self._log_stderr(data)
            return
        try:
            frames = self._frames.feed(data)
            for frame in frames:
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
            self.ready.set_result(message)
            return
        reply = structure(frame, Reply)
        if reply.id in self.pending:
            self.pending.discard(reply.id)
            self._on_reply(self, reply)

    def process_exited(self) -> None:
        asyncio.get_running_loop().call_later(_PIPES_GRACE_SECONDS, self._gone)

    def connection_lost(self, exc: Exception | None) -> None:
        self._gone()

    def _gone(self) -> None:
        if self.exited.done() or self.transport is None:
            return
        code = self.transport.get_returncode()
        if code is None:  # pipes closed but the process lives on: connection_lost comes when it exits
            return
        self._flush_stderr()
        self.transport.close()
        if not self.ready.done():
            self.ready.set_exception(ChildGone(code))
        self.exited.set_result(code)

    # -- control ------------------------------------------------------------------------

    def send(self, frame: bytes) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        stdin = self.transport.get_pipe_transport(0)
        if stdin is not None and not stdin.is_closing():
            assert isinstance(stdin, asyncio.WriteTransport)
            stdin.write(frame)

    def kill(self, reason: str) -> None:
        """SIGKILL, once; ``reason`` says why (the supervisor words the failures with it)."""
        if self.kill_reason is not None or self.exited.done() or self.transport is None:
            return
        self.kill_reason = reason
        with contextlib.suppress(ProcessLookupError):
            self.transport.kill()

    async def stop(self, grace: float) -> None:
        """Ask it to stop (a ``stop`` frame, then end of stdin), and kill it after ``grace`` s."""
        if self.exited.done():
            return
        self.send(encode({"op": "stop"}))
        if self.transport is not None:
            stdin = self.transport.get_pipe_transport(0)
            if stdin is not None:
                stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(self.exited), grace)
        except TimeoutError:
            self.kill("stopping")
            await asyncio.shield(self.exited)

    # -- stderr -------------------------------------------------------------------------

    def _log_stderr(self, data: bytes) -> None:
        self._stderr += data
        *lines, rest = bytes(self._stderr).split(b"\n")
        if len(rest) > _MAX_LOG_LINE:
            lines.append(rest)
            rest = b""
        self._stderr = bytearray(rest)
        for line in lines:
            self._log_line(line)

    def _flush_stderr(self) -> None:
        if self._stderr:
            self._log_line(bytes(self._stderr))
            self._stderr.clear()

    def _log_line(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace").rstrip()
        if text:
            text = redact_text(text[:_MAX_LOG_LINE], self.plan.secrets)
            logger.warning("lorenz: pack %s [pid %d]: %s", self.plan.pack, self.pid, text)


class ChildGone(Exception):
    """The child exited before it said it was ready."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code
