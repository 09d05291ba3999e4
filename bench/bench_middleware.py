"""Cost of call middleware per tool call, through :func:`lorenz.toolcall.call.call_tool` (the one
call path of the host, ``lorenz call`` and ``lorenz.testing``), with a pack that answers at once:

- none configured (the default): the chain's only trace is one test of ``tools.middleware``;
- one pass-through layer, and ``lorenz-quota`` with one in-memory token bucket that never refuses.

The figures are each call's whole cost; the differences are what middleware adds.

Run: .venv/bin/python bench/bench_middleware.py
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from lorenz import Call, CallNext, ServerSettings, Settings, ToolResult, ToolSpec, tool_success
from lorenz.contracts import ToolContext
from lorenz.toolcall.call import ToolTable, call_tool
from lorenz.toolcall.execution import ToolRunner
from lorenz.toolcall.middleware import Layer

CALLS = 20_000


class Echo:
    name = "echo"

    async def execute_tool(self, name: str, input: Any, context: Any) -> ToolResult:
        return tool_success({"ok": True})


class PassThrough:
    async def __call__(self, call: Call, call_next: CallNext) -> ToolResult:
        return await call_next(call)


def table(layers: tuple[Layer, ...]) -> ToolTable:
    spec = ToolSpec(name="echo", description="Echo.", input_schema={"type": "object"})
    settings = Settings(server=ServerSettings())
    return ToolTable(
        settings=settings,
        specs=[spec],
        owners={"echo": Echo()},  # type: ignore[dict-item]
        unsupported=lambda name: tool_success(None),
        middleware=layers,
    ).compile()


async def per_call(tools: ToolTable) -> float:
    runner = ToolRunner()
    context = ToolContext(settings=tools.settings, http=None)  # type: ignore[arg-type]

    def make() -> ToolContext:
        return context

    for _ in range(500):  # warm up
        await call_tool(tools, "echo", {}, make, runner)
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(CALLS):
            await call_tool(tools, "echo", {}, make, runner)
        best = min(best, (time.perf_counter() - started) / CALLS)
    return best


async def main() -> None:
    from lorenz_quota.middleware import QuotaMiddleware
    from lorenz_quota.options import parse_options

    settings = Settings(server=ServerSettings())
    quota = QuotaMiddleware(parse_options({"limits": [{"rate": 1e9, "burst": 1_000_000_000}]}, settings))
    cases = {
        "no middleware": (),
        "one pass-through layer": (Layer("pass", PassThrough()),),
        "lorenz-quota (memory, one bucket)": (Layer("quota", quota),),
    }
    baseline = None
    for label, layers in cases.items():
        cost = await per_call(table(layers))
        baseline = cost if baseline is None else baseline
        print(f"{label:36s} {cost * 1e6:7.2f} µs/call  (+{(cost - baseline) * 1e6:5.2f} µs)")
    tools = table(())
    started = time.perf_counter()
    for _ in range(1_000_000):
        if tools.middleware:
            raise AssertionError
    print(f"{'the empty-chain test itself':36s} {(time.perf_counter() - started) * 1e3:7.3f} ns/call")


if __name__ == "__main__":
    asyncio.run(main())
