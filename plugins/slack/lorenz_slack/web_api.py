"""One Slack Web API call over httpx: auth, retries, timeouts and Slack's ``ok: false`` answers.

Every request goes through the host's ``httpx.AsyncClient`` and :func:`lorenz.http.send_with_retry`
(429 honouring ``Retry-After``, bounded attempts, explicit timeout). Reads are ``GET <base>/<method>``
with query parameters, writes ``POST <base>/<method>`` with a JSON body; ``ok: false`` becomes a
:class:`~.transport.SlackApiError` carrying Slack's error code.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

import httpx

from lorenz import (
    DEFAULT_TIMEOUT,
    RetryEvent,
    RetryPolicy,
    Settings,
    redact_text,
    send_with_retry,
    summarize_body,
    timeout_message,
)

from .options import slack_endpoint
from .transport import SlackApiError, SlackTransportError

__all__ = ["MAX_RETRIES", "Clock", "SlackWebApi", "Sleep"]

MAX_RETRIES = 4
MAX_RETRY_AFTER = 60.0
_LOG = logging.getLogger("lorenz_slack")
Sleep = Callable[[float], Awaitable[object]]
Clock = Callable[[], float]
_IDEMPOTENT_POSTS = frozenset({"reactions.add", "reactions.remove", "chat.update", "views.update"})
_BENIGN = frozenset({("reactions.add", "already_reacted"), ("reactions.remove", "no_reaction")})
_IDEMPOTENT_POLICY = RetryPolicy(
    max_attempts=MAX_RETRIES + 1,
    retry_statuses=frozenset({429, *range(500, 600)}),
    max_retry_after=MAX_RETRY_AFTER,
)
_POST_POLICY = RetryPolicy(
    max_attempts=MAX_RETRIES + 1, retry_statuses=frozenset({429}), max_retry_after=MAX_RETRY_AFTER
)


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds (Slack sends whole seconds), capped like the retries; else ``None``."""
    try:
        seconds = float(value) if value is not None else None
    except ValueError:
        return None
    if seconds is None or not seconds >= 0:
        return None
    return min(seconds, MAX_RETRY_AFTER)


class SlackWebApi:
    """Slack Web API calls with one workspace's token.

    ``http`` is the host's client; without one each request opens a short-lived client.
    ``sleep``/``now`` are injectable for tests.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        http: httpx.AsyncClient | None = None,
        sleep: Sleep | None = None,
        now: Clock | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        self._settings = settings
        self._token = settings.tracker.api_key or ""
        self._base = slack_endpoint(settings)
        self._http = http
        self._sleep = sleep
        self._now = now
        self._log = logger or _LOG
        self._secrets = frozenset({*settings.secrets, *([self._token] if self._token else [])})

    def _warn(self, message: str) -> None:
        self._log.warning(redact_text(message, self._secrets))

    @contextlib.asynccontextmanager
    async def _client(self) -> AsyncIterator[httpx.AsyncClient]:
        if self._http is not None:
            yield self._http
            return
        async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as client:
            yield client

    async def call(
        self, method: str, *, params: Mapping[str, str] | None = None, body: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """One Web API call: ``GET`` with ``params`` or ``POST`` with a JSON ``body``.

        Returns the decoded JSON of an ``ok`` answer; raises :class:`SlackTransportError`.
        """
        is_get = body is None
        idempotent = is_get or method in _IDEMPOTENT_POSTS
        headers = {"authorization": f"Bearer {self._token}"}
        kwargs: dict[str, Any] = {"headers": headers}
        if is_get:
            kwargs["params"] = dict(params or {})
        else:
            headers["content-type"] = "application/json; charset=utf-8"
            kwargs["json"] = dict(body or {})

        def on_retry(event: RetryEvent) -> None:
            self._warn(
                f"slack {method}: HTTP {event.status}; backing off {round(event.delay)}s "
                f"before retry {event.attempt}/{MAX_RETRIES}"
            )

        try:
            async with self._client() as client:
                response = await send_with_retry(
                    client,
                    "GET" if is_get else "POST",
                    f"{self._base}/{method}",
                    policy=_IDEMPOTENT_POLICY if idempotent else _POST_POLICY,
                    sleep=self._sleep,
                    now=self._now,
                    on_retry=on_retry,
                    **kwargs,
                )
        except httpx.TimeoutException as exc:
            msg = timeout_message(exc, f"slack {method}") or f"slack {method} request failed: timed out"
            raise SlackTransportError(redact_text(msg, self._secrets), ambiguous=True, timed_out=True) from exc
        except httpx.HTTPError as exc:
            detail = str(exc) or type(exc).__name__
            msg = f"slack {method} request failed: {detail}"
            raise SlackTransportError(redact_text(msg, self._secrets), ambiguous=True) from exc
        status = response.status_code
        if status >= 500 or status == 429:
            raise SlackTransportError(
                f"slack {method} failed: status {status}",
                ambiguous=status >= 500,
                status=status,
                retry_after=_retry_after(response.headers.get("retry-after")),
            )
        try:
            payload = response.json()
        except ValueError:
            self._log.debug("slack %s non-JSON body: %s", method, summarize_body(response.text, self._secrets))
            msg = f"slack {method} returned a non-JSON response (HTTP {status})"
            raise SlackTransportError(msg) from None
        if not isinstance(payload, dict) or payload.get("ok") is not True:
            code = payload.get("error") if isinstance(payload, dict) else None
            code = code if isinstance(code, str) and code else str(status)
            if (method, code) in _BENIGN:
                return payload if isinstance(payload, dict) else {}
            raise SlackApiError(method, redact_text(code, self._secrets))
        return payload
