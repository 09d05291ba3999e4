"""Introspection answers kept for a while, so an opaque token is not sent to the issuer on every
request: an active answer until the token's ``exp`` or :data:`TTL` seconds, whichever is first
(a token revoked at the issuer is still accepted that long); an inactive one is never kept. At
most :data:`MAX_ENTRIES` tokens, the oldest dropped first; keyed by the token's SHA-256."""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable

from mcp.server.auth.provider import AccessToken

__all__ = ["MAX_ENTRIES", "TTL", "IntrospectionCache"]

TTL = 60.0
MAX_ENTRIES = 1024


def _key(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


class IntrospectionCache:
    """Active introspection answers by token, each until its deadline (wall-clock seconds)."""

    def __init__(self, *, ttl: float = TTL, size: int = MAX_ENTRIES, clock: Callable[[], float] = time.time) -> None:
        self._ttl = ttl
        self._size = size
        self._clock = clock
        self._entries: OrderedDict[bytes, tuple[float, AccessToken]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, token: str) -> AccessToken | None:
        key = _key(token)
        entry = self._entries.get(key)
        if entry is None:
            return None
        if self._clock() >= entry[0]:
            del self._entries[key]
            return None
        return entry[1]

    def put(self, token: str, access: AccessToken) -> None:
        """Keep an active answer until its ``expires_at`` or the TTL (not at all if already past)."""
        now = self._clock()
        deadline = now + self._ttl
        if access.expires_at is not None:
            deadline = min(deadline, float(access.expires_at))
        if deadline <= now:
            return
        key = _key(token)
        self._entries.pop(key, None)
        while len(self._entries) >= self._size:
            self._entries.popitem(last=False)
        self._entries[key] = (deadline, access)
