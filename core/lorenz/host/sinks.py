"""Call-record sinks (``lorenz_call_record``) fed off the call's path.

Each configured sink has a bounded queue and a task of its own draining it: recording a call only
puts its record on the queue (never waits), so a sink that is slow, hangs or raises never slows
or fails a call. A full queue drops the record (counted, and logged once per hundred); a record a
sink takes longer than :data:`SINK_SECONDS` over, or raises on, is counted and logged likewise.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from lorenz.calllog.record import CallRecord
from lorenz.results import error_message
from lorenz.toolcall.extensions import Named

__all__ = ["QUEUE_RECORDS", "SINK_SECONDS", "SinkPump", "Sinks"]

logger = logging.getLogger("lorenz.host")

#: Records waiting for one sink, at most; past it new records are dropped.
QUEUE_RECORDS = 1000
#: How long a sink may take over one record.
SINK_SECONDS = 5.0
#: How long the host waits, as it stops, for a sink to take what is queued, then to ``aclose()``.
CLOSE_SECONDS = 5.0
#: A failure or drop is logged the first time and then once per this many.
_LOG_EVERY = 100


class SinkPump:
    """One sink's queue and the task that drains it (started with the first record)."""

    def __init__(self, sink: Named) -> None:
        self.sink = sink
        self.queue: asyncio.Queue[Mapping[str, Any]] = asyncio.Queue(QUEUE_RECORDS)
        self.task: asyncio.Task[None] | None = None
        self.delivered = self.dropped = self.failed = 0

    def offer(self, record: Mapping[str, Any]) -> None:
        if self.task is None:  # recording runs on the serving loop
            self.task = asyncio.get_running_loop().create_task(self._drain(), name=f"lorenz sink {self.sink.name}")
        try:
            self.queue.put_nowait(record)
        except asyncio.QueueFull:
            self.dropped += 1
            if self.dropped % _LOG_EVERY == 1:
                logger.warning(
                    "lorenz: call-record sink %s is behind: %d records dropped so far", self.sink.name, self.dropped
                )

    async def _drain(self) -> None:
        while True:
            record = await self.queue.get()
            try:
                async with asyncio.timeout(SINK_SECONDS):
                    await self.sink.obj(record)
                self.delivered += 1
            except Exception as exc:  # its own fault, never the call's
                self.failed += 1
                if self.failed % _LOG_EVERY == 1:
                    what = f"took over {SINK_SECONDS:g} s" if isinstance(exc, TimeoutError) else error_message(exc)
                    logger.warning(
                        "lorenz: call-record sink %s failed (%d so far): %s", self.sink.name, self.failed, what
                    )
            finally:
                self.queue.task_done()

    def health(self) -> dict[str, int]:
        return {
            "delivered": self.delivered,
            "queued": self.queue.qsize(),
            "dropped": self.dropped,
            "failed": self.failed,
        }

    async def aclose(self) -> None:
        """Let the sink take what is queued (bounded), stop the task, and await its ``aclose()``."""
        if self.task is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLOSE_SECONDS):
                    await self.queue.join()
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        close = getattr(self.sink.obj, "aclose", None)  # declared optional: docs/api.md
        if callable(close):
            try:
                async with asyncio.timeout(CLOSE_SECONDS):
                    await close()
            except Exception as exc:
                logger.warning("lorenz: call-record sink %s: aclose() failed: %s", self.sink.name, error_message(exc))


class Sinks:
    """The pumps of the sinks the served workflows configured, by sink."""

    def __init__(self) -> None:
        self._pumps: dict[int, SinkPump] = {}

    def offer(self, sinks: tuple[Named, ...], record: CallRecord) -> None:
        """Queue ``record`` for each of ``sinks`` (in the running loop), each its own copy; never
        waits."""
        for sink in sinks:
            pump = self._pumps.get(id(sink))
            if pump is None:  # kept in the dict, so its id is not reused while it is there
                pump = self._pumps[id(sink)] = SinkPump(sink)
            pump.offer(record.to_json())

    def health(self) -> dict[str, dict[str, int]]:
        return {pump.sink.name: pump.health() for pump in self._pumps.values()}

    async def close(self, keep: tuple[Named, ...] = ()) -> None:
        """Close every pump but those of ``keep`` (the sinks still configured)."""
        kept = {id(sink) for sink in keep}
        for key, pump in list(self._pumps.items()):
            if key not in kept:
                del self._pumps[key]
                await pump.aclose()
