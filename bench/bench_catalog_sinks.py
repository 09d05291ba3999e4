"""What catalog shapers and call-record sinks add per call, on the host's side of them:

- ``shape_catalog`` with one pass-through shaper, over 10 and over 200 tools (run for each
  ``tools/list`` and each ``tools/call`` when a shaper is named; none named: not run at all);
- one rewording shaper over 200 tools (each tool ``attrs.evolve``d, then checked);
- queuing one call's record for one sink (``Sinks.offer``: the record's dict and a queue put;
  the sink itself runs in its own task, off the call's path).

Run: .venv/bin/python bench/bench_catalog_sinks.py
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import attrs

from lorenz import Listing, ToolSpec
from lorenz.calllog.record import CallRecord
from lorenz.host.sinks import Sinks
from lorenz.toolcall.catalog import shape_catalog
from lorenz.toolcall.extensions import Named

ROUNDS = 20_000


class PassThrough:
    async def __call__(self, tools: tuple[ToolSpec, ...], listing: Listing) -> Sequence[ToolSpec]:
        return tools


class Reword:
    async def __call__(self, tools: tuple[ToolSpec, ...], listing: Listing) -> Sequence[ToolSpec]:
        return [attrs.evolve(tool, description="(shaped) " + tool.description) for tool in tools]


class Drop:
    async def __call__(self, record: Any) -> None:
        return None


def tools(count: int) -> tuple[ToolSpec, ...]:
    return tuple(ToolSpec(name=f"tool_{n}", description=f"Tool number {n}.") for n in range(count))


async def per_shaping(shaper: Any, count: int, rounds: int) -> float:
    named, specs, listing = (Named("bench", shaper),), tools(count), Listing(token_name="ci")
    started = time.perf_counter()
    for _ in range(rounds):
        await shape_catalog(named, specs, listing, budget=60.0)
    return (time.perf_counter() - started) / rounds * 1e6


async def per_record(rounds: int) -> float:
    sinks, named = Sinks(), (Named("bench", Drop()),)
    record = CallRecord(
        ts=CallRecord.now(), tool="echo", pack="echo", distribution=None, duration_ms=1.0, outcome="success"
    )
    started = time.perf_counter()
    for n in range(rounds):
        sinks.offer(named, record)
        if n % 500 == 499:
            await asyncio.sleep(0)  # let the sink's task drain, as the loop does between requests
    took = (time.perf_counter() - started) / rounds * 1e6
    await sinks.close()
    return took


async def main() -> None:
    print(f"shape_catalog, pass-through, 10 tools:   {await per_shaping(PassThrough(), 10, ROUNDS):7.2f} µs")
    print(f"shape_catalog, pass-through, 200 tools:  {await per_shaping(PassThrough(), 200, ROUNDS // 10):7.2f} µs")
    print(f"shape_catalog, rewording, 200 tools:     {await per_shaping(Reword(), 200, ROUNDS // 20):7.2f} µs")
    print(f"Sinks.offer, one sink, per record:       {await per_record(ROUNDS):7.2f} µs")


if __name__ == "__main__":
    asyncio.run(main())
