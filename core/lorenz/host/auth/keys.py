"""An issuer's signing keys (its JWKS), fetched through the host's HTTP client and cached.

Keys are fetched on first need and again once they are an hour old; a token naming a key the
set lacks (a rotation at the issuer) refetches them at once, but at most once per
:data:`REFRESH_INTERVAL`, so tokens with made-up key ids cannot turn the host into a proxy that
hammers the issuer. A failed fetch keeps the keys already known. Each worker holds its own set.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from lorenz.settings.model import OAuthSettings

__all__ = ["FETCH_TIMEOUT", "MAX_AGE", "REFRESH_INTERVAL", "KeySet", "metadata_urls"]

logger = logging.getLogger("lorenz.host")

MAX_AGE = 3600.0
REFRESH_INTERVAL = 30.0
FETCH_TIMEOUT = httpx.Timeout(10.0)


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be: RFC 8414 (``/.well-known/…`` before the issuer's path),
    then OpenID Connect discovery (after it)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    return [
        urlunsplit((parts.scheme, parts.netloc, f"/.well-known/oauth-authorization-server{path}", "", "")),
        urlunsplit((parts.scheme, parts.netloc, f"{path}/.well-known/openid-configuration", "", "")),
    ]


async def _get_json(client: httpx.AsyncClient, url: str) -> Any:
    response = await client.get(url, timeout=FETCH_TIMEOUT, headers={"Accept": "application/json"})
    response.raise_for_status()
    return response.json()


class KeySet:
    """The signing keys of ``settings.issuer``, by ``kid``."""

    def __init__(self, settings: OAuthSettings, client: Callable[[], httpx.AsyncClient]) -> None:
        self._settings = settings
        self._client = client
        self._jwks_uri = settings.jwks_uri
        self._keys: list[Mapping[str, Any]] = []
        self._loaded_at: float | None = None
        self._failed_at: float | None = None
        self._refreshed_at: float | None = None
        self._generation = 0
        self._lock = asyncio.Lock()

    async def find(self, kid: str | None) -> Mapping[str, Any] | None:
        """The JWK for ``kid`` (the only signing key when the token names none), ``None`` if unknown."""
        now = time.monotonic()
        if self._stale(now):
            await self._fetch(self._generation)
        found = self._pick(kid)
        if found is None and (self._refreshed_at is None or now - self._refreshed_at >= REFRESH_INTERVAL):
            self._refreshed_at = now
            await self._fetch(self._generation)
            found = self._pick(kid)
        return found

    def _stale(self, now: float) -> bool:
        if self._failed_at is not None and now - self._failed_at < REFRESH_INTERVAL:
            return False
        return self._loaded_at is None or now - self._loaded_at >= MAX_AGE

    def _pick(self, kid: str | None) -> Mapping[str, Any] | None:
        if kid is None:
            return self._keys[0] if len(self._keys) == 1 else None
        return next((key for key in self._keys if key.get("kid") == kid), None)

    async def _fetch(self, seen: int) -> None:
        async with self._lock:
            if self._generation != seen:  # another request fetched them while this one waited
                return
            try:
                uri = self._jwks_uri or await self._discover()
                document = await _get_json(self._client(), uri)
                keys = document.get("keys") if isinstance(document, dict) else None
                if not isinstance(keys, list):
                    raise ValueError('the document has no "keys" list')
            except (httpx.HTTPError, ValueError) as exc:
                self._failed_at = time.monotonic()
                logger.warning("lorenz: could not fetch the signing keys of %s: %s", self._settings.issuer, exc)
                return
            self._jwks_uri = uri
            # Signing keys only: a key published for encryption never verifies a token.
            self._keys = [key for key in keys if isinstance(key, dict) and key.get("use", "sig") == "sig"]
            self._loaded_at, self._failed_at = time.monotonic(), None
            self._generation += 1

    async def _discover(self) -> str:
        issuer = self._settings.issuer
        for url in metadata_urls(issuer):
            try:
                metadata = await _get_json(self._client(), url)
            except (httpx.HTTPError, ValueError):
                continue
            if not isinstance(metadata, dict):
                continue
            # RFC 8414 §3.3: metadata naming another issuer must not be used.
            if str(metadata.get("issuer", "")).rstrip("/") != issuer.rstrip("/"):
                raise ValueError(f"the metadata at {url} names another issuer")
            uri = metadata.get("jwks_uri")
            if isinstance(uri, str) and uri.startswith(("https://", "http://")):
                return uri
            raise ValueError(f"the metadata at {url} has no jwks_uri")
        raise ValueError("no authorization server metadata found (set server.auth.jwks_uri)")
