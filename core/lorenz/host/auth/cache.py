"""What keeps token introspection (RFC 7662) from costing the issuer a request per request.

:class:`IntrospectionCache` keeps answers by the token's SHA-256: an active one until the
token's ``exp`` or :data:`TTL` seconds, whichever is first (a token revoked at the issuer is
still accepted that long), an inactive one for :data:`INACTIVE_TTL` seconds; at most
:data:`MAX_ENTRIES` of each, the oldest dropped first, so a flood of unknown tokens never pushes
out the active ones. :class:`Budget` bounds the requests that reach the issuer per worker: a
burst of :data:`BURST`, then :data:`RATE` a second.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from mcp.server.auth.provider import AccessToken

__all__ = ["BURST", "INACTIVE_TTL", "MAX_ENTRIES", "RATE", "TTL", "Budget", "IntrospectionCache", "token_key"]

TTL = 60.0
INACTIVE_TTL = 30.0
MAX_ENTRIES = 1024
BURST = 10
RATE = 5.0

V = TypeVar("V")


def token_key(token: str) -> bytes:
    """What a token is kept by: never the token itself."""
    return hashlib.sha256(token.encode("utf-8")).digest()


class _Expiring(Generic[V]):
    """Values by key, each until its deadline; at most ``size``, the oldest dropped first."""

    def __init__(self, size: int, clock: Callable[[], float]) -> None:
        self._size = size
        self._clock = clock
        self._entries: OrderedDict[bytes, tuple[float, V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: bytes) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if self._clock() >= entry[0]:
            del self._entries[key]
            return None
        return entry[1]

    def put(self, key: bytes, deadline: float, value: V) -> None:
        if deadline <= self._clock():
            return
        self._entries.pop(key, None)
        while len(self._entries) >= self._size:
            self._entries.popitem(last=False)
        self._entries[key] = (deadline, value)


class IntrospectionCache:
    """Introspection answers by token (wall-clock seconds)."""

    def __init__(
        self,
        *,
        ttl: float = TTL,
        inactive_ttl: float = INACTIVE_TTL,
        size: int = MAX_ENTRIES,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._ttl = ttl
        self._inactive_ttl = inactive_ttl
        self._clock = clock
        self._active: _Expiring[AccessToken] = _Expiring(size, clock)
        self._inactive: _Expiring[bool] = _Expiring(size, clock)

    def __len__(self) -> int:
        return len(self._active)

    def get(self, token: str) -> AccessToken | None:
        """The active answer kept for ``token``."""
        return self._active.get(token_key(token))

    def inactive(self, token: str) -> bool:
        """Whether ``token`` was refused a moment ago (inactive, or not for this server)."""
        return self._inactive.get(token_key(token)) is not None

    def put(self, token: str, access: AccessToken | None) -> None:
        """Keep an answer: an active one until its ``expires_at`` or the TTL (not at all if already
        past), ``None`` (refused) for the inactive TTL."""
        now = self._clock()
        if access is None:
            self._inactive.put(token_key(token), now + self._inactive_ttl, True)
            return
        deadline = now + self._ttl
        if access.expires_at is not None:
            deadline = min(deadline, float(access.expires_at))
        self._active.put(token_key(token), deadline, access)


class Budget:
    """A token bucket: ``burst`` requests at once, refilled at ``rate`` a second."""

    def __init__(self, *, burst: int = BURST, rate: float = RATE, clock: Callable[[], float] = time.monotonic) -> None:
        self._burst = float(burst)
        self._rate = rate
        self._clock = clock
        self._left = float(burst)
        self._at = clock()

    def take(self) -> float:
        """Spend one request: ``0.0`` when there was one to spend, else the seconds until there is."""
        now = self._clock()
        self._left = min(self._burst, self._left + (now - self._at) * self._rate)
        self._at = now
        if self._left >= 1.0:
            self._left -= 1.0
            return 0.0
        return (1.0 - self._left) / self._rate
