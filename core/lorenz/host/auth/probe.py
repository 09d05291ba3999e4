"""``lorenz check --online``: what ``server.auth``'s issuer publishes, fetched now: its metadata
(RFC 8414, then OpenID Connect discovery) and its signing keys, each failure naming the key at
fault. A fetch waits at most :data:`~.keys.FETCH_TIMEOUT`; nothing is sent but GETs."""

from __future__ import annotations

from typing import Any

import httpx
from attrs import frozen

from lorenz.settings.model import OAuthSettings

from .keys import FETCH_TIMEOUT, metadata_urls

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


def _why(exc: Exception) -> str:
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    if isinstance(exc, httpx.HTTPError):
        return type(exc).__name__
    return "the answer is not JSON"


async def _json(client: httpx.AsyncClient, url: str) -> Any:
    response = await client.get(url, headers={"Accept": "application/json"})
    response.raise_for_status()
    return response.json()


async def _metadata(client: httpx.AsyncClient, auth: OAuthSettings) -> tuple[str, str]:
    """The metadata URL that answered and the ``jwks_uri`` it names."""
    tried: list[str] = []
    for url in metadata_urls(auth.issuer):
        try:
            document = await _json(client, url)
        except (httpx.HTTPError, ValueError) as exc:
            tried.append(f"{url} ({_why(exc)})")
            continue
        if not isinstance(document, dict):
            tried.append(f"{url} (not a JSON object)")
            continue
        named = str(document.get("issuer", ""))
        if named.rstrip("/") != auth.issuer.rstrip("/"):
            raise ProbeError(f"server.auth.issuer: the metadata at {url} names the issuer {named or '(none)'!r}")
        uri = document.get("jwks_uri")
        if not isinstance(uri, str) or not uri.startswith(("https://", "http://")):
            raise ProbeError(f"server.auth.issuer: the metadata at {url} has no jwks_uri (set server.auth.jwks_uri)")
        return url, uri
    raise ProbeError(f"server.auth.issuer: no authorization server metadata at {' nor '.join(tried)}")


async def probe_issuer(auth: OAuthSettings, client: httpx.AsyncClient | None = None) -> IssuerReport:
    """Fetch the issuer's metadata (unless ``jwks_uri`` is set) and its keys; raises :class:`ProbeError`."""
    own = client is None
    http = client if client is not None else httpx.AsyncClient(timeout=FETCH_TIMEOUT)
    try:
        metadata_url, key = None, "server.auth.jwks_uri"
        jwks_uri = auth.jwks_uri
        if jwks_uri is None:
            metadata_url, jwks_uri = await _metadata(http, auth)
            key = f"server.auth.issuer (the jwks_uri {jwks_uri} of its metadata)"
        try:
            document = await _json(http, jwks_uri)
        except (httpx.HTTPError, ValueError) as exc:
            raise ProbeError(f"{key}: the signing keys could not be fetched from {jwks_uri} ({_why(exc)})") from None
    finally:
        if own:
            await http.aclose()
    found = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(found, list):
        raise ProbeError(f'{key}: {jwks_uri} is no JWKS (no "keys" list)')
    signing = [item for item in found if isinstance(item, dict) and item.get("use", "sig") == "sig"]
    if not signing:
        raise ProbeError(f"{key}: {jwks_uri} publishes no signing key")
    keys = tuple((str(item.get("kid", "-")), str(item.get("alg", "-"))) for item in signing)
    return IssuerReport(metadata_url=metadata_url, jwks_uri=jwks_uri, keys=keys)
