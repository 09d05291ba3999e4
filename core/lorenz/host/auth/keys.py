"""An issuer's signing keys (its JWKS), fetched through the host's HTTP client and cached.

Keys are fetched on first need and again once they are an hour old; a token naming a key the
set lacks (a rotation at the issuer) refetches them at once, but at most once per
:data:`REFRESH_INTERVAL`, so tokens with made-up key ids cannot turn the host into a proxy that
hammers the issuer. One fetch at a time: concurrent requests wait for the one under way, each
for at most :data:`KEY_WAIT` seconds. A failed fetch keeps the keys already known, and no fetch
follows it for a back-off (:func:`backoff`); a token the known keys cannot check meanwhile gets
:class:`IssuerUnavailable` (a 503), never a refusal it has not earned. Each worker holds its own set.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from lorenz.backoff import Backoff
from lorenz.settings.model import OAuthSettings

__all__ = [
    "BACKOFF_CAP",
    "BACKOFF_FIRST",
    "FETCH_TIMEOUT",
    "KEY_WAIT",
    "MAX_AGE",
    "REFRESH_INTERVAL",
    "IssuerUnavailable",
    "KeySet",
    "backoff",
    "discover_jwks_uri",
    "fetch_failure",
    "get_json",
    "metadata_urls",
    "signing_keys",
]

logger = logging.getLogger("lorenz.host")

MAX_AGE = 3600.0
REFRESH_INTERVAL = 30.0
FETCH_TIMEOUT = httpx.Timeout(10.0)
#: How long a request waits for a fetch under way before it is answered 503.
KEY_WAIT = 3.0
#: After a failed fetch, none for this long, doubling with each failure in a row up to the cap.
BACKOFF_FIRST = 2.0
BACKOFF_CAP = 30.0


class IssuerUnavailable(Exception):
    """The issuer cannot be asked now (down, slow, or asked enough): try again in ``retry_after`` s."""

    def __init__(self, reason: str, retry_after: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


def backoff(failures: int) -> float:
    """How long no fetch follows ``failures`` failed fetches in a row."""
    return Backoff(BACKOFF_FIRST, BACKOFF_CAP).delay(max(failures, 1))


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be: RFC 8414 (``/.well-known/…`` before the issuer's path),
    then OpenID Connect discovery (after it)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    return [
        urlunsplit((parts.scheme, parts.netloc, f"/.well-known/oauth-authorization-server{path}", "", "")),
        urlunsplit((parts.scheme, parts.netloc, f"{path}/.well-known/openid-configuration", "", "")),
    ]


def fetch_failure(exc: Exception) -> str:
    """Why a GET of JSON failed, in a few words: ``HTTP 404``, ``ConnectError``, not JSON."""
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, httpx.HTTPError):
        return type(exc).__name__
    return "the answer is not JSON"


async def get_json(client: httpx.AsyncClient, url: str) -> Any:
    """The JSON document at ``url`` (a GET, bounded by :data:`FETCH_TIMEOUT`)."""
    response = await client.get(url, timeout=FETCH_TIMEOUT, headers={"Accept": "application/json"})
    response.raise_for_status()
    return response.json()


async def discover_jwks_uri(client: httpx.AsyncClient, issuer: str) -> tuple[str, str]:
    """The metadata URL that answered (:func:`metadata_urls`, in order) and the ``jwks_uri`` it
    names; ``ValueError`` saying what is wrong there, or where nothing answered."""
    tried: list[str] = []
    for url in metadata_urls(issuer):
        try:
            document = await get_json(client, url)
        except (httpx.HTTPError, ValueError) as exc:
            tried.append(f"{url} ({fetch_failure(exc)})")
            continue
        if not isinstance(document, dict):
            tried.append(f"{url} (not a JSON object)")
            continue
        # RFC 8414 §3.3: metadata naming another issuer must not be used.
        named = str(document.get("issuer", ""))
        if named.rstrip("/") != issuer.rstrip("/"):
            raise ValueError(f"the metadata at {url} names the issuer {named or '(none)'!r}")
        uri = document.get("jwks_uri")
        if not isinstance(uri, str) or not uri.startswith(("https://", "http://")):
            raise ValueError(f"the metadata at {url} has no jwks_uri (set server.auth.jwks_uri)")
        return url, uri
    raise ValueError(f"no authorization server metadata at {' nor '.join(tried)}")


def signing_keys(document: Any) -> list[Mapping[str, Any]]:
    """The signing keys of a JWKS document (a key published for encryption never verifies a
    token); ``ValueError`` when it has no ``keys`` list."""
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list):
        raise ValueError('no "keys" list')
    return [key for key in keys if isinstance(key, dict) and key.get("use", "sig") == "sig"]


class KeySet:
    """The signing keys of ``settings.issuer``, by ``kid``."""

    def __init__(
        self,
        settings: OAuthSettings,
        client: Callable[[], httpx.AsyncClient],
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._settings = settings
        self._client = client
        self._clock = clock
        self._jwks_uri = settings.jwks_uri
        self._keys: list[Mapping[str, Any]] = []
        self._loaded_at: float | None = None
        self._refreshed_at: float | None = None
        self._failures = 0
        self._retry_at = 0.0
        self._fetching: asyncio.Task[None] | None = None

    async def find(self, kid: str | None) -> Mapping[str, Any] | None:
        """The JWK for ``kid`` (the only signing key when the token names none), ``None`` if the
        issuer does not publish it; :class:`IssuerUnavailable` when its keys cannot be had now."""
        now = self._clock()
        if self._loaded_at is None or now - self._loaded_at >= MAX_AGE:
            await self._refresh(now)
        found = self._pick(kid)
        # A rotation at the issuer, at most once an interval; never a second wait for a slow fetch.
        due = self._refreshed_at is None or now - self._refreshed_at >= REFRESH_INTERVAL
        if found is None and self._loaded_at is not None and due and self._fetching is None:
            self._refreshed_at = now
            await self._refresh(now)
            found = self._pick(kid)
        if found is None and (self._failures or self._fetching is not None):
            # The issuer is not answering: the key may be one it rotated to, so this is no refusal.
            waiting = self._fetching is not None
            reason = (
                "the issuer's signing keys are being fetched"
                if waiting
                else "the issuer's signing keys are unavailable"
            )
            raise IssuerUnavailable(reason, KEY_WAIT if waiting else self._retry_at - self._clock())
        return found

    def _pick(self, kid: str | None) -> Mapping[str, Any] | None:
        if kid is None:
            return self._keys[0] if len(self._keys) == 1 else None
        return next((key for key in self._keys if key.get("kid") == kid), None)

    async def _refresh(self, now: float) -> None:
        """Fetch the keys, or wait for the fetch under way, for at most :data:`KEY_WAIT` seconds;
        nothing within the back-off after a failure."""
        if self._fetching is None:
            if now < self._retry_at:
                return
            self._fetching = asyncio.get_running_loop().create_task(self._fetch())
        # Shielded: a request that stops waiting leaves the fetch to finish for the next ones.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._fetching), KEY_WAIT)

    async def _fetch(self) -> None:
        uri = self._jwks_uri
        try:
            if uri is None:
                uri = (await discover_jwks_uri(self._client(), self._settings.issuer))[1]
            keys = signing_keys(await get_json(self._client(), uri))
        except Exception as exc:  # whatever the issuer answers (or fails to), the host keeps serving
            self._failures += 1
            delay = backoff(self._failures)
            self._retry_at = self._clock() + delay
            http = isinstance(exc, httpx.HTTPError)
            why = f"{uri}: {fetch_failure(exc)}" if http else (str(exc) or type(exc).__name__)
            logger.warning(
                "lorenz: could not fetch the signing keys of %s (%s); next try in %g s",
                self._settings.issuer,
                why,
                delay,
            )
        else:
            self._jwks_uri, self._keys = uri, keys
            self._loaded_at, self._failures, self._retry_at = self._clock(), 0, 0.0
        finally:
            self._fetching = None
