"""Cost of lorenz.redact / lorenz.http helpers on typical and hostile inputs.

Run: .venv/bin/python bench/bench_redact_http.py
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

import anyio
import httpx

from lorenz.http import RetryPolicy, send_with_retry, summarize_body
from lorenz.redact import redact_text

SECRETS = ["lin_api_0123456789abcdef", "jira-token-abcdef", "bot@example.test"]

ERROR_LINE = 'linear api status 401 body={"errors":[{"message":"bad key lin_api_0123456789abcdef"}]}'
JSON_BODY = (
    '{"id": 1, "name": "hello world", "token": "abc", "url": "https://u:p@x.test/a", "note": "Bearer xyz"} '
) * 10_000  # ~1 MB error page
HOSTILE = {
    "1 MB of one word": "a" * 1_000_000,
    "1 MB of 'token'": "token" * 200_000,
    "1 MB of 'a://'": "a://" * 250_000,
    "1 MB of 'Bearer '": "Bearer " * 150_000,
}


def timed(label: str, fn: Callable[[], object], repeat: int) -> None:
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    per_call = (time.perf_counter() - start) / repeat
    unit, scale = ("µs", 1e6) if per_call < 1e-3 else ("ms", 1e3)
    print(f"{label:45s} {per_call * scale:9.1f} {unit}/call")


async def retry_overhead(calls: int) -> float:
    count = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal count
        count += 1
        return httpx.Response(429 if count % 3 else 200, headers={"Retry-After": "0"})

    async def no_sleep(_: float) -> None:
        return None

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        start = time.perf_counter()
        for _ in range(calls):
            await send_with_retry(client, "GET", "http://bench.test/", sleep=no_sleep, policy=RetryPolicy())
        return (time.perf_counter() - start) / count


def main() -> None:
    timed("redact_text, one error line (3 secrets)", lambda: redact_text(ERROR_LINE, SECRETS), 20_000)
    timed("summarize_body, one error line", lambda: summarize_body(ERROR_LINE, SECRETS), 20_000)
    timed("summarize_body, 1 MB JSON error page", lambda: summarize_body(JSON_BODY, SECRETS), 5)
    for label, text in HOSTILE.items():
        timed(f"redact_text, {label}", functools.partial(redact_text, text, SECRETS), 3)
        timed(f"summarize_body, {label}", functools.partial(summarize_body, text, SECRETS), 3)
    per_request = anyio.run(retry_overhead, 2_000)
    print(f"{'send_with_retry per request (MockTransport)':45s} {per_request * 1e6:9.1f} µs/request")


if __name__ == "__main__":
    main()
