"""``server.middleware_options.quota`` → :class:`QuotaOptions`, strictly: every key at fault is named.

A limit matches calls by tool globs and caller globs (against ``Call.identities``: ``token:<name>``,
``subject:<sub>``, ``client:<id>``, ``anonymous``) and holds a token bucket (``rate``, ``burst``),
a quota over a window (``quota: 1000/day``) and/or a concurrency cap, counted ``per`` caller,
tool, both or neither.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from typing import Any, Literal

from attrs import frozen

from lorenz import ConfigError, Settings, reject_unknown_keys, resolve_configured_secret

__all__ = ["Limit", "QuotaOptions", "parse_options"]

_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "min": 60.0, "minute": 60.0, "h": 3600.0, "hour": 3600.0}
_UNITS |= {"d": 86400.0, "day": 86400.0}
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)?\s*([a-z]+)\s*$")
_TOP_KEYS = ("backend", "url", "password", "on_backend_error", "timeout_seconds", "key_prefix", "limits")
_LIMIT_KEYS = ("tools", "callers", "per", "rate", "burst", "quota", "concurrency")
_PER = ("caller", "tool")
#: Seconds a concurrency slot outlives the tool timeout before it is taken back from a worker
#: that died holding it.
LEASE_GRACE_SECONDS = 60.0


@frozen(kw_only=True)
class Limit:
    """One ``limits:`` entry, parsed; ``id`` keys its counters (a changed limit starts afresh)."""

    id: str
    tools: tuple[str, ...]
    callers: tuple[str, ...]
    per: tuple[str, ...]
    rate: float | None = None
    burst: float | None = None
    quota: int | None = None
    window: float | None = None
    concurrency: int | None = None
    #: How the limit reads in a refusal: ``5/s, burst 10``.
    label: str = ""


@frozen(kw_only=True)
class QuotaOptions:
    backend: Literal["memory", "redis"]
    url: str | None
    password: str | None
    on_backend_error: Literal["allow", "refuse"]
    timeout_seconds: float
    key_prefix: str
    limits: tuple[Limit, ...]
    #: How long a concurrency slot may be held (the tool timeout plus a grace).
    lease_seconds: float
    secrets: tuple[str, ...] = ()


def parse_options(raw: Mapping[str, Any], settings: Settings, env: Mapping[str, str] | None = None) -> QuotaOptions:
    """Validate the options; raises :class:`ConfigError` naming the key at fault."""
    env = os.environ if env is None else env
    reject_unknown_keys(raw, _TOP_KEYS, "quota")
    backend = _choice(raw, "backend", ("memory", "redis"), "memory")
    on_error = _choice(raw, "on_backend_error", ("refuse", "allow"), "refuse")
    url = raw.get("url")
    if backend == "redis":
        if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigError("quota.url: backend redis needs url: redis://host:port/db (or rediss://, unix://)")
    elif url is not None:
        raise ConfigError("quota.url: only backend redis uses a url (set backend: redis)")
    secrets: list[str] = []
    password = raw.get("password")
    if password is not None:
        if not isinstance(password, str):
            raise ConfigError("quota.password must be a string (a $VAR reference keeps it out of the file)")
        password = resolve_configured_secret(password, env, register=secrets.append)
        if not password:
            raise ConfigError("quota.password: the value (or the variable it names) is empty")
    timeout = raw.get("timeout_seconds", 1.0)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ConfigError("quota.timeout_seconds must be a positive number of seconds")
    prefix = raw.get("key_prefix", "lorenz:quota")
    if not isinstance(prefix, str) or not prefix:
        raise ConfigError("quota.key_prefix must be a non-empty string")
    limits = raw.get("limits")
    if not isinstance(limits, list) or not limits:
        raise ConfigError("quota.limits: list at least one limit, e.g. [{tools: ['*'], rate: 5/s, burst: 10}]")
    return QuotaOptions(
        backend=backend,  # type: ignore[arg-type]
        url=url,
        password=password,
        on_backend_error=on_error,  # type: ignore[arg-type]
        timeout_seconds=float(timeout),
        key_prefix=prefix,
        limits=tuple(_limit(item, f"quota.limits[{index}]") for index, item in enumerate(limits)),
        lease_seconds=settings.server.tool_timeout_seconds + LEASE_GRACE_SECONDS,
        secrets=tuple(secrets),
    )


def _choice(raw: Mapping[str, Any], key: str, allowed: tuple[str, ...], default: str) -> str:
    value = raw.get(key, default)
    if value not in allowed:
        raise ConfigError(f"quota.{key} must be one of {', '.join(allowed)} (got {value!r}; default {default})")
    return str(value)


def _globs(raw: Mapping[str, Any], key: str, label: str) -> tuple[str, ...]:
    value = raw.get(key, ["*"])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value or not all(isinstance(item, str) and item for item in value):
        raise ConfigError(f"{label}.{key} must be a non-empty list of globs")
    return tuple(value)


def _per_second(value: Any, label: str) -> float:
    """``5`` (per second), ``5/s``, ``300/min``, ``10/5min``, ``1000/day``: calls per second."""
    count, seconds = _count_per(value, label)
    return count / seconds


def _count_per(value: Any, label: str) -> tuple[float, float]:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value), 1.0
    match = _RATE.match(value) if isinstance(value, str) else None
    unit = _UNITS.get(match.group(3)) if match is not None else None
    if match is None or unit is None or float(match.group(1)) <= 0:
        raise ConfigError(f"{label} must be a count per period: 5/s, 300/min, 10/5min, 1000/day (got {value!r})")
    return float(match.group(1)), unit * float(match.group(2) or 1)


def _whole(value: Any) -> bool:
    """Whether ``value`` is a whole number of calls, at least one."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _limit(raw: Any, label: str) -> Limit:
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{label} must be a mapping (tools, callers, per, rate, burst, quota, concurrency)")
    reject_unknown_keys(raw, _LIMIT_KEYS, label)
    per = raw.get("per", ["caller"])
    if isinstance(per, str):
        per = [per]
    if not isinstance(per, list) or any(item not in _PER for item in per):
        raise ConfigError(f"{label}.per must list what gets its own counters: caller, tool (or [] for one shared)")
    rate = _per_second(raw["rate"], f"{label}.rate") if "rate" in raw else None
    burst = raw.get("burst")
    if burst is not None and (rate is None or not _whole(burst)):
        raise ConfigError(f"{label}.burst must be a whole number of calls >= 1, beside a rate")
    if rate is not None and burst is None:
        burst = max(1, round(rate))  # a second's worth
    quota = window = None
    if "quota" in raw:
        count, window = _count_per(raw["quota"], f"{label}.quota")
        quota = int(count)
    concurrency = raw.get("concurrency")
    if concurrency is not None and (
        isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1
    ):
        raise ConfigError(f"{label}.concurrency must be a whole number of calls >= 1")
    if rate is None and quota is None and concurrency is None:
        raise ConfigError(f"{label}: set at least one of rate (with burst), quota, concurrency")
    parts = []
    if rate is not None:
        parts.append(
            f"{raw['rate']} (burst {burst})" if isinstance(raw["rate"], str) else f"{rate:g}/s (burst {burst})"
        )
    if quota is not None:
        parts.append(f"{raw['quota']} quota")
    if concurrency is not None:
        parts.append(f"{concurrency} at once")
    tools, callers = _globs(raw, "tools", label), _globs(raw, "callers", label)
    spec = repr((tools, callers, tuple(per), rate, burst, quota, window, concurrency))
    return Limit(
        id=hashlib.sha256(spec.encode()).hexdigest()[:10],
        tools=tools,
        callers=callers,
        per=tuple(per),
        rate=rate,
        burst=float(burst) if burst is not None else None,
        quota=quota,
        window=window,
        concurrency=concurrency,
        label=", ".join(parts),
    )
