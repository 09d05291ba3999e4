"""Typed failures: the declared failure mode (:class:`ErrorContract`), the failure a handler raises
(:class:`ToolFailure`), the baseline failures any tool may raise without declaring them (``not_found``,
``rate_limited``, ...), and the classification of common exceptions that escape a handler."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from attrs import frozen

from lorenz.results import FormattedResult, error_message, failure_result

if TYPE_CHECKING:
    import logging

    from lorenz.settings.model import Settings

__all__ = [
    "BASELINE_ERRORS",
    "ErrorContract",
    "ToolFailure",
    "failure_from",
    "forbidden",
    "not_found",
    "rate_limited",
    "service_unavailable",
    "timeout",
    "unauthorized",
    "unexpected_failure",
    "validation_error",
]


@functools.cache
def kit_logger() -> logging.Logger:
    """The kit's logger (``lorenz.authoring``); :mod:`logging` loads with the first call, not the pack."""
    import logging

    return logging.getLogger("lorenz.authoring")


@frozen(kw_only=True)
class ErrorContract:
    """A failure mode a tool declares: clients switch on ``reason``; ``recovery`` is the agent's
    next move (at least five words); ``retryable`` says whether the same call may succeed later;
    ``code`` is an optional JSON-RPC-style integer (``-32001`` for not found) put in the failure's data."""

    reason: str
    when: str
    recovery: str
    retryable: bool = False
    code: int | None = None


#: The failures every tool may raise without declaring them, by reason. Their codes are the
#: implementation-defined JSON-RPC codes mcp-ts-core uses, so a client can switch on either.
BASELINE_ERRORS: Mapping[str, ErrorContract] = MappingProxyType(
    {
        contract.reason: contract
        for contract in (
            ErrorContract(
                reason="service_unavailable",
                when="The upstream service is unavailable or failing.",
                recovery="Wait a little and call the tool again; the service may recover.",
                retryable=True,
                code=-32000,
            ),
            ErrorContract(
                reason="not_found",
                when="The requested item does not exist.",
                recovery="Check the identifier, or list or search to find the right one.",
                code=-32001,
            ),
            ErrorContract(
                reason="rate_limited",
                when="The upstream service is limiting the rate of requests.",
                recovery="Wait a minute or so before calling the tool again.",
                retryable=True,
                code=-32003,
            ),
            ErrorContract(
                reason="timeout",
                when="The operation took too long.",
                recovery="Wait a little and call the tool again.",
                retryable=True,
                code=-32004,
            ),
            ErrorContract(
                reason="forbidden",
                when="The credentials do not allow this operation.",
                recovery="Do not retry; choose another item or ask the operator for access.",
                code=-32005,
            ),
            ErrorContract(
                reason="unauthorized",
                when="The credentials are missing, invalid or expired.",
                recovery="Do not retry; ask the operator to check the configured credentials.",
                code=-32006,
            ),
            ErrorContract(
                reason="validation_error",
                when="The arguments are well-formed but not acceptable.",
                recovery="Correct the arguments as the message says and call again.",
                code=-32007,
            ),
        )
    }
)

#: Keys :func:`~lorenz.results.failure_result` sets itself; a detail by these names cannot replace them.
_NAMED = frozenset({"message", "reason", "retryable", "recovery"})


class ToolFailure(Exception):
    """A failure with a reason, made by ``ctx.fail(...)`` or a baseline factory (``not_found(...)``);
    ``raise`` it (or return it) from a handler, or raise it from any code the handler calls."""

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        retryable: bool,
        recovery: str | None,
        details: Mapping[str, Any],
        code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.retryable = retryable
        self.recovery = recovery
        self.code = code
        self.details = dict(details)

    def to_result(self) -> FormattedResult:
        extra = {key: value for key, value in self.details.items() if key not in _NAMED}
        ignored = sorted(set(self.details) & _NAMED)
        if ignored:  # the reason and message clients switch on are never replaced by a detail
            kit_logger().warning("failure %s: ignored the detail(s) %s", self.reason, ", ".join(ignored))
        if self.code is not None:
            extra["code"] = self.code
        return failure_result(
            self.message, reason=self.reason, retryable=self.retryable, recovery=self.recovery, **extra
        )

    @classmethod
    def of(
        cls,
        contract: ErrorContract,
        message: str | None = None,
        *,
        recovery: str | None = None,
        retryable: bool | None = None,
        code: int | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> ToolFailure:
        """The failure for ``contract``; ``message`` defaults to its ``when``, and ``recovery``,
        ``retryable`` and ``code`` given here win over the contract's."""
        baseline = BASELINE_ERRORS.get(contract.reason)
        default_code = contract.code if contract.code is not None else (baseline.code if baseline else None)
        return cls(
            message or contract.when,
            reason=contract.reason,
            retryable=contract.retryable if retryable is None else retryable,
            recovery=contract.recovery if recovery is None else recovery,
            code=default_code if code is None else code,
            details=details or {},
        )


def _baseline(
    reason: str, message: str | None, recovery: str | None, retryable: bool | None, details: Mapping[str, Any]
) -> ToolFailure:
    after = details.get("retryAfter")
    if recovery is None and isinstance(after, int | float) and not isinstance(after, bool):
        recovery = f"Wait {after:g} seconds, then call the tool again."
    return ToolFailure.of(BASELINE_ERRORS[reason], message, recovery=recovery, retryable=retryable, details=details)


def not_found(
    message: str | None = None, /, *, recovery: str | None = None, retryable: bool | None = None, **details: Any
) -> ToolFailure:
    """``not_found`` (code -32001): the item asked for does not exist. ``raise not_found(f"No city {name!r}.")``."""
    return _baseline("not_found", message, recovery, retryable, details)


def validation_error(
    message: str | None = None, /, *, recovery: str | None = None, retryable: bool | None = None, **details: Any
) -> ToolFailure:
    """``validation_error`` (code -32007): arguments the schema accepts but the tool cannot use."""
    return _baseline("validation_error", message, recovery, retryable, details)


def rate_limited(
    message: str | None = None,
    /,
    *,
    retry_after: float | None = None,
    recovery: str | None = None,
    retryable: bool | None = None,
    **details: Any,
) -> ToolFailure:
    """``rate_limited`` (code -32003, retryable); ``retry_after`` seconds become ``retryAfter`` in the data."""
    if retry_after is not None:
        details["retryAfter"] = retry_after
    return _baseline("rate_limited", message, recovery, retryable, details)


def unauthorized(
    message: str | None = None, /, *, recovery: str | None = None, retryable: bool | None = None, **details: Any
) -> ToolFailure:
    """``unauthorized`` (code -32006): credentials missing, invalid or expired."""
    return _baseline("unauthorized", message, recovery, retryable, details)


def forbidden(
    message: str | None = None, /, *, recovery: str | None = None, retryable: bool | None = None, **details: Any
) -> ToolFailure:
    """``forbidden`` (code -32005): the credentials do not allow this operation."""
    return _baseline("forbidden", message, recovery, retryable, details)


def service_unavailable(
    message: str | None = None,
    /,
    *,
    retry_after: float | None = None,
    recovery: str | None = None,
    retryable: bool | None = None,
    **details: Any,
) -> ToolFailure:
    """``service_unavailable`` (code -32000, retryable): the upstream is down or failing."""
    if retry_after is not None:
        details["retryAfter"] = retry_after
    return _baseline("service_unavailable", message, recovery, retryable, details)


def timeout(
    message: str | None = None, /, *, recovery: str | None = None, retryable: bool | None = None, **details: Any
) -> ToolFailure:
    """``timeout`` (code -32004, retryable): the operation took too long."""
    return _baseline("timeout", message, recovery, retryable, details)


# -- classification of exceptions escaping a handler ----------------------------------------------

_BY_STATUS = {401: "unauthorized", 403: "forbidden", 404: "not_found", 429: "rate_limited"}


def _retry_after(response: Any) -> float | None:
    """The response's ``Retry-After`` in seconds (a number or an HTTP date), capped like
    :func:`lorenz.send_with_retry` caps it; ``None`` when absent or unusable."""
    import time

    from lorenz.http import RetryPolicy, retry_after_seconds  # lorenz.http: a call's failure only, never a listing

    seconds = retry_after_seconds(response.headers.get("retry-after"), time.time())
    if seconds is None:
        return None
    capped = min(seconds, RetryPolicy().max_retry_after)
    return int(capped) if capped == int(capped) else round(capped, 3)


def failure_from(exc: BaseException) -> ToolFailure | None:
    """The baseline failure for a common exception, or ``None``: an ``httpx`` or builtin timeout
    → ``timeout``; ``httpx.HTTPStatusError`` 401 → ``unauthorized``, 403 → ``forbidden``, 404 →
    ``not_found``, 429 → ``rate_limited`` (``retryAfter`` from ``Retry-After``), 5xx →
    ``service_unavailable``. The message names only the request's method and origin (a path or
    query can hold a token)."""
    import httpx

    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return timeout(error_message(exc))
    if not isinstance(exc, httpx.HTTPStatusError):
        return None
    from lorenz.http import request_origin  # lorenz.http: a call's failure only, never a listing

    response = exc.response
    status = response.status_code
    reason = _BY_STATUS.get(status) or ("service_unavailable" if 500 <= status <= 599 else None)
    if reason is None:
        return None
    try:
        where = f"{exc.request.method} {request_origin(exc.request.url)}"
    except RuntimeError:  # raised by hand without a request
        where = "the request"
    phrase = f" {response.reason_phrase}" if response.reason_phrase else ""
    message = f"{where} answered {status}{phrase}"
    details: dict[str, Any] = {"status": status}
    if reason in ("rate_limited", "service_unavailable"):
        after = _retry_after(response)
        if after is not None:
            details["retryAfter"] = after
    return _baseline(reason, message, None, None, details)


def unexpected_failure(name: str, exc: Exception, settings: Settings, *, doing: str | None = None) -> FormattedResult:
    """The result for an exception that escaped tool ``name``: a baseline failure when
    :func:`failure_from` knows it, else ``internal_error``; the message redacted either way."""
    from lorenz.redact import redact_text, redacted_traceback  # only when a tool raised

    kit_logger().error("tool %s raised\n%s", name, redacted_traceback(exc, settings.secrets))

    # Sent to the agent: no secret, and no absolute path outside the workflow directory.
    def redacted(text: str) -> str:
        return redact_text(text, settings.secrets, base_dir=settings.base_dir)

    if doing is not None:
        return failure_result(redacted(f"{doing} failed: {error_message(exc)}"), reason="internal_error")
    known = failure_from(exc)
    if known is None:
        return failure_result(redacted(f"{name} failed: {error_message(exc)}"), reason="internal_error")
    return ToolFailure(
        redacted(f"{name} failed: {known.message}"),
        reason=known.reason,
        retryable=known.retryable,
        recovery=known.recovery,
        code=known.code,
        details=known.details,
    ).to_result()
