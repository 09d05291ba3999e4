"""Timeouts name the backend's host and the limit, never a path, query or credentials (issue 13)."""

from __future__ import annotations

import time

import httpx
import pytest

from lorenz.http import request_origin, send_with_retry, timeout_message

pytestmark = pytest.mark.anyio


async def test_send_with_retry_names_host_and_limit(silent_server: str) -> None:
    """A backend that never answers is a ReadTimeout naming scheme, host, port and the 0.3 s read limit,
    within a few seconds (not the 30 s default), and the URL's userinfo, path and query stay out of it."""
    url = silent_server.replace("http://", "http://bot:hunter2@") + "/rest/api/3/issue?token=abc123"
    started = time.monotonic()
    async with httpx.AsyncClient() as client:
        with pytest.raises(httpx.ReadTimeout) as info:
            await send_with_retry(client, "GET", url, timeout=0.3)
    assert time.monotonic() - started < 10
    assert str(info.value) == f"request to {silent_server} timed out after 0.3 s"
    assert timeout_message(info.value, "jira") == f"jira request to {silent_server} timed out after 0.3 s"
    assert isinstance(info.value.__cause__, httpx.ReadTimeout)  # the original is kept as the cause


def _timeout(kind: type[httpx.TimeoutException], timeout: httpx.Timeout) -> httpx.TimeoutException:
    request = httpx.Request("GET", "https://acme.atlassian.net/rest/api/3/myself", extensions={})
    request.extensions["timeout"] = timeout.as_dict()
    return kind("", request=request)


@pytest.mark.parametrize(
    ("kind", "limit"),
    [(httpx.ConnectTimeout, "5"), (httpx.ReadTimeout, "30"), (httpx.WriteTimeout, "7.5"), (httpx.PoolTimeout, "2")],
)
def test_the_limit_is_the_one_of_the_phase_that_ran_out(kind: type[httpx.TimeoutException], limit: str) -> None:
    """Connect, read, write and pool timeouts each quote their own limit."""
    exc = _timeout(kind, httpx.Timeout(30.0, connect=5.0, write=7.5, pool=2.0))
    assert timeout_message(exc, "jira") == f"jira request to https://acme.atlassian.net timed out after {limit} s"


def test_no_message_for_other_errors_or_a_timeout_without_request() -> None:
    """Only an httpx timeout with its request gets the message; the caller keeps its own wording otherwise."""
    request = httpx.Request("GET", "https://acme.atlassian.net/")
    assert timeout_message(httpx.ConnectError("refused", request=request), "jira") is None
    assert timeout_message(TimeoutError("socket"), "jira") is None
    assert timeout_message(httpx.ReadTimeout("bare"), "jira") is None
    unlimited = _timeout(httpx.ReadTimeout, httpx.Timeout(None))
    assert timeout_message(unlimited, None) == "request to https://acme.atlassian.net timed out"


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://user:pw@acme.atlassian.net/rest?token=x#frag", "https://acme.atlassian.net"),
        ("http://127.0.0.1:8080/graphql", "http://127.0.0.1:8080"),
        ("http://[::1]:9/mcp", "http://[::1]:9"),
        ("https://slack.com:443/api/chat.postMessage", "https://slack.com"),
    ],
)
def test_request_origin_keeps_scheme_host_and_port(url: str, origin: str) -> None:
    """Only scheme://host[:port] survives; a default port is left out, an IPv6 host keeps its brackets."""
    assert request_origin(url) == origin
