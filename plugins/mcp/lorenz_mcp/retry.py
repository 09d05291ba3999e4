"""A remote upstream's rate-limited or unavailable answers (``429``/``503``), retried under the host's
:class:`lorenz.RetryPolicy` for the requests that are safe to send twice.

Those are the listings, ``resources/read``, ``prompts/get``, ``ping``, and ``tools/call`` of a tool
whose annotations say it is read-only or idempotent; any other call is answered as it came.
The retry happens below the SDK (it turns a status into a generic error): a transport of the
upstream's HTTP client that sends the same request again after ``Retry-After`` or the back-off.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from typing import Any

import anyio
import httpx2

from lorenz import RetryPolicy

__all__ = ["IDEMPOTENT_METHODS", "RetryingTransport", "http_client", "idempotent_tools"]

IDEMPOTENT_METHODS = frozenset(
    {
        "ping",
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
    }
)


def idempotent_tools(tools: Collection[dict[str, Any]]) -> frozenset[str]:
    """The names of the tools (wire form) whose annotations say a second call does no harm."""
    names = set()
    for tool in tools:
        annotations = tool.get("annotations") or {}
        if annotations.get("readOnlyHint") is True or annotations.get("idempotentHint") is True:
            names.add(str(tool["name"]))
    return frozenset(names)


def _delay(response: httpx2.Response, retry: int, policy: RetryPolicy) -> float:
    hinted = response.headers.get("retry-after", "").strip()
    if hinted.isdigit():
        return min(float(hinted), policy.max_retry_after)
    return float(min(policy.base_delay * 2.0 ** min(retry, 64), policy.max_delay))


class RetryingTransport(httpx2.AsyncBaseTransport):
    """Sends an idempotent MCP request again while it is answered with one of the policy's statuses."""

    def __init__(
        self,
        inner: httpx2.AsyncBaseTransport,
        policy: RetryPolicy,
        safe_tools: Callable[[], Collection[str]],
        on_retry: Callable[[str, int, float], None],
    ) -> None:
        self._inner = inner
        self._policy = policy
        self._safe_tools = safe_tools
        self._on_retry = on_retry

    def _retryable(self, request: httpx2.Request) -> str | None:
        """The request's MCP method when sending it again is safe, else ``None``."""
        if request.method != "POST":
            return None
        try:
            message = json.loads(request.content)
        except (ValueError, httpx2.RequestNotRead):
            return None
        method = message.get("method") if isinstance(message, dict) else None
        if method in IDEMPOTENT_METHODS:
            return str(method)
        if method == "tools/call":
            params = message.get("params") or {}
            name = params.get("name") if isinstance(params, dict) else None
            if isinstance(name, str) and name in self._safe_tools():
                return f"tools/call {name}"
        return None

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        what = self._retryable(request)
        retry = 0
        while True:
            response = await self._inner.handle_async_request(request)
            if what is None or response.status_code not in self._policy.retry_statuses:
                return response
            if retry + 1 >= self._policy.max_attempts:
                return response
            delay = _delay(response, retry, self._policy)
            await response.aclose()
            self._on_retry(what, response.status_code, delay)
            await anyio.sleep(delay)
            retry += 1

    async def aclose(self) -> None:
        await self._inner.aclose()


def http_client(
    headers: Mapping[str, str],
    timeout: float,
    max_bytes: int,
    safe_tools: Callable[[], Collection[str]],
    on_retry: Callable[[str, int, float], None],
) -> httpx2.AsyncClient:
    """A remote upstream's HTTP client: ``headers`` and ``timeout`` on every request, its JSON
    answers bounded by ``max_bytes``, its idempotent requests retried under :class:`RetryPolicy`."""
    from .limits import BoundedTransport  # the bounded transport: only a remote upstream

    bounded = BoundedTransport(httpx2.AsyncHTTPTransport(), max_bytes)
    transport = RetryingTransport(bounded, RetryPolicy(), safe_tools, on_retry)
    return httpx2.AsyncClient(headers=dict(headers), timeout=timeout, transport=transport)
