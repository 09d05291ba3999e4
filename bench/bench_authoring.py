"""Cost of the typed builder (lorenz.authoring) per call, against a hand-written pack doing the same
work, plus definition-time schema generation and `lorenz lint` over the installed packs.

Run: .venv/bin/python bench/bench_authoring.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "weather"))

from lorenz_weather.tools import PACK, CityList, Forecast, ForecastArgs, forecast_for

from lorenz import Settings, ToolContext, ToolSpec, tool_success
from lorenz.authoring import input_schema, widened_output_schema

N = 5000


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


async def per_call(pack: Any, name: str, args: dict[str, Any]) -> float:
    async with httpx.AsyncClient() as http:
        context = ToolContext(settings=Settings(), http=http)
        for _ in range(200):
            await pack.execute_tool(name, args, context)
        runs = []
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(N):
                await pack.execute_tool(name, args, context)
            runs.append((time.perf_counter() - start) / N)
        return statistics.median(runs)


async def main() -> None:
    args = {"city": "Oslo", "days": 3}
    typed = await per_call(PACK, "weather_get_forecast", args)
    plain = await per_call(PlainPack(), "plain_get_forecast", args)
    bad = await per_call(PACK, "weather_get_forecast", {"city": "Oslo", "querry": 1})
    print(f"typed weather_get_forecast (3 days, markdown format): {typed * 1e6:.1f} µs/call")
    print(f"plain pack, same forecast, hand checks, no text:     {plain * 1e6:.1f} µs/call")
    print(f"typed, refused argument (Unrecognized key):          {bad * 1e6:.1f} µs/call")
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


anyio.run(main)
lint_wall()
