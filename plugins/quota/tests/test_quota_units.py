"""The quota middleware in one process, on an injected clock: the token bucket's R·t + B, windows,
concurrency caps, caller matching, options errors and a backend that cannot answer."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from lorenz_quota.memory import MemoryBackend
from lorenz_quota.middleware import QuotaMiddleware
from lorenz_quota.options import parse_options
from lorenz_quota.redis_backend import BackendError

from lorenz import Call, Caller, ConfigError, ServerSettings, Settings, ToolResult, tool_success

pytestmark = pytest.mark.anyio
SETTINGS = Settings(server=ServerSettings(tool_timeout_seconds=30.0))


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def quota(limits: list[dict[str, Any]], clock: Clock, **options: Any) -> QuotaMiddleware:
    return QuotaMiddleware(parse_options({"limits": limits, **options}, SETTINGS), MemoryBackend(clock))


def call(tool: str = "demo_add", token: str | None = None, caller: Caller | None = None) -> Call:
    return Call(tool=tool, pack="demo", arguments={}, token_name=token, caller=caller)


async def ran(c: Call) -> ToolResult:
    return tool_success({"ok": True})


@pytest.mark.parametrize(("rate", "burst", "seconds", "per_second"), [(5, 10, 60, 20), (50, 1, 10, 200)])
async def test_bucket_accepts_rate_times_t_plus_burst(rate: int, burst: int, seconds: int, per_second: int) -> None:
    clock = Clock()
    middleware = quota([{"rate": rate, "burst": burst}], clock)
    accepted = refused = 0
    for _ in range(seconds * per_second):
        result = await middleware(call(), ran)
        if result.success:
            accepted += 1
        else:
            error = result.result["error"]
            assert error["reason"] == "rate_limited" and 0 < error["retryAfter"] <= 1 / rate + 1e-9
            assert "retryAfter" in error["recovery"] and error["retryable"] is True
            refused += 1
        clock.now += 1 / per_second
    expected = rate * seconds + burst
    assert abs(accepted - expected) <= 0.05 * expected
    assert accepted + refused == seconds * per_second


async def test_retry_after_is_when_a_token_is_back() -> None:
    clock = Clock()
    middleware = quota([{"rate": "2/s", "burst": 1}], clock)
    assert (await middleware(call(), ran)).success
    refused = await middleware(call(), ran)
    assert refused.result["error"]["retryAfter"] == 0.5
    clock.now += 0.5
    assert (await middleware(call(), ran)).success


async def test_a_quota_window_resets_at_its_boundary() -> None:
    clock = Clock(86400.0 * 100 + 3600.0)  # 01:00 UTC
    middleware = quota([{"quota": "3/day"}], clock)
    results = [await middleware(call(), ran) for _ in range(4)]
    assert [r.success for r in results] == [True, True, True, False]
    assert results[3].result["error"]["retryAfter"] == 82800.0
    assert "quota used up" in results[3].result["error"]["message"]
    clock.now = 86400.0 * 101
    assert (await middleware(call(), ran)).success


async def test_concurrency_cap_holds_slots_until_calls_end() -> None:
    middleware = quota([{"concurrency": 1}], Clock())
    inner: list[ToolResult] = []

    async def nested(c: Call) -> ToolResult:
        inner.append(await middleware(call(), ran))  # a second call while the first still runs
        return tool_success({})

    assert (await middleware(call(), nested)).success
    assert inner[0].result["error"]["reason"] == "rate_limited"
    assert (await middleware(call(), ran)).success  # the slot came back


async def test_limits_count_per_caller_and_match_callers_and_tools() -> None:
    clock = Clock()
    limits = [{"tools": ["demo_*"], "callers": ["token:ci", "subject:*"], "rate": 1, "burst": 1}]
    middleware = quota(limits, clock)
    alice = Caller(subject="alice", client_id="app")
    assert (await middleware(call(token="ci"), ran)).success
    assert not (await middleware(call(token="ci"), ran)).success
    assert (await middleware(call(caller=alice), ran)).success  # her own bucket
    assert (await middleware(call(token="other"), ran)).success  # not limited
    assert (await middleware(call(token="other"), ran)).success
    assert (await middleware(call("other_tool", token="ci"), ran)).success  # tool not matched


async def test_a_refusal_counts_nothing_against_the_other_limits() -> None:
    clock = Clock()
    middleware = quota([{"rate": 100, "burst": 100}, {"quota": "1/day"}], clock)
    assert (await middleware(call(), ran)).success
    for _ in range(5):
        assert not (await middleware(call(), ran)).success
    checks, _ = middleware.checks(call())
    backend = middleware.backend
    assert isinstance(backend, MemoryBackend)
    assert backend._buckets[checks[0].key][0] == 99  # only the accepted call took a token


class Down:
    async def acquire(self, checks: Any, lease: str) -> Any:
        raise BackendError("ConnectionError: Error 111 connecting to 127.0.0.1:1")

    async def release(self, keys: Any, lease: str) -> None:
        raise AssertionError("not reached")


@pytest.mark.parametrize(("policy", "success"), [("refuse", False), ("allow", True), (None, False)])
async def test_backend_down_follows_on_backend_error(
    policy: str | None, success: bool, caplog: pytest.LogCaptureFixture
) -> None:
    options = {"limits": [{"rate": 1}], **({"on_backend_error": policy} if policy else {})}
    middleware = QuotaMiddleware(parse_options(options, SETTINGS), Down())
    first, second = await middleware(call(), ran), await middleware(call(), ran)
    assert first.success is success and second.success is success
    if not success:
        assert first.result["error"]["reason"] == "service_unavailable" and first.result["error"]["retryAfter"] == 5
    # Once per outage (the info line at start-up names the policy too, when a test before set INFO).
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and "cannot answer" in r.message]
    assert len(warned) == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"limits": [{"rate": 1}], "backnd": "memory"}, 'quota.backnd is not supported (did you mean "backend"?)'),
        ({"limits": [{"rat": 1}]}, 'quota.limits[0].rat is not supported (did you mean "rate"?)'),
        ({"limits": [{"rate": "5/fortnight"}]}, "quota.limits[0].rate must be a count per period"),
        ({"limits": [{"tools": ["*"]}]}, "set at least one of rate"),
        ({"limits": []}, "quota.limits: list at least one limit"),
        ({"backend": "redis", "limits": [{"rate": 1}]}, "quota.url: backend redis needs url"),
        (
            {"limits": [{"rate": 1}], "on_backend_error": "ignore"},
            "quota.on_backend_error must be one of refuse, allow",
        ),
        ({"limits": [{"rate": 1, "burst": 0}]}, "quota.limits[0].burst must be a whole number"),
        ({"limits": [{"concurrency": 1, "per": ["user"]}]}, "quota.limits[0].per must list"),
    ],
)
def test_options_name_the_key_at_fault(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_options(options, SETTINGS)
    assert message in str(caught.value)


def test_password_comes_from_a_variable_and_is_a_secret() -> None:
    options = {"backend": "redis", "url": "redis://127.0.0.1:1/0", "password": "$QUOTA_PW", "limits": [{"rate": 1}]}
    parsed = parse_options(options, SETTINGS, env={"QUOTA_PW": "hunter2-long"})
    assert parsed.password == "hunter2-long" and parsed.secrets == ("hunter2-long",)
    with pytest.raises(ConfigError, match="quota.password"):
        parse_options(options, SETTINGS, env={})


async def test_idle_counters_are_swept() -> None:
    clock = Clock()
    middleware = quota([{"rate": 10, "burst": 5, "quota": "100/h"}], clock)
    backend = middleware.backend
    assert isinstance(backend, MemoryBackend)
    for who in range(50):
        assert (await middleware(call(token=f"t{who}"), ran)).success
    assert len(backend._buckets) == len(backend._windows) == 50
    clock.now += 0.05
    backend.sweep(clock.now)
    assert len(backend._buckets) == 50  # not refilled yet: kept
    clock.now += 3600
    backend.sweep(clock.now)
    assert backend._buckets == {} and backend._windows == {}
    assert (await middleware(call(token="t0"), ran)).success
