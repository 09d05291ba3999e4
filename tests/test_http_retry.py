"""lorenz.http: send_with_retry (Retry-After, backoff, caps, attempts), timeouts and summarize_body."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lorenz.http import (
    DEFAULT_TIMEOUT,
    RetryEvent,
    RetryPolicy,
    backoff_delay,
    retry_after_seconds,
    send_with_retry,
    summarize_body,
)
from lorenz.redact import redact_text

pytestmark = pytest.mark.anyio

NOW = 1_700_000_000.0


class Recorder:
    """Fake sleep that records the delays instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def scripted(*responses: httpx.Response) -> tuple[httpx.AsyncClient, list[httpx.Request]]:
    """A client whose transport answers with ``responses`` in order (the last one repeats)."""
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return responses[min(len(seen), len(responses)) - 1]

    return httpx.AsyncClient(transport=httpx.MockTransport(handler)), seen


def status(code: int, retry_after: str | None = None, text: str = "") -> httpx.Response:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return httpx.Response(code, headers=headers, text=text)


async def run(
    client: httpx.AsyncClient, policy: RetryPolicy | None = None, **kwargs: Any
) -> tuple[httpx.Response, Recorder]:
    sleep = Recorder()
    async with client:
        response = await send_with_retry(
            client,
            "GET",
            "http://tracker.test/api",
            policy=policy or RetryPolicy(),
            sleep=sleep,
            now=lambda: NOW,
            **kwargs,
        )
    return response, sleep


async def test_retry_after_seconds_is_honoured() -> None:
    """A 429 with Retry-After: 7 waits 7 s, then the 200 is returned."""
    client, seen = scripted(status(429, "7"), status(200, text="ok"))
    response, sleep = await run(client)
    assert (response.status_code, response.text) == (200, "ok")
    assert sleep.delays == [7.0]
    assert len(seen) == 2


async def test_retry_after_http_date_is_relative_to_now() -> None:
    """A Retry-After HTTP date waits until that date according to the injected clock."""
    client, _ = scripted(status(429, formatdate(NOW + 12, usegmt=True)), status(200))
    response, sleep = await run(client)
    assert response.status_code == 200
    assert sleep.delays == [12.0]


async def test_retry_after_date_in_the_past_means_no_wait() -> None:
    """A Retry-After date already past gives a zero delay."""
    client, _ = scripted(status(429, formatdate(NOW - 60, usegmt=True)), status(200))
    _, sleep = await run(client)
    assert sleep.delays == [0.0]


@pytest.mark.parametrize("header", [None, "", "   ", "soon", "-3", "1.5", "Thu, 99 Foo 2024"])
async def test_missing_or_garbage_retry_after_uses_exponential_backoff(header: str | None) -> None:
    """Without a usable Retry-After the delays are base * 2**retry."""
    client, _ = scripted(status(429, header), status(429, header), status(429, header), status(200))
    response, sleep = await run(client, RetryPolicy(base_delay=0.5))
    assert response.status_code == 200
    assert sleep.delays == [0.5, 1.0, 2.0]


async def test_backoff_is_capped_at_max_delay() -> None:
    """Exponential delays never exceed max_delay."""
    client, _ = scripted(status(429))
    _, sleep = await run(client, RetryPolicy(max_attempts=5, base_delay=4.0, max_delay=10.0))
    assert sleep.delays == [4.0, 8.0, 10.0, 10.0]


async def test_huge_retry_after_is_capped() -> None:
    """A hostile Retry-After (seconds or a far date) is capped at policy.max_retry_after."""
    client, _ = scripted(
        status(429, "86400"), status(429, "9" * 400), status(503, "Fri, 31 Dec 9999 23:59:59 GMT"), status(200)
    )
    _, sleep = await run(client, RetryPolicy(max_retry_after=120.0))
    assert sleep.delays == [120.0, 120.0, 120.0]


async def test_at_most_max_attempts_requests() -> None:
    """A server that always answers 429 gets 5 requests by default and the last 429 is returned."""
    client, seen = scripted(status(429, "0", text="slow down"))
    response, sleep = await run(client)
    assert response.status_code == 429
    assert response.text == "slow down"
    assert len(seen) == 5
    assert len(sleep.delays) == 4


async def test_single_attempt_policy_never_retries() -> None:
    """max_attempts=1 sends once and returns the 429."""
    client, seen = scripted(status(429, "0"))
    response, sleep = await run(client, RetryPolicy(max_attempts=1))
    assert (response.status_code, len(seen), sleep.delays) == (429, 1, [])


async def test_503_is_retried() -> None:
    """503 is in the default retry statuses."""
    client, seen = scripted(status(503, "1"), status(200))
    response, _ = await run(client)
    assert (response.status_code, len(seen)) == (200, 2)


@pytest.mark.parametrize("code", [200, 400, 401, 404, 500, 502])
async def test_other_statuses_are_returned_at_once(code: int) -> None:
    """Statuses outside the policy (500 included) are returned after one request, without sleeping."""
    client, seen = scripted(status(code, "0"), status(200))
    response, sleep = await run(client)
    assert (response.status_code, len(seen), sleep.delays) == (code, 1, [])


async def test_custom_retry_statuses() -> None:
    """The policy decides which statuses are retried."""
    client, seen = scripted(status(500, "0"), status(429, "0"))
    response, _ = await run(client, RetryPolicy(retry_statuses=frozenset({500})))
    assert (response.status_code, len(seen)) == (429, 2)


async def test_on_retry_sees_each_retry_before_the_sleep() -> None:
    """on_retry gets attempt, status, delay, the redacted URL and the response, before each sleep."""
    client, _ = scripted(status(429, "2", text="rate limited"), status(503), status(200))
    events: list[tuple[RetryEvent, int]] = []
    sleep = Recorder()

    def on_retry(event: RetryEvent) -> None:
        events.append((event, len(sleep.delays)))

    async with client:
        await send_with_retry(
            client,
            "POST",
            "https://bot:hunter22@tracker.test/graphql",
            json={"query": "{}"},
            sleep=sleep,
            now=lambda: NOW,
            on_retry=on_retry,
        )
    assert [(e.attempt, e.status, e.delay, slept) for e, slept in events] == [(1, 429, 2.0, 0), (2, 503, 2.0, 1)]
    assert events[0][0].url == "https://[REDACTED]@tracker.test/graphql"
    assert events[0][0].response is not None
    assert events[0][0].response.text == "rate limited"


async def test_async_on_retry_is_awaited() -> None:
    """An async on_retry hook is awaited."""
    client, _ = scripted(status(429, "0"), status(200))
    calls: list[int] = []

    async def on_retry(event: RetryEvent) -> None:
        calls.append(event.attempt)

    await run(client, on_retry=on_retry)
    assert calls == [1]


async def test_request_is_replayed_with_the_same_body_and_headers() -> None:
    """Each retry resends the same method, URL, headers and JSON body."""
    client, seen = scripted(status(429, "0"), status(200))
    sleep = Recorder()
    async with client:
        await send_with_retry(
            client,
            "POST",
            "http://tracker.test/graphql",
            json={"query": "q"},
            headers={"authorization": "k"},
            sleep=sleep,
        )
    assert [(r.method, str(r.url), r.headers["authorization"], r.content) for r in seen] == [
        ("POST", "http://tracker.test/graphql", "k", b'{"query":"q"}')
    ] * 2


async def test_explicit_timeout_reaches_the_transport() -> None:
    """Every request carries the explicit timeout (30 s by default, overridable)."""
    client, seen = scripted(status(200))
    async with client:
        await send_with_retry(client, "GET", "http://tracker.test/")
        await send_with_retry(client, "GET", "http://tracker.test/", timeout=2.5)
    assert DEFAULT_TIMEOUT == 30.0
    assert seen[0].extensions["timeout"] == {"connect": 30.0, "read": 30.0, "write": 30.0, "pool": 30.0}
    assert seen[1].extensions["timeout"]["read"] == 2.5


async def test_transport_error_propagates() -> None:
    """A connection failure is raised as httpx.HTTPError, not retried or swallowed."""
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        raise httpx.ConnectError("connection refused", request=request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    with pytest.raises(httpx.HTTPError, match="connection refused"):
        await run(client)
    assert calls == 1


async def test_default_sleep_really_waits_through_anyio() -> None:
    """Without an injected sleep the retry still completes (Retry-After: 0 through anyio.sleep)."""
    client, seen = scripted(status(429, "0"), status(200))
    async with client:
        response = await send_with_retry(client, "GET", "http://tracker.test/")
    assert (response.status_code, len(seen)) == (200, 2)


# --- real HTTP over a loopback socket -------------------------------------------------------------


@pytest.fixture
def flaky_server() -> Iterator[tuple[str, list[str]]]:
    """An http.server on 127.0.0.1:0 answering 429 (Retry-After: 0) twice, then 200."""
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            if len(hits) <= 2:
                body = b'{"error": "rate limited"}'
                self.send_response(429)
                self.send_header("Retry-After", "0")
            else:
                body = b'{"ok": true}'
                self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_retry_over_real_loopback_http(flaky_server: tuple[str, list[str]]) -> None:
    """Over a real socket, two 429s with Retry-After: 0 are retried and the 200 is returned."""
    base, hits = flaky_server
    events: list[RetryEvent] = []
    async with httpx.AsyncClient() as client:
        response = await send_with_retry(client, "GET", f"{base}/rest/api/3/search", on_retry=events.append)
    assert response.status_code == 200
    assert response.json() == {"ok": True}
    assert hits == ["/rest/api/3/search"] * 3
    assert [(e.attempt, e.status, e.delay) for e in events] == [(1, 429, 0.0), (2, 429, 0.0)]


# --- helpers ----------------------------------------------------------------------------------------


def test_retry_after_seconds_parsing() -> None:
    """Integer seconds and HTTP dates parse; blanks and garbage give None."""
    assert retry_after_seconds("0", NOW) == 0.0
    assert retry_after_seconds(" 15 ", NOW) == 15.0
    assert retry_after_seconds(formatdate(NOW + 30, usegmt=True), NOW) == 30.0
    assert retry_after_seconds(formatdate(NOW + 30), NOW) == 30.0  # numeric zone
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 -0000", 1445412480.0 - 5) == 5.0
    assert retry_after_seconds(formatdate(NOW - 30, usegmt=True), NOW) == 0.0
    for bad in (None, "", "  ", "-1", "1.5", "later", "Wed, 32 Oct 2015 07:28:00 GMT"):
        assert retry_after_seconds(bad, NOW) is None, bad


def test_backoff_delay() -> None:
    """Backoff doubles from base_delay and stops at max_delay, even for absurd retry counts."""
    policy = RetryPolicy()
    assert [backoff_delay(k, policy) for k in range(7)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert backoff_delay(10_000, policy) == 30.0
    assert backoff_delay(3, RetryPolicy(base_delay=0.0)) == 0.0


@pytest.mark.parametrize(
    "make",
    [
        lambda: RetryPolicy(max_attempts=0),
        lambda: RetryPolicy(base_delay=-1),
        lambda: RetryPolicy(max_delay=float("nan")),
    ],
)
def test_policy_rejects_nonsense(make: Callable[[], RetryPolicy]) -> None:
    """A policy with no attempts or negative/NaN delays is refused at construction."""
    with pytest.raises(ValueError, match=r"must be|>= 1"):
        make()


def test_policy_defaults_and_frozen() -> None:
    """The default policy is 5 attempts, 1 s base, 30 s max, 429/503, and it is immutable."""
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.base_delay, policy.max_delay, policy.retry_statuses) == (
        5,
        1.0,
        30.0,
        frozenset({429, 503}),
    )
    with pytest.raises(AttributeError):
        policy.max_attempts = 2  # type: ignore[misc]


def test_summarize_body_collapses_whitespace_and_truncates() -> None:
    """Whitespace runs become one space, ends are trimmed, and >1000 chars end in ...<truncated>."""
    assert summarize_body('  {\n  "errors":\t[ 1 ]\n}  ') == '{ "errors": [ 1 ] }'
    long = "a" * 1500
    assert summarize_body(long) == "a" * 1000 + "...<truncated>"
    assert summarize_body("b" * 1000) == "b" * 1000


def test_summarize_body_never_shows_secrets() -> None:
    """Registered secrets and credential patterns are redacted, even across the truncation point."""
    secret = "lin_api_0123456789abcdef"
    body = (
        f'{{"message": "bad key {secret}", "authorization": "Bearer {secret}", '
        f'"url": "https://me:{secret}@api.test", "ref": "op://Private/linear/key", "token": "t0k3n"}}'
    )
    summary = summarize_body(body, [secret])
    assert secret not in summary
    assert "t0k3n" not in summary
    assert "op://" not in summary
    assert "me:" not in summary
    assert summary.count("[REDACTED]") >= 5
    straddling = "x" * 995 + secret
    assert summarize_body(straddling, [secret]).startswith("x" * 995 + "[REDA")
    assert "lin_api" not in summarize_body(straddling, [secret])


def test_summarize_body_accepts_bytes_and_json_values() -> None:
    """Bytes are decoded and other values rendered as JSON before summarizing."""
    assert summarize_body(b"caf\xc3\xa9  ok") == "café ok"
    assert summarize_body({"errors": [{"message": "api_key=abc"}]}) == '{"errors": [{"message": "api_key=[REDACTED]"}]}'
    assert summarize_body(None) == ""


def full_summary(text: str, secrets: list[str]) -> str:
    """The reference: redact the whole body, then collapse and truncate."""
    summary = " ".join(redact_text(text, secrets).split())
    return summary[:1000] + "...<truncated>" if len(summary) > 1000 else summary


def test_summarize_large_body_matches_the_whole_body_summary() -> None:
    """A 1 MB error page is summarized from a prefix, with the same result as redacting it all."""
    secret = "jira-token-0123456789"
    record = f'{{"id": 1, "name": "hello world", "token": "abc", "url": "https://u:p@x.test/a", "k": "{secret}"}} '
    body = record * 10_000
    assert len(body) > 1_000_000
    assert summarize_body(body, [secret]) == full_summary(body, [secret])
    minified = '{"errors":[' + ",".join(f'{{"message":"bad key {secret}","token":"v{i}"}}' for i in range(20_000))
    assert summarize_body(minified, [secret]) == full_summary(minified, [secret])


def near_cut(visible: int, start: int, payload: str) -> str:
    """A >4 KiB body whose ``payload`` starts at raw offset ``start``, after ``visible`` kept characters.

    The filler collapses to ``visible`` characters and a space, so whatever the 4 KiB prefix cut does to
    the payload lands around the 1000th character of the summary, where it would be seen.
    """
    return "x" * visible + " " * (start - visible) + payload + " tail" * 300


def test_secret_split_by_the_summary_window_stays_hidden() -> None:
    """A registered secret holding spaces that straddles the prefix cut leaves no fragment behind."""
    secret = "Qq9 Zz8 Xx7 Ww6"
    for visible in range(975, 1000, 2):
        for start in range(4075, 4096):
            summary = summarize_body(near_cut(visible, start, secret), [secret])
            assert not any(part in summary for part in ("Qq9", "Zz8", "Xx7", "Ww6")), (visible, start)


def test_credentials_split_by_the_summary_window_stay_hidden() -> None:
    """Quoted values, URL userinfo, tokens and op:// references cut by the prefix are still redacted."""
    payloads = (
        '{"password": "Qq9 Zz8 Xx7 Ww6"}',
        "{'token': 'Qq9 Zz8 Xx7 Ww6'}",
        '{\\"token\\": \\"Qq9 Zz8\\"}',
        "GET https://Quser:Qpassword@example.test/x",
        "Authorization: Bearer Qq9Zz8Xx7Ww6Vv5Uu4",
        "ref=op://Qvault/Qitem/Qfield",
        "api_key=Qq9Zz8Xx7Ww6Vv5",
    )
    for payload in payloads:
        for visible in range(960, 1000, 4):
            for start in range(4060, 4096, 2):
                summary = summarize_body(near_cut(visible, start, payload))
                assert "Q" not in summary, (payload, visible, start)


_PIECES = st.sampled_from(
    [
        " ",
        "  ",
        "\n",
        '"',
        "'",
        ",",
        "{",
        "}",
        ":",
        "=",
        "a",
        "b1",
        "https://",
        "@h/",
        "/",
        "\\",
        'token: "Q1 Q2"',
        "password=Q3",
        " Bearer Q4",
        " https://Q5:Q6@h",
        " op://Q7/Q8",
        "Qq9 Zz8",
        '\\"token\\": \\"Q9 Q0\\"',
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    visible=st.integers(min_value=900, max_value=1000),
    start=st.integers(min_value=3990, max_value=4095),
    pieces=st.lists(_PIECES, max_size=60),
)
def test_summary_prefix_never_reveals_what_the_whole_body_hides(visible: int, start: int, pieces: list[str]) -> None:
    """Whatever the cut, the prefix summary shows no marker that redacting the whole body would hide."""
    body = near_cut(visible, start, "".join(pieces))
    secrets = ["Qq9 Zz8"]
    if "Q" not in redact_text(body, secrets):
        assert "Q" not in summarize_body(body, secrets)


def test_summarize_body_scans_at_most_one_mib() -> None:
    """Past 1 MiB the body is cut (and marked truncated) instead of scanned whole."""
    assert summarize_body("a" * 3_000_000) == "a" * 1000 + "...<truncated>"
    assert summarize_body(" " * 2_000_000 + "late detail") == "...<truncated>"
