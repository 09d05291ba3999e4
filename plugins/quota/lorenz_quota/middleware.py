"""The ``quota`` middleware: each call checked against the limits matching its tool and caller,
refused as ``rate_limited`` with ``retryAfter`` and a recovery, or run (holding its concurrency
slots until it ends)."""

from __future__ import annotations

import fnmatch
import logging
import uuid
from typing import Any, Protocol

from lorenz import Call, CallNext, ToolResult, redact_text, refusal

from .memory import Check, Decision, MemoryBackend
from .options import Limit, QuotaOptions
from .redis_backend import BackendError, RedisBackend

__all__ = ["QuotaMiddleware"]

logger = logging.getLogger("lorenz.quota")
#: How long an agent is told to wait when the backend could not answer.
BACKEND_RETRY_SECONDS = 5.0


class Backend(Protocol):
    async def acquire(self, checks: list[Check], lease: str) -> Decision: ...
    async def release(self, keys: list[str], lease: str) -> None: ...


class QuotaMiddleware:
    def __init__(self, options: QuotaOptions, backend: Backend | None = None) -> None:
        self.options = options
        if backend is None:
            if options.backend == "redis":
                assert options.url is not None
                backend = RedisBackend(options.url, password=options.password, timeout=options.timeout_seconds)
            else:
                backend = MemoryBackend()
        self.backend = backend
        self._backend_down = False
        #: What this worker decided since the workflow was loaded (``/healthz``).
        self.counts = {"allowed": 0, "refused": 0, "backendErrors": 0}
        where = "Redis (shared by every worker and replica using it)" if options.backend == "redis" else "memory"
        logger.info(
            "lorenz-quota: %d limit(s), counted in %s%s; when the backend cannot answer: %s",
            len(options.limits),
            where,
            " (each worker process counts on its own)" if options.backend == "memory" else "",
            options.on_backend_error,
        )

    def checks(self, call: Call) -> tuple[list[Check], list[Limit]]:
        """The counters ``call`` must pass, and the limit each belongs to."""
        checks: list[Check] = []
        owners: list[Limit] = []
        identities = call.identities
        for limit in self.options.limits:
            if not any(fnmatch.fnmatchcase(call.tool, glob) for glob in limit.tools):
                continue
            if not any(fnmatch.fnmatchcase(who, glob) for glob in limit.callers for who in identities):
                continue
            scope = ":".join(
                [identities[0] if "caller" in limit.per else "*", call.tool if "tool" in limit.per else "*"]
            )
            base = f"{self.options.key_prefix}:{limit.id}:{scope}"
            if limit.rate is not None and limit.burst is not None:
                checks.append(Check(f"{base}:bucket", "bucket", limit.rate, limit.burst))
                owners.append(limit)
            if limit.quota is not None and limit.window is not None:
                checks.append(Check(f"{base}:window", "window", limit.quota, limit.window))
                owners.append(limit)
            if limit.concurrency is not None:
                checks.append(Check(f"{base}:running", "concurrency", limit.concurrency, self.options.lease_seconds))
                owners.append(limit)
        return checks, owners

    async def __call__(self, call: Call, call_next: CallNext) -> ToolResult:
        checks, owners = self.checks(call)
        if not checks:
            return await call_next(call)
        held = [check.key for check in checks if check.kind == "concurrency"]
        lease = uuid.uuid4().hex if held else ""  # names this call's concurrency slots
        try:
            decision = await self.backend.acquire(checks, lease)
        except BackendError as exc:
            self.counts["backendErrors"] += 1
            return await self._without_backend(call, call_next, exc)
        if self._backend_down:
            self._backend_down = False
            logger.warning("lorenz-quota: the %s backend answers again", self.options.backend)
        if not decision.allowed:
            self.counts["refused"] += 1
            return _refused(call, checks[decision.failed], owners[decision.failed], decision.retry_after)
        self.counts["allowed"] += 1
        try:
            return await call_next(call)
        finally:
            if held:
                try:
                    await self.backend.release(held, lease)
                except BackendError as exc:  # the lease runs out by itself
                    logger.warning("lorenz-quota: could not release a concurrency slot: %s", self._redacted(exc))

    async def _without_backend(self, call: Call, call_next: CallNext, exc: BackendError) -> ToolResult:
        if not self._backend_down:  # once per outage, not once per call
            self._backend_down = True
            logger.warning(
                "lorenz-quota: the %s backend cannot answer (%s); on_backend_error: %s, so calls are %s until it does",
                self.options.backend,
                self._redacted(exc),
                self.options.on_backend_error,
                "allowed unlimited" if self.options.on_backend_error == "allow" else "refused",
            )
        if self.options.on_backend_error == "allow":
            return await call_next(call)
        return refusal(
            "the server's rate-limit backend cannot answer, so calls are refused until it does",
            reason="service_unavailable",
            recovery=f"wait {BACKEND_RETRY_SECONDS:g} s (retryAfter) and call {call.tool} again; "
            "if it keeps failing, tell the user the server's quota store is down",
            retry_after=BACKEND_RETRY_SECONDS,
        )

    def health(self) -> dict[str, Any]:
        """``/healthz``'s ``middleware.quota``: the backend, whether it answers, and this worker's counts."""
        return {
            "backend": self.options.backend,
            "countedPer": "worker" if self.options.backend == "memory" else "every worker and replica",
            "backendDown": self._backend_down,
            "limits": len(self.options.limits),
            **self.counts,
        }

    def _redacted(self, exc: BaseException) -> str:
        return redact_text(str(exc), self.options.secrets)

    async def aclose(self) -> None:
        close = getattr(self.backend, "aclose", None)
        if close is not None:
            await close()


def _refused(call: Call, check: Check, limit: Limit, retry_after: float) -> ToolResult:
    retry_after = max(retry_after, 0.001)
    who = " per caller" if "caller" in limit.per else ""
    whom = f" per tool{who and ' and caller'}" if "tool" in limit.per else who
    tools = ", ".join(limit.tools)
    if check.kind == "bucket":
        message = f"rate limit reached for {call.tool}: {limit.label}{whom} (tools {tools})"
        recovery = f"wait {retry_after:.3g} s (retryAfter), then call {call.tool} again; do not retry sooner"
    elif check.kind == "window":
        message = f"quota used up for {call.tool}: {limit.label}{whom} (tools {tools})"
        recovery = (
            f"the quota resets in {retry_after:.0f} s (retryAfter); work without {call.tool} until then, "
            "or tell the user the quota is spent"
        )
    else:
        message = f"too many calls of {call.tool} running at once: {limit.label}{whom} (tools {tools})"
        recovery = f"wait for your running calls to finish, then call {call.tool} again (retry in {retry_after:g} s)"
    return refusal(message, reason="rate_limited", recovery=recovery, retry_after=retry_after)
