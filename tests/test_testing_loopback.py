"""lorenz.testing.loopback_server: an ASGI fake served over real HTTP on 127.0.0.1."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import httpx
import pytest
from attrs import field, frozen
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from lorenz.authoring import CallContext, Pack, describe, tool
from lorenz.host.http.loopback import LoopbackServer
from lorenz.testing import PackHost, loopback_server

pytestmark = pytest.mark.anyio


async def echo(request: Request) -> JSONResponse:
    return JSONResponse({"path": request.url.path, "body": await request.json()})


async def forecast(request: Request) -> JSONResponse:
    return JSONResponse({"city": request.query_params["city"], "temperature": 7})


APP = Starlette(routes=[Route("/api/{name}", echo, methods=["POST"]), Route("/forecast", forecast)])


@frozen(kw_only=True)
class CityArgs:
    city: str = field(metadata=describe("City name."))


@frozen(kw_only=True)
class WeatherOptions:
    endpoint: str = field(metadata=describe("Base URL of the weather API."))


@tool(name="weather_get_forecast", description="Today's forecast for a city.", input=CityArgs)
async def get_forecast(ctx: CallContext, args: CityArgs) -> dict[str, Any]:
    response = await ctx.http.get(f"{ctx.options.endpoint}/forecast", params={"city": args.city}, timeout=5)
    data: dict[str, Any] = response.json()
    return data


PACK = Pack(name="weather", options=WeatherOptions, tools=[get_forecast])


@pytest.fixture(scope="module")
def weather_api() -> Iterator[LoopbackServer]:
    with loopback_server(APP) as server:
        yield server


def test_serves_the_app_on_a_loopback_port() -> None:
    """The app answers real HTTP at ``base_url``, which names 127.0.0.1 and the bound port."""
    with loopback_server(APP) as server:
        assert server.port > 0
        assert server.base_url == f"http://127.0.0.1:{server.port}"
        response = httpx.post(f"{server.base_url}/api/x", json={"n": 1})
    assert response.json() == {"path": "/api/x", "body": {"n": 1}}


def test_stops_when_the_block_exits() -> None:
    """After the ``with`` block nothing listens on the port any more."""
    with loopback_server(APP) as server:
        url = f"{server.base_url}/api/x"
    with pytest.raises(httpx.ConnectError):
        httpx.post(url, json={})


def test_runs_the_app_lifespan() -> None:
    """The app's lifespan runs: startup before the first request, shutdown when the block exits."""
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        events.append("startup")
        yield
        events.append("shutdown")

    with loopback_server(Starlette(lifespan=lifespan)):
        assert events == ["startup"]
    assert events == ["startup", "shutdown"]


def test_a_server_that_cannot_start_raises_a_clear_error() -> None:
    """A failing startup is a RuntimeError naming the loopback server, not a hang."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        raise OSError("database unreachable")
        yield

    failing = Starlette(lifespan=lifespan)
    with pytest.raises(RuntimeError, match="loopback server .* did not start on 127.0.0.1: uvicorn exited"):
        loopback_server(failing).__enter__()


async def test_a_pack_reaches_the_fake_over_real_http(
    lorenz_host: Callable[..., PackHost], weather_api: LoopbackServer
) -> None:
    """The writing-a-pack example: a pack under lorenz_host calls the loopback fake through real HTTP."""
    options = {"weather": {"endpoint": weather_api.base_url}}
    host = lorenz_host(PACK, options=options, transport=httpx.AsyncHTTPTransport())
    result = await host.call("weather_get_forecast", {"city": "Oslo"})
    assert result.success, result.error
    assert result.result == {"city": "Oslo", "temperature": 7}
