"""The ``weather`` pack: a deterministic forecast (a pure function of city and day), the city list,
and a write tool that stays disabled unless the workflow enables writes."""

from __future__ import annotations

import hashlib
from typing import Literal

from attrs import field, frozen

from lorenz.authoring import CallContext, ErrorContract, Pack, Permissions, describe, disabled, hints, tool

__all__ = ["PACK", "CITIES", "forecast_for"]

Units = Literal["metric", "imperial"]

#: The cities the pack knows, with a base temperature (°C) that seeds their forecast.
CITIES: dict[str, float] = {
    "Oslo": 6.0,
    "Lisbon": 18.0,
    "Nairobi": 22.0,
    "Reykjavik": 3.0,
    "Singapore": 28.0,
    "Toronto": 9.0,
}

SUMMARIES = ("Sunny", "Partly cloudy", "Overcast", "Light rain", "Showers", "Windy")


@frozen(kw_only=True)
class WeatherOptions:
    """``tools.weather`` in WORKFLOW.md."""

    allow_writes: bool = field(default=False, metadata=describe("Enable weather_set_alert."))
    units: Units = field(default="metric", metadata=describe("Default units for forecasts."))


# -- weather_get_forecast ------------------------------------------------------------------------


@frozen(kw_only=True)
class ForecastArgs:
    city: str = field(metadata=describe("City name, as listed by weather_list_cities (e.g. Oslo)."))
    days: int = field(default=3, metadata=describe("How many days to forecast, 1 to 7.", minimum=1, maximum=7))
    units: Units | None = field(
        default=None, metadata=describe("metric (°C) or imperial (°F); defaults to the pack's option.")
    )


@frozen(kw_only=True)
class DayForecast:
    day: int = field(metadata=describe("Day number, 1 is tomorrow."))
    summary: str = field(metadata=describe("Sky conditions in a few words."))
    high: float = field(metadata=describe("Daily high temperature in the forecast's units."))
    low: float = field(metadata=describe("Daily low temperature in the forecast's units."))
    precipitation_percent: int = field(metadata=describe("Chance of precipitation, 0 to 100."))


@frozen(kw_only=True)
class Forecast:
    city: str = field(metadata=describe("The city the forecast is for."))
    units: Units = field(metadata=describe("Units of every temperature."))
    days: list[DayForecast] = field(metadata=describe("One entry per forecast day, in order."))


def _noise(city: str, day: int, salt: str) -> int:
    digest = hashlib.sha256(f"{city}|{day}|{salt}".encode()).digest()
    return digest[0]


def forecast_for(city: str, days: int, units: Units) -> Forecast:
    """The forecast: the same inputs always give the same numbers."""
    base = CITIES[city]
    entries = []
    for day in range(1, days + 1):
        high = base + _noise(city, day, "high") % 7
        low = high - 3 - _noise(city, day, "low") % 6
        if units == "imperial":
            high, low = high * 9 / 5 + 32, low * 9 / 5 + 32
        entries.append(
            DayForecast(
                day=day,
                summary=SUMMARIES[_noise(city, day, "sky") % len(SUMMARIES)],
                high=round(high, 1),
                low=round(low, 1),
                precipitation_percent=_noise(city, day, "rain") % 101,
            )
        )
    return Forecast(city=city, units=units, days=entries)


def render_forecast(forecast: Forecast) -> str:
    symbol = "°C" if forecast.units == "metric" else "°F"
    lines = [f"# {forecast.city}: {len(forecast.days)}-day forecast ({forecast.units})", ""]
    for entry in forecast.days:
        lines.append(
            f"- Day {entry.day}: {entry.summary}, high {entry.high}{symbol}, low {entry.low}{symbol}, "
            f"{entry.precipitation_percent}% chance of precipitation"
        )
    return "\n".join(lines)


def _match_city(name: str) -> str | None:
    wanted = name.strip().casefold()
    return next((city for city in CITIES if city.casefold() == wanted), None)


@tool(
    name="weather_get_forecast",
    title="Get forecast",
    description=(
        "Get a daily weather forecast (summary, high, low, chance of precipitation) for one of the "
        "supported cities, for 1 to 7 days ahead."
    ),
    annotations=hints(read_only=True, idempotent=True, open_world=False),
    input=ForecastArgs,
    output=Forecast,
    errors=[
        ErrorContract(
            reason="city_not_found",
            when="The city is not one of the supported cities.",
            recovery="Call weather_list_cities and retry with one of the listed names.",
        )
    ],
    format=render_forecast,
)
async def get_forecast(ctx: CallContext, args: ForecastArgs) -> Forecast:
    city = _match_city(args.city)
    if city is None:
        raise ctx.fail("city_not_found", f"No forecast for {args.city!r}: it is not a supported city.")
    options: WeatherOptions = ctx.options
    return forecast_for(city, args.days, args.units or options.units)


# -- weather_list_cities --------------------------------------------------------------------------


@frozen(kw_only=True)
class NoArgs:
    """No arguments."""


@frozen(kw_only=True)
class CityList:
    cities: list[str] = field(metadata=describe("Every supported city name, alphabetically."))


@tool(
    name="weather_list_cities",
    title="List cities",
    description="List the city names weather_get_forecast accepts.",
    annotations=hints(read_only=True, idempotent=True, open_world=False),
    input=NoArgs,
    output=CityList,
)
async def list_cities(ctx: CallContext, args: NoArgs) -> CityList:
    return CityList(cities=sorted(CITIES))


# -- weather_set_alert (disabled unless tools.weather.allow_writes) ------------------------------


@frozen(kw_only=True)
class AlertArgs:
    city: str = field(metadata=describe("City to watch, as listed by weather_list_cities."))
    above: float = field(metadata=describe("Alert when a daily high exceeds this temperature (°C)."))


@frozen(kw_only=True)
class Alert:
    city: str = field(metadata=describe("The watched city."))
    above: float = field(metadata=describe("The threshold in °C."))
    triggered_days: list[int] = field(metadata=describe("Forecast days (of the next 7) above the threshold."))


@tool(
    name="weather_set_alert",
    title="Set alert",
    description="Watch a city and report which of the next 7 days exceed a temperature threshold.",
    annotations=hints(read_only=False, destructive=False, idempotent=True, open_world=False),
    input=AlertArgs,
    output=Alert,
    errors=[
        ErrorContract(
            reason="city_not_found",
            when="The city is not one of the supported cities.",
            recovery="Call weather_list_cities and retry with one of the listed names.",
        )
    ],
)
async def set_alert(ctx: CallContext, args: AlertArgs) -> Alert:
    city = _match_city(args.city)
    if city is None:
        raise ctx.fail("city_not_found", f"Cannot watch {args.city!r}: it is not a supported city.")
    week = forecast_for(city, 7, "metric")
    return Alert(city=city, above=args.above, triggered_days=[d.day for d in week.days if d.high > args.above])


PACK = Pack(
    name="weather",
    description="Deterministic weather forecasts for a handful of cities.",
    options=WeatherOptions,
    # Forecasts are computed, not fetched: sandboxed, the pack needs nothing.
    permissions=Permissions(),
    tools=[
        get_forecast,
        list_cities,
        disabled(
            set_alert,
            reason="Writes are turned off in this workflow.",
            hint="tools.weather.allow_writes: true",
            unless=lambda options: options.allow_writes,
        ),
    ],
)
