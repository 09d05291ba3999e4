"""The Redis backend against a real ``redis-server``: two middlewares (two workers or replicas)
share one set of counters; a password from a variable; an unreachable server follows
``on_backend_error``."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lorenz_quota.middleware import QuotaMiddleware
from lorenz_quota.options import parse_options

from lorenz import Call, ServerSettings, Settings, ToolResult, tool_success

sys.path.insert(0, str(Path(__file__).parent))
from redis_server import free_port, redis_server

pytestmark = pytest.mark.anyio
SETTINGS = Settings(server=ServerSettings(tool_timeout_seconds=30.0))
PASSWORD = "quota-test-password-123"


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis"), password=PASSWORD) as url:
        yield url


def replica(url: str, limits: list[dict[str, Any]], **options: Any) -> QuotaMiddleware:
    raw = {"backend": "redis", "url": url, "password": "$QUOTA_PW", "limits": limits, **options}
    return QuotaMiddleware(parse_options(raw, SETTINGS, env={"QUOTA_PW": PASSWORD}))


def call(tool: str = "demo_add", token: str = "ci") -> Call:
    return Call(tool=tool, pack="demo", arguments={}, token_name=token)


async def ran(c: Call) -> ToolResult:
    return tool_success({})


async def test_two_replicas_share_a_bucket(redis_url: str) -> None:
    limits = [{"tools": ["bucket_*"], "rate": "1/min", "burst": 4}]
    one, two = replica(redis_url, limits), replica(redis_url, limits)
    results = [await (one if i % 2 else two)(call("bucket_a"), ran) for i in range(6)]
    assert [r.success for r in results] == [True] * 4 + [False] * 2
    error = results[4].result["error"]
    assert error["reason"] == "rate_limited" and 55 < error["retryAfter"] <= 60
    assert (await one(call("bucket_a", token="other"), ran)).success  # per caller
    await one.aclose()
    await two.aclose()


async def test_two_replicas_share_a_quota_and_a_concurrency_cap(redis_url: str) -> None:
    one = replica(redis_url, [{"tools": ["window_*"], "quota": "3/day"}, {"tools": ["conc_*"], "concurrency": 1}])
    two = replica(redis_url, [{"tools": ["window_*"], "quota": "3/day"}, {"tools": ["conc_*"], "concurrency": 1}])
    results = [await (one if i % 2 else two)(call("window_a"), ran) for i in range(5)]
    assert [r.success for r in results] == [True, True, True, False, False]
    assert results[3].result["error"]["retryAfter"] <= 86400
    inner: list[ToolResult] = []

    async def holding(c: Call) -> ToolResult:
        inner.append(await two(call("conc_a"), ran))
        return tool_success({})

    assert (await one(call("conc_a"), holding)).success
    assert inner[0].result["error"]["reason"] == "rate_limited"
    assert (await two(call("conc_a"), ran)).success  # released
    await one.aclose()
    await two.aclose()


async def test_bucket_over_real_time_accepts_rate_times_t_plus_burst(redis_url: str) -> None:
    rate, burst = 40, 10
    one, two = (replica(redis_url, [{"tools": ["timed"], "rate": rate, "burst": burst}]) for _ in range(2))
    accepted = 0
    started = time.monotonic()
    calls = 0
    while time.monotonic() - started < 1.5:
        accepted += (await (one if calls % 2 else two)(call("timed"), ran)).success
        calls += 1
    elapsed = time.monotonic() - started
    expected = rate * elapsed + burst
    assert calls > expected * 2  # the limit, not the loop, decided
    assert abs(accepted - expected) <= 0.05 * expected + 1
    await one.aclose()
    await two.aclose()


@pytest.mark.parametrize(("policy", "success"), [("refuse", False), ("allow", True)])
async def test_unreachable_redis_follows_on_backend_error(policy: str, success: bool) -> None:
    dead = f"redis://127.0.0.1:{free_port()}/0"
    middleware = replica(dead, [{"rate": 1}], on_backend_error=policy, timeout_seconds=0.5)
    result = await middleware(call(), ran)
    assert result.success is success
    if not success:
        assert result.result["error"]["reason"] == "service_unavailable"
        assert PASSWORD not in str(result.result)
    await middleware.aclose()


async def test_a_wrong_password_is_a_backend_error_never_shown(redis_url: str) -> None:
    raw = {"backend": "redis", "url": redis_url, "password": "$PW", "limits": [{"rate": 1}]}
    middleware = QuotaMiddleware(parse_options(raw, SETTINGS, env={"PW": "wrong-password-xyz"}))
    result = await middleware(call(), ran)
    assert result.result["error"]["reason"] == "service_unavailable"
    assert "wrong-password-xyz" not in str(result.result)
    await middleware.aclose()
