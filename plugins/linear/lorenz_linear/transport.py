"""One GraphQL POST to Linear through the core's retry policy, shared by the tracker client and the tool.

Classifying the response is left to the caller: the client and ``linear_graphql`` order their checks
differently.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import httpx
from attrs import frozen

from lorenz import DEFAULT_TIMEOUT, RetryEvent, RetryPolicy, send_with_retry, summarize_body

from .queries import operation_name

__all__ = ["LINEAR_RETRY_POLICY", "Clock", "GraphQLRequest", "Sleep", "logger", "post_graphql", "secrets_with"]

logger = logging.getLogger("lorenz_linear")

Sleep = Callable[[float], Awaitable[object]]
Clock = Callable[[], float]

#: Linear signals rate limiting with 429 only: at most 5 requests, 1 s doubling up to 30 s.
LINEAR_RETRY_POLICY = RetryPolicy(max_attempts=5, base_delay=1.0, max_delay=30.0, retry_statuses=frozenset({429}))
_NON_ASCII_KEY = "linear api key contains characters that cannot be sent in an HTTP header"


@frozen(kw_only=True)
class GraphQLRequest:
    """Everything one POST needs: where, with which key, what, and the secrets to keep out of logs."""

    endpoint: str
    api_key: str
    query: str
    variables: Mapping[str, Any]
    secrets: frozenset[str]

    @property
    def operation(self) -> str:
        return operation_name(self.query) or "anonymous"


def secrets_with(secrets: Iterable[str], *extra: str | None) -> frozenset[str]:
    """``secrets`` plus the credentials in use, so a key never configured through parsing is redacted too."""
    return frozenset(secrets) | {value for value in extra if value}


async def post_graphql(
    http: httpx.AsyncClient | None,
    request: GraphQLRequest,
    *,
    policy: RetryPolicy = LINEAR_RETRY_POLICY,
    sleep: Sleep | None = None,
    now: Clock | None = None,
) -> httpx.Response:
    """POST ``{query, variables}`` with the raw key in ``authorization`` (Linear takes no ``Bearer``).

    Retries 429 per ``policy`` with a warning line per retry. Without a host client a short-lived one is
    used. Transport errors propagate as ``httpx.HTTPError``, a key httpx cannot put in a header included.
    """
    if not request.api_key.isascii():  # httpx would raise UnicodeEncodeError, past every caller's except
        raise httpx.LocalProtocolError(_NON_ASCII_KEY)

    def warn(event: RetryEvent) -> None:
        body = summarize_body(event.response.text if event.response is not None else "", request.secrets)
        logger.warning(
            "Linear GraphQL request rate limited status=%s retry=%s/%s delay_ms=%s operation=%s body=%s",
            event.status,
            event.attempt,
            policy.max_attempts - 1,
            round(event.delay * 1000),
            request.operation,
            body,
        )

    kwargs: dict[str, Any] = {
        "headers": {"content-type": "application/json", "authorization": request.api_key},
        "json": {"query": request.query, "variables": dict(request.variables)},
        "policy": policy,
        "timeout": DEFAULT_TIMEOUT,
        "sleep": sleep,
        "now": now,
        "on_retry": warn,
    }
    if http is not None:
        return await send_with_retry(http, "POST", request.endpoint, **kwargs)
    async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as client:
        response = await send_with_retry(client, "POST", request.endpoint, **kwargs)
        await response.aread()
        return response
