"""Outbound-HTTP policy shared by every backend: timeouts, retry/backoff, body summaries (pagination
limits: :mod:`lorenz.pagination`).

Plugins send through the host's ``httpx.AsyncClient`` (``context.http``) with :func:`send_with_retry`, which
retries rate-limited responses (429/503 by default) honouring ``Retry-After`` and returns the last response
for the caller to classify. :func:`summarize_body` renders a response body safely for an error or a log line.
"""

from __future__ import annotations

import inspect
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

import attrs

from lorenz.redact import REDACTED, redact_text, registered_secrets

if TYPE_CHECKING:  # httpx and anyio load on first use: plugins import this module while registering
    import httpx

__all__ = [
    "DEFAULT_TIMEOUT",
    "SUMMARY_LIMIT",
    "RetryEvent",
    "RetryPolicy",
    "backoff_delay",
    "describe_timeout",
    "retry_after_seconds",
    "request_origin",
    "send_with_retry",
    "summarize_body",
    "timeout_message",
]

DEFAULT_TIMEOUT = 30.0
"""Seconds allowed for any one outbound request (connect, read, write and pool)."""

SUMMARY_LIMIT = 1000
"""Characters of a body kept by :func:`summarize_body` before ``...<truncated>``."""

_TRUNCATED = "...<truncated>"
_SUMMARY_WINDOW = 4 * 1024
_SUMMARY_SCAN_LIMIT = 1024 * 1024
_URL_AUTHORITY_TAIL = re.compile(r'://[^\s/?#@"<>]*\Z')
_MIN_FRAGMENT = 3


def _non_negative(_instance: object, attribute: attrs.Attribute[Any], value: float) -> None:
    if not value >= 0:  # also rejects NaN
        raise ValueError(f"{attribute.name} must be >= 0, got {value!r}")


def _statuses(value: Iterable[int]) -> frozenset[int]:
    return frozenset(value)


@attrs.frozen
class RetryPolicy:
    """When and how long :func:`send_with_retry` waits before sending a request again.

    ``max_attempts`` counts every request, the first included (5 → at most 4 retries). Without a usable
    ``Retry-After`` the delay before retry ``k`` (0-based) is ``min(base_delay * 2**k, max_delay)``; a
    ``Retry-After`` delay is honoured up to ``max_retry_after`` so a hostile server cannot park a call.
    """

    max_attempts: int = attrs.field(default=5, validator=attrs.validators.ge(1))
    base_delay: float = attrs.field(default=1.0, validator=_non_negative)
    max_delay: float = attrs.field(default=30.0, validator=_non_negative)
    retry_statuses: frozenset[int] = attrs.field(default=frozenset({429, 503}), converter=_statuses)
    max_retry_after: float = attrs.field(default=120.0, validator=_non_negative)


@attrs.frozen
class RetryEvent:
    """Reported to ``on_retry`` just before :func:`send_with_retry` sleeps.

    ``attempt`` is the 1-based number of the request that got the retryable ``status`` (so ``attempt`` of
    ``policy.max_attempts - 1`` announces the last retry); ``delay`` is the sleep in seconds; ``url`` is
    the request URL with credentials redacted; ``response`` is the (already read) retryable response, e.g.
    for ``summarize_body(event.response.text, secrets)`` in a warning line.
    """

    attempt: int
    status: int
    delay: float
    url: str
    response: httpx.Response | None = attrs.field(default=None, eq=False, repr=False)


Sleep = Callable[[float], Awaitable[object]]
Clock = Callable[[], float]
RetryHook = Callable[[RetryEvent], object]

_DELTA_SECONDS = re.compile(r"[0-9]+")


def retry_after_seconds(value: str | None, now: float) -> float | None:
    """Seconds to wait according to a ``Retry-After`` header, or ``None`` when absent or unusable.

    Accepts non-negative integer seconds or an HTTP date (``max(0, date - now)``, ``now`` in epoch
    seconds). Blank or unparseable values give ``None`` (the caller falls back to backoff). No cap here.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if _DELTA_SECONDS.fullmatch(text):
        return float(text)  # a huge value becomes inf; the caller caps it
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # `-0000` means "UTC, source unknown"
        when = when.replace(tzinfo=UTC)
    try:
        return max(0.0, when.timestamp() - now)
    except (OverflowError, ValueError, OSError):
        return None


def backoff_delay(retry: int, policy: RetryPolicy) -> float:
    """The exponential delay before 0-based retry ``retry``: ``min(base_delay * 2**retry, max_delay)``."""
    # The exponent is clamped so a long retry loop cannot overflow a float.
    return float(min(policy.base_delay * 2.0 ** min(max(retry, 0), 64), policy.max_delay))


def _retry_delay(response: httpx.Response, retry: int, policy: RetryPolicy, now: float) -> float:
    hinted = retry_after_seconds(response.headers.get("retry-after"), now)
    if hinted is None:
        return backoff_delay(retry, policy)
    return min(hinted, policy.max_retry_after)


async def send_with_retry(
    client: httpx.AsyncClient,
    method: str,
    url: httpx.URL | str,
    *,
    policy: RetryPolicy = RetryPolicy(),
    # The per-request httpx timeout (not an overall deadline): every call to a remote host carries one.
    timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,  # noqa: ASYNC109
    sleep: Sleep | None = None,
    now: Clock | None = None,
    on_retry: RetryHook | None = None,
    **request_kwargs: Any,
) -> httpx.Response:
    """Send ``method url`` through ``client`` with an explicit timeout, retrying rate-limited responses.

    While the status is in ``policy.retry_statuses`` and fewer than ``policy.max_attempts`` requests were
    sent, waits (``Retry-After`` seconds or HTTP date, capped at ``policy.max_retry_after``; else capped
    exponential backoff), calling ``on_retry(RetryEvent)`` (may be async) before each sleep, and sends again.
    Returns the last response whatever its status: classifying it is the caller's job. Transport errors
    (``httpx.HTTPError``) propagate; a timeout is re-raised as the same type with a message naming the host
    and the limit (:func:`timeout_message`). ``request_kwargs`` go to ``client.request`` and
    must be replayable (``json=``, ``content=bytes``, ``params=``, ``headers=``…, not a stream).
    ``sleep`` (default ``anyio.sleep``) and ``now`` (default ``time.time``) are injectable for tests.
    """
    import httpx

    if sleep is None:
        import anyio

        sleep = anyio.sleep
    clock: Clock = now if now is not None else time.time
    attempt = 0
    while True:
        attempt += 1
        try:
            response = await client.request(method, url, timeout=timeout, **request_kwargs)
        except httpx.TimeoutException as exc:
            # httpx's own message is empty or "timed out": say which host and which limit instead.
            message = timeout_message(exc, None)
            if message is None:
                raise
            raise type(exc)(message, request=exc.request) from exc
        if response.status_code not in policy.retry_statuses or attempt >= policy.max_attempts:
            return response
        delay = _retry_delay(response, attempt - 1, policy, clock())
        if on_retry is not None:
            event = RetryEvent(attempt, response.status_code, delay, redact_text(str(url)), response)
            outcome = on_retry(event)
            if inspect.isawaitable(outcome):
                await outcome
        await response.aclose()
        await sleep(delay)


def request_origin(url: httpx.URL | str) -> str:
    """``scheme://host[:port]`` of ``url``: all of it an error message may show (a path or query can hold
    a token, the userinfo a password)."""
    import httpx

    parsed = httpx.URL(url)
    host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
    port = f":{parsed.port}" if parsed.port is not None else ""
    return f"{parsed.scheme}://{host}{port}"


def describe_timeout(backend: str | None, url: httpx.URL | str, limit: float | None) -> str:
    """The one wording of a timeout: ``jira request to https://acme.atlassian.net timed out after 30 s``.

    ``backend`` names who sent the request (``None`` leaves it out); only the URL's scheme, host and
    port are shown (:func:`request_origin`); ``limit`` is in seconds (``None``: unknown, left out).
    """
    who = f"{backend} request" if backend else "request"
    after = f" after {limit:g} s" if limit is not None else ""
    return f"{who} to {request_origin(url)} timed out{after}"


def timeout_message(exc: BaseException, backend: str | None) -> str | None:
    """:func:`describe_timeout` for an httpx timeout, its limit the one of the phase that ran out
    (connect, read, write, pool); ``None`` for anything else. Every bundled client words its timeouts with
    this, and :func:`send_with_retry` re-raises with it."""
    import httpx

    if not isinstance(exc, httpx.TimeoutException):
        return None
    try:
        request = exc.request
    except RuntimeError:  # raised by hand without a request
        return None
    limits = request.extensions.get("timeout") or {}
    phases: tuple[tuple[type[httpx.TimeoutException], str], ...] = (
        (httpx.ConnectTimeout, "connect"),
        (httpx.ReadTimeout, "read"),
        (httpx.WriteTimeout, "write"),
        (httpx.PoolTimeout, "pool"),
    )
    phase = next((name for kind, name in phases if isinstance(exc, kind)), None)
    limit = limits.get(phase) if isinstance(limits, dict) and phase else None
    return describe_timeout(backend, request.url, limit if isinstance(limit, int | float) else None)


def _body_text(body: object) -> str:
    if body is None:
        return ""
    if isinstance(body, str):
        return body
    if isinstance(body, bytes | bytearray):
        return bytes(body).decode("utf-8", errors="replace")
    try:
        return json.dumps(body, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(body)


def summarize_body(text: object, secrets: Iterable[str] = ()) -> str:
    """A one-line, redacted rendering of a response body for errors and logs.

    Redacts (``lorenz.redact``), collapses whitespace runs to one space, trims, and keeps at most
    1000 characters followed by ``...<truncated>``. Bytes are decoded as UTF-8, ``None`` is empty, other
    values are rendered as JSON. Only a prefix of a long body is scanned (never more than its first MiB),
    so a huge error page costs about as little as a short one.
    """
    raw = _body_text(text)
    usable = registered_secrets(secrets)
    # Redacting a multi-megabyte error page would block the event loop for seconds, yet only the first
    # 1000 characters survive: summarize a growing prefix of the body until it yields enough text.
    size = _SUMMARY_WINDOW
    while len(raw) > size and size < _SUMMARY_SCAN_LIMIT:
        summary = _one_line(_prefix(raw, size, usable), usable)
        if len(summary) > SUMMARY_LIMIT:
            return summary[:SUMMARY_LIMIT] + _TRUNCATED
        size *= 8
    cut_short = len(raw) > _SUMMARY_SCAN_LIMIT
    if cut_short:
        raw = _prefix(raw, _SUMMARY_SCAN_LIMIT, usable)
    summary = _one_line(raw, usable)
    if cut_short or len(summary) > SUMMARY_LIMIT:
        return summary[:SUMMARY_LIMIT] + _TRUNCATED
    return summary


def _one_line(text: str, secrets: tuple[str, ...]) -> str:
    return " ".join(redact_text(text, secrets).split())


def _prefix(raw: str, size: int, secrets: tuple[str, ...]) -> str:
    """The first ``size`` characters of ``raw``, made to redact at least as much as the whole text would.

    Every redaction pattern still matches (and hides) a cut-off credential — a partial token, bare value or
    op:// reference, an unterminated quoted value — except two, handled here: the start of a registered
    secret and a URL authority whose ``@`` fell past the cut.
    """
    head = _without_secret_fragment(raw[:size], secrets)
    return _URL_AUTHORITY_TAIL.sub("://" + REDACTED, head, count=1)


def _without_secret_fragment(head: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        for length in range(len(secret) - 1, _MIN_FRAGMENT - 1, -1):
            if head.endswith(secret[:length]):
                return head[:-length] + REDACTED
    return head
