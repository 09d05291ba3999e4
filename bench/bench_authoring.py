"""Cost of the typed builder (lorenz.authoring) per call, against a hand-written pack doing the same
work, plus definition-time schema generation and `lorenz lint` over the installed packs.

Two workloads, both through `execute_tool`: the weather example (its own markdown `format`) and a
search returning five nested items (the kit's default pretty-JSON text). The plain pack returns a
bare `tool_success(dict)`, so the host's rendering of it (`encode_payload`, what `tools/call` does
with a plain result) is counted on its side. Typed and plain take turns in blocks within each round,
so a ratio is read in one machine state; the medians over the rounds are printed.

Run: .venv/bin/python bench/bench_authoring.py [--rounds 7] [-n 3000]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
from attrs import field, frozen

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "weather"))

from lorenz_weather.tools import PACK, CityList, Forecast, ForecastArgs, forecast_for

from lorenz import Settings, ToolContext, ToolSpec, tool_success
from lorenz.authoring import CallContext, Pack, describe, input_schema, tool, widened_output_schema
from lorenz.settings.model import DEFAULT_MAX_RESULT_BYTES
from lorenz.toolcall.wire import encode_payload


class PlainPack:
    """The same forecast as a plain ToolProvider with hand-written checks."""

    name = "plain"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [ToolSpec(name="plain_get_forecast", description="d")]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        city, days = input.get("city"), input.get("days", 3)
        if not isinstance(city, str) or type(days) is not int:
            raise ValueError("bad")
        forecast = forecast_for(city, days, "metric")
        return tool_success(
            {
                "city": forecast.city,
                "units": forecast.units,
                "days": [
                    {
                        "day": d.day,
                        "summary": d.summary,
                        "high": d.high,
                        "low": d.low,
                        "precipitation_percent": d.precipitation_percent,
                    }
                    for d in forecast.days
                ],
            }
        )


# -- a search returning five nested items -------------------------------------------------------


@frozen(kw_only=True)
class Person:
    name: str
    email: str | None = None


@frozen(kw_only=True)
class Item:
    id: str
    title: str
    state: str
    labels: list[str]
    assignee: Person | None
    score: int


@frozen(kw_only=True)
class SearchArgs:
    query: str = field(metadata=describe("Words to look for.", minLength=1))
    limit: int = field(default=5, metadata=describe("At most this many items.", minimum=1, maximum=50))


@frozen(kw_only=True)
class SearchResult:
    items: list[Item]
    total: int


def found(query: str, limit: int) -> list[Item]:
    return [
        Item(
            id=f"BOARD-{i}",
            title=f"{query}: issue number {i}",
            state="Todo",
            labels=["bug", "ui"],
            assignee=Person(name="Ann", email="ann@example.com"),
            score=100 - i,
        )
        for i in range(min(limit, 5))
    ]


@tool(name="bench_search", description="Search the items.", input=SearchArgs, output=SearchResult)
async def search(ctx: CallContext, args: SearchArgs) -> SearchResult:
    return SearchResult(items=found(args.query, args.limit), total=5)


SEARCH = Pack(name="bench", tools=[search])


class PlainSearch:
    """The same search as a plain ToolProvider with hand-written checks."""

    name = "plain"

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        query, limit = input.get("query"), input.get("limit", 5)
        if set(input) - {"query", "limit"} or not isinstance(query, str) or not query:
            raise ValueError("bad")
        if type(limit) is not int or not 1 <= limit <= 50:
            raise ValueError("bad")
        items = [
            {
                "id": item.id,
                "title": item.title,
                "state": item.state,
                "labels": list(item.labels),
                "assignee": {"name": item.assignee.name, "email": item.assignee.email} if item.assignee else None,
                "score": item.score,
            }
            for item in found(query, limit)
        ]
        return tool_success({"items": items, "total": 5})


# -- timing ---------------------------------------------------------------------------------------


def typed_call(pack: Any, name: str, args: dict[str, Any], context: Any) -> Callable[[], Awaitable[Any]]:
    async def call() -> Any:
        return await pack.execute_tool(name, args, context)

    return call


def plain_call(pack: Any, name: str, args: dict[str, Any], context: Any) -> Callable[[], Awaitable[Any]]:
    async def call() -> Any:
        result = await pack.execute_tool(name, args, context)
        return encode_payload(result.payload(), max_bytes=DEFAULT_MAX_RESULT_BYTES)  # the host's side

    return call


async def block(call: Callable[[], Awaitable[Any]], n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        await call()
    return (time.perf_counter() - start) / n


async def paired(typed: Callable[[], Awaitable[Any]], plain: Callable[[], Awaitable[Any]], rounds: int, n: int) -> None:
    for call in (typed, plain):
        await block(call, 300)
    typed_times, plain_times, ratios = [], [], []
    for index in range(rounds):
        order = (typed, plain) if index % 2 == 0 else (plain, typed)
        times = {call: await block(call, n) for call in order}
        typed_times.append(times[typed])
        plain_times.append(times[plain])
        ratios.append(times[typed] / times[plain])
    typed_us, plain_us = statistics.median(typed_times) * 1e6, statistics.median(plain_times) * 1e6
    spread = f"{min(ratios):.2f}–{max(ratios):.2f}"
    print(f"  typed {typed_us:.1f} µs/call, plain + host rendering {plain_us:.1f} µs/call")
    print(f"  typed ÷ plain: {statistics.median(ratios):.2f}× (median of {rounds} paired rounds; {spread})")


async def main(rounds: int, n: int) -> None:
    async with httpx.AsyncClient() as http:
        context = ToolContext(settings=Settings(), http=http)
        forecast = {"city": "Oslo", "days": 3}
        print("weather_get_forecast (3 days, its markdown format):")
        await paired(
            typed_call(PACK, "weather_get_forecast", forecast, context),
            plain_call(PlainPack(), "plain_get_forecast", forecast, context),
            rounds,
            n,
        )
        query = {"query": "login"}
        print("search returning five nested items (default pretty-JSON text):")
        await paired(
            typed_call(SEARCH, "bench_search", query, context),
            plain_call(PlainSearch(), "plain_search", query, context),
            rounds,
            n,
        )
        bad = typed_call(PACK, "weather_get_forecast", {"city": "Oslo", "querry": 1}, context)
        refused = statistics.median([await block(bad, n) for _ in range(3)])
        print(f"typed, refused argument (Unrecognized key): {refused * 1e6:.1f} µs/call")
    start = time.perf_counter()
    for _ in range(200):
        input_schema(ForecastArgs)
        widened_output_schema(Forecast)
        widened_output_schema(CityList)
    print(
        f"schema generation for one tool (input + widened output): {(time.perf_counter() - start) / 200 * 1e6:.0f} µs"
    )


def lint_wall() -> None:
    lorenz = Path(sys.executable).with_name("lorenz")
    start = time.perf_counter()
    subprocess.run([str(lorenz), "lint"], capture_output=True, check=False)
    print(
        f"`lorenz lint` over the installed packs (wall, incl. interpreter start): {time.perf_counter() - start:.2f} s"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("-n", type=int, default=3000, help="calls per block")
    parser.add_argument("--no-lint", action="store_true", help="skip timing `lorenz lint`")
    options = parser.parse_args()
    anyio.run(main, options.rounds, options.n)
    if not options.no_lint:
        lint_wall()
