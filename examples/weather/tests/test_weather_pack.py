"""lorenz-weather through lorenz.testing: the contract, the tools in-process and over MCP."""

from __future__ import annotations

import pytest
from lorenz_weather import PACK
from lorenz_weather.tools import forecast_for

from lorenz.testing import assert_pack_contract

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_pack_keeps_the_contract() -> None:
    """Names, descriptions, schemas, error contracts and format parity all pass the lint."""
    assert_pack_contract(PACK)


def test_forecast_is_deterministic() -> None:
    """The same city and day always give the same forecast."""
    assert forecast_for("Oslo", 3, "metric") == forecast_for("Oslo", 3, "metric")
    assert forecast_for("Oslo", 1, "imperial").days[0].high > forecast_for("Oslo", 1, "metric").days[0].high


async def test_forecast_over_mcp(lorenz_host) -> None:
    """The forecast arrives as structuredContent and as markdown text."""
    host = lorenz_host(PACK)
    outcome = await host.call_tool("weather_get_forecast", {"city": "lisbon", "days": 2})
    assert outcome.result.success
    assert outcome.mcp.is_error is False
    assert outcome.mcp.structured_content["city"] == "Lisbon"
    assert len(outcome.mcp.structured_content["days"]) == 2
    assert outcome.mcp.content[0].text.startswith("# Lisbon: 2-day forecast")


async def test_unknown_city_is_a_declared_failure(lorenz_host) -> None:
    """An unknown city fails with the contract's reason and recovery hint."""
    host = lorenz_host(PACK)
    outcome = await host.call_tool("weather_get_forecast", {"city": "Atlantis"})
    error = outcome.mcp.structured_content["error"]
    assert outcome.mcp.is_error is True
    assert error["reason"] == "city_not_found"
    assert "weather_list_cities" in error["recovery"]


async def test_misspelled_argument_is_refused(lorenz_host) -> None:
    """A misspelled key is refused by name."""
    host = lorenz_host(PACK)
    outcome = await host.call_tool("weather_get_forecast", {"citty": "Oslo"})
    assert 'Unrecognized key: "citty"' in outcome.result.error


async def test_alert_tool_needs_writes(lorenz_host) -> None:
    """weather_set_alert is hidden until tools.weather.allow_writes is set."""
    assert "weather_set_alert" not in lorenz_host(PACK).tool_names()
    host = lorenz_host(PACK, options={"weather": {"allow_writes": True}})
    outcome = await host.call_tool("weather_set_alert", {"city": "Oslo", "above": 100})
    assert outcome.mcp.structured_content == {"city": "Oslo", "above": 100.0, "triggered_days": []}
