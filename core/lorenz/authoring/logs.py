"""``ctx.log``: a logger whose records also go to the client as ``notifications/message`` when it
asked for them. Logging stays synchronous for the handler; each message is queued and sent in
order by one task, and the call waits for the queue before it answers, so no message arrives
after the result."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import MutableMapping

    from lorenz.contracts import LogSink

__all__ = ["ClientLog", "mcp_level"]


def mcp_level(level: int) -> str:
    """The MCP (RFC 5424) level of a :mod:`logging` level."""
    if level >= logging.CRITICAL:
        return "critical"
    if level >= logging.ERROR:
        return "error"
    if level >= logging.WARNING:
        return "warning"
    if level >= logging.INFO:
        return "info"
    return "debug"


class ClientLog(logging.LoggerAdapter):  # type: ignore[type-arg]
    """A :class:`logging.LoggerAdapter` over the server's logger: ``ctx.log.info("...")`` logs as
    before, and is also sent to the client (redacted by the host) when there is a sink."""

    def __init__(self, logger: logging.Logger, sink: LogSink | None = None) -> None:
        super().__init__(logger, {})
        self._sink = sink
        self._pending: deque[tuple[str, str]] = deque()
        self._task: asyncio.Task[None] | None = None

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        return msg, kwargs

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 1  # the record names the caller's line
        super().log(level, msg, *args, **kwargs)
        if self._sink is None:
            return
        try:
            text = str(msg) % args if args else str(msg)
        except Exception:  # a bad format string still logs something
            text = " ".join(str(part) for part in (msg, *args))
        self._pending.append((mcp_level(level), text))
        self._start()

    def _start(self) -> None:
        if self._task is not None and not self._task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # logged from a thread: sent when the call ends
            return
        self._task = loop.create_task(self._drain())

    async def _drain(self) -> None:
        sink = self._sink
        while self._pending and sink is not None:
            level, text = self._pending.popleft()
            try:
                await sink(level, text)
            except Exception:  # a client that went away never fails the tool
                continue

    async def flush(self) -> None:
        """Send whatever is still queued (called before the call answers)."""
        task = self._task
        if task is not None and task is not asyncio.current_task():
            await asyncio.shield(task)  # the drain task outlives a cancellation here
        await self._drain()
