"""``lorenz check --online``: what ``server.auth``'s issuer publishes, fetched now: its metadata
(RFC 8414, then OpenID Connect discovery) and its signing keys, each failure naming the key at
fault. A fetch waits at most :data:`~.keys.FETCH_TIMEOUT`; nothing is sent but GETs."""

from __future__ import annotations

from typing import Any

import httpx
from attrs import frozen

from lorenz.settings.model import OAuthSettings

from .keys import FETCH_TIMEOUT, discover_jwks_uri, fetch_failure, get_json, signing_keys

__all__ = ["IssuerReport", "ProbeError", "probe_issuer"]


class ProbeError(Exception):
    """What ``server.auth`` points at cannot be used; the message names the key at fault."""


@frozen(kw_only=True)
class IssuerReport:
    """What the issuer published: where its metadata and keys are, and the signing keys' ids."""

    metadata_url: str | None
    jwks_uri: str
    #: ``(kid, alg)`` of each signing key (``"-"`` for one without).
    keys: tuple[tuple[str, str], ...]

    def wire(self) -> dict[str, Any]:
        return {
            "metadata": self.metadata_url,
            "jwksUri": self.jwks_uri,
            "keys": [{"kid": kid, "alg": alg} for kid, alg in self.keys],
        }


async def probe_issuer(auth: OAuthSettings, client: httpx.AsyncClient | None = None) -> IssuerReport:
    """Fetch the issuer's metadata (unless ``jwks_uri`` is set) and its keys; raises :class:`ProbeError`."""
    own = client is None
    http = client if client is not None else httpx.AsyncClient(timeout=FETCH_TIMEOUT)
    try:
        metadata_url, key = None, "server.auth.jwks_uri"
        jwks_uri = auth.jwks_uri
        if jwks_uri is None:
            try:
                metadata_url, jwks_uri = await discover_jwks_uri(http, auth.issuer)
            except ValueError as exc:
                raise ProbeError(f"server.auth.issuer: {exc}") from None
            key = f"server.auth.issuer (the jwks_uri {jwks_uri} of its metadata)"
        try:
            document = await get_json(http, jwks_uri)
        except (httpx.HTTPError, ValueError) as exc:
            why = fetch_failure(exc)
            raise ProbeError(f"{key}: the signing keys could not be fetched from {jwks_uri} ({why})") from None
    finally:
        if own:
            await http.aclose()
    try:
        signing = signing_keys(document)
    except ValueError:
        raise ProbeError(f'{key}: {jwks_uri} is no JWKS (no "keys" list)') from None
    if not signing:
        raise ProbeError(f"{key}: {jwks_uri} publishes no signing key")
    keys = tuple((str(item.get("kid", "-")), str(item.get("alg", "-"))) for item in signing)
    return IssuerReport(metadata_url=metadata_url, jwks_uri=jwks_uri, keys=keys)
