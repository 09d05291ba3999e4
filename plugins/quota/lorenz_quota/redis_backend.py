"""The Redis backend: the memory backend's rules as one Lua script, atomic across workers and
replicas that share the server. Time is Redis's own (``TIME``), so replicas' clocks need not agree.
Every command has the configured timeout; a failure raises :class:`BackendError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .memory import CONCURRENCY_RETRY_SECONDS, Check, Decision

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["BackendError", "RedisBackend"]

# KEYS: one per check. ARGV: lease, then kind, a, b per check. Returns {allowed, retry, failed}
# (retry as a string: Lua numbers become integers on the way out).
ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local lease = ARGV[1]
local retry, failed = -1, 0
local state = {}
for i = 1, #KEYS do
  local kind, a, b = ARGV[i * 3 - 1], tonumber(ARGV[i * 3]), tonumber(ARGV[i * 3 + 1])
  local key, wait = KEYS[i], nil
  if kind == 'bucket' then
    local h = redis.call('HMGET', key, 'tokens', 'at')
    local tokens, at = tonumber(h[1]) or b, tonumber(h[2]) or now
    if now > at then tokens = math.min(b, tokens + (now - at) * a) end
    state[i] = {tokens, math.max(now, at)}
    if tokens < 1 then wait = (1 - tokens) / a end
  elseif kind == 'window' then
    local start = math.floor(now / b) * b
    local h = redis.call('HMGET', key, 'start', 'count')
    local count = 0
    if tonumber(h[1]) == start then count = tonumber(h[2]) or 0 end
    state[i] = {start, count}
    if count >= a then wait = start + b - now end
  else
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
    if redis.call('ZCARD', key) >= a then wait = tonumber(ARGV[#ARGV]) end
  end
  if wait ~= nil and wait > retry then retry, failed = wait, i end
end
if failed > 0 then return {0, tostring(retry), failed} end
for i = 1, #KEYS do
  local kind, a, b = ARGV[i * 3 - 1], tonumber(ARGV[i * 3]), tonumber(ARGV[i * 3 + 1])
  local key = KEYS[i]
  if kind == 'bucket' then
    redis.call('HSET', key, 'tokens', tostring(state[i][1] - 1), 'at', tostring(state[i][2]))
    redis.call('PEXPIRE', key, math.ceil(b / a * 1000) + 1000)
  elseif kind == 'window' then
    redis.call('HSET', key, 'start', tostring(state[i][1]), 'count', state[i][2] + 1)
    redis.call('PEXPIREAT', key, math.ceil((state[i][1] + b) * 1000) + 1000)
  else
    redis.call('ZADD', key, now + b, lease)
    redis.call('PEXPIRE', key, math.ceil(b * 1000) + 1000)
  end
end
return {1, '0', 0}
"""


class BackendError(Exception):
    """The backend could not answer (unreachable, timed out, refused the script)."""


class RedisBackend:
    """Counters in Redis; the client (and its connections) is made on first use, in the loop
    that uses it (the module is imported here, at start-up, not on the first call)."""

    def __init__(self, url: str, *, password: str | None, timeout: float) -> None:
        import redis.asyncio  # noqa: F401

        self.url = url
        self.password = password
        self.timeout = timeout
        self._client: Redis | None = None
        self._acquire: Any = None

    def _redis(self) -> Any:
        if self._client is None:
            from redis.asyncio import Redis

            self._client = Redis.from_url(
                self.url,
                password=self.password,
                socket_timeout=self.timeout,
                socket_connect_timeout=self.timeout,
                retry_on_timeout=False,
            )
            self._acquire = self._client.register_script(ACQUIRE)
        return self._acquire

    async def acquire(self, checks: Sequence[Check], lease: str) -> Decision:
        script = self._redis()
        argv: list[Any] = [lease]
        for check in checks:
            argv += [check.kind, repr(check.a), repr(check.b)]
        argv.append(repr(CONCURRENCY_RETRY_SECONDS))
        try:
            allowed, retry, failed = await script(keys=[check.key for check in checks], args=argv)
        except Exception as exc:  # redis-py's errors, OSError, timeouts: all mean "no answer"
            raise BackendError(_describe(exc)) from None
        if int(allowed) == 1:
            return Decision(True)
        return Decision(False, float(retry), int(failed) - 1)

    async def release(self, keys: Sequence[str], lease: str) -> None:
        self._redis()
        assert self._client is not None
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.zrem(key, lease)
                await pipe.execute()
        except Exception as exc:  # the lease then runs out by itself
            raise BackendError(_describe(exc)) from None

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _describe(exc: BaseException) -> str:
    """The error's type and message (redis-py names the host and port, never the password)."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
