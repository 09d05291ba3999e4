"""Checking an access token the way the SDK's ``TokenVerifier`` protocol asks: a JWT against the
issuer's keys (PyJWT does the cryptography), an opaque token by introspection (RFC 7662).

A JWT must be signed with an asymmetric algorithm from :data:`ALGORITHMS` (never ``none``, never
an HMAC, whose key would be public), by a key the issuer publishes, and carry this issuer, this
server's audience and an unexpired ``exp``; ``nbf``/``exp`` allow :data:`LEEWAY` seconds of skew.

An opaque token's introspection answer must be ``active``, unexpired, from this issuer (when it
names one) and name this server's audience in ``aud``, as a JWT must. The answer is cached
(:mod:`.cache`); a token not cached is asked about once at a time, within the worker's
:class:`~.cache.Budget`. A request never waits longer than
:data:`~.keys.KEY_WAIT` for the issuer: past it, or past the budget, or when the issuer fails,
:class:`~.keys.IssuerUnavailable` (a 503), since the token may well be good.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx
import jwt
from mcp.server.auth.provider import AccessToken

from lorenz.settings.model import OAuthSettings

from .cache import Budget, IntrospectionCache, token_key
from .keys import FETCH_TIMEOUT, KEY_WAIT, IssuerUnavailable, KeySet

__all__ = ["ALGORITHMS", "LEEWAY", "OAuthVerifier", "token_scopes"]

logger = logging.getLogger("lorenz.host")

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
LEEWAY = 60


def _variants(url: str) -> list[str]:
    """A URL with and without its trailing slash: issuers and audiences are written both ways."""
    bare = url.rstrip("/")
    return [bare, f"{bare}/"]


def token_scopes(claims: Mapping[str, Any]) -> list[str]:
    """The scopes of a token: ``scope`` (a space-separated string, RFC 8693/9068) or ``scp``."""
    raw = claims.get("scope", claims.get("scp"))
    if isinstance(raw, str):
        return raw.split()
    if isinstance(raw, list):
        return [item for item in raw if isinstance(item, str)]
    return []


class OAuthVerifier:
    """A ``mcp.server.auth.provider.TokenVerifier`` for one issuer and one audience."""

    def __init__(
        self,
        settings: OAuthSettings,
        keys: KeySet,
        audience: str,
        client: Callable[[], httpx.AsyncClient],
        budget: Budget,
    ) -> None:
        self.settings = settings
        self.keys = keys
        self.audience = audience
        self._client = client
        self._budget = budget
        self.introspected = IntrospectionCache()
        self._asking: dict[bytes, asyncio.Task[AccessToken | None]] = {}
        self._said_no_audience = False

    async def verify_token(self, token: str) -> AccessToken | None:
        if token.count(".") == 2:
            return await self._jwt(token)
        if self.settings.introspection is not None:
            return await self._introspect(token)
        return None

    async def _jwt(self, token: str) -> AccessToken | None:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        alg = header.get("alg")
        if alg not in ALGORITHMS:
            return None
        kid = header.get("kid")
        jwk = await self.keys.find(kid if isinstance(kid, str) else None)
        if jwk is None:
            return None
        try:
            key = jwt.PyJWK(dict(jwk), algorithm=jwk.get("alg") or alg)
            claims = jwt.decode(
                token,
                key=key,
                algorithms=[alg],
                audience=_variants(self.audience),
                issuer=_variants(self.settings.issuer),
                leeway=LEEWAY,
                options={"require": ["exp", "iss", "aud"]},
            )
        except jwt.PyJWTError:
            return None
        return self._access_token(token, claims)

    async def _introspect(self, token: str) -> AccessToken | None:
        cached = self.introspected.get(token)
        if cached is not None or self.introspected.inactive(token):
            return cached
        key = token_key(token)
        asking = self._asking.get(key)
        if asking is None:
            wait = self._budget.take()
            if wait:
                raise IssuerUnavailable("too many new tokens to introspect", wait)
            asking = self._asking[key] = asyncio.get_running_loop().create_task(self._ask_and_keep(token))
            asking.add_done_callback(lambda task: self._asked(key, task))
        try:
            # Shielded: a request that stops waiting leaves the answer to be kept for the next ones.
            return await asyncio.wait_for(asyncio.shield(asking), KEY_WAIT)
        except TimeoutError:
            raise IssuerUnavailable("the introspection endpoint is slow", KEY_WAIT) from None

    def _asked(self, key: bytes, task: asyncio.Task[AccessToken | None]) -> None:
        self._asking.pop(key, None)
        if not task.cancelled():
            task.exception()  # taken, so one no request waited for is not logged as lost

    async def _ask_and_keep(self, token: str) -> AccessToken | None:
        access = await self._ask_issuer(token)
        self.introspected.put(token, access)
        return access

    async def _ask_issuer(self, token: str) -> AccessToken | None:
        settings = self.settings.introspection
        assert settings is not None
        try:
            response = await self._client().post(
                settings.endpoint,
                data={"token": token, "token_type_hint": "access_token"},
                auth=(settings.client_id, settings.client_secret),
                headers={"Accept": "application/json"},
                timeout=FETCH_TIMEOUT,
            )
            response.raise_for_status()
            claims = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            why = f"HTTP {exc.response.status_code}" if isinstance(exc, httpx.HTTPStatusError) else type(exc).__name__
            logger.warning("lorenz: token introspection at %s failed: %s", settings.endpoint, why)
            raise IssuerUnavailable("the introspection endpoint failed", KEY_WAIT) from None
        if not isinstance(claims, dict) or claims.get("active") is not True:
            return None
        now = time.time()
        exp, nbf = claims.get("exp"), claims.get("nbf")
        if (isinstance(exp, int | float) and exp + LEEWAY < now) or (
            isinstance(nbf, int | float) and nbf - LEEWAY > now
        ):
            return None
        if "iss" in claims and claims["iss"] not in _variants(self.settings.issuer):
            return None
        # Like a JWT's, the answer must name this server: one without an audience may be a token
        # the issuer gave a client for another resource, which this server must not take.
        aud = claims.get("aud")
        named = {name for name in ([aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []) if name}
        if not all(isinstance(name, str) for name in named) or not named:
            self._no_audience(settings.endpoint)
            return None
        if not named & set(_variants(self.audience)):
            return None
        return self._access_token(token, claims)

    def _no_audience(self, endpoint: str) -> None:
        """Say (once) why every token the issuer introspects is refused: its answers name no ``aud``."""
        if not self._said_no_audience:
            self._said_no_audience = True
            logger.warning(
                'lorenz: the introspection endpoint %s answered without "aud" (a string or a list of strings): '
                "the token is refused, as a JWT without one is; have the issuer name this server's audience (%s) "
                "in its answers",
                endpoint,
                self.audience,
            )

    def _access_token(self, token: str, claims: Mapping[str, Any]) -> AccessToken:
        client_id = claims.get("client_id", claims.get("azp"))
        exp = claims.get("exp")
        return AccessToken(
            token=token,
            client_id=client_id if isinstance(client_id, str) else "",
            scopes=token_scopes(claims),
            expires_at=int(exp) if isinstance(exp, int | float) else None,
            resource=self.audience,
            subject=claims.get("sub") if isinstance(claims.get("sub"), str) else None,
            claims={"iss": claims.get("iss")},
        )
