"""``server.auth`` → :class:`OAuthSettings`: the issuer whose access tokens ``/mcp`` accepts,
the audience they must name, and which tools each scope grants."""

from __future__ import annotations

from collections.abc import Mapping

from attrs import frozen

from .errors import ConfigError
from .model import IntrospectionSettings, OAuthSettings
from .options import check_url
from .secrets import SecretRecorder, resolve_configured_secret, unset_reference

__all__ = ["AuthSection", "parse_auth"]


@frozen(kw_only=True)
class _IntrospectionSection:
    endpoint: str
    client_id: str
    client_secret: str


@frozen(kw_only=True)
class AuthSection:
    issuer: str
    audience: str | None = None
    jwks_uri: str | None = None
    introspection: _IntrospectionSection | None = None
    scopes: dict[str, tuple[str, ...]] | None = None
    required_scopes: tuple[str, ...] = ()


def parse_auth(
    section: AuthSection | None, env: Mapping[str, str], record_secret: SecretRecorder
) -> OAuthSettings | None:
    """Check the URLs (``https``, or ``http`` on loopback only), the scope names and the secret."""
    if section is None:
        return None
    introspection = None
    if section.introspection is not None:
        raw = section.introspection
        secret = resolve_configured_secret(raw.client_secret, env, register=record_secret)
        if not secret:
            name = unset_reference(raw.client_secret, env)
            label = "server.auth.introspection.client_secret"
            raise ConfigError(f"{label}: ${name} is not set" if name else f"{label} resolves to an empty value")
        introspection = IntrospectionSettings(
            endpoint=_secure_url(raw.endpoint, "server.auth.introspection.endpoint"),
            client_id=_word(raw.client_id, "server.auth.introspection.client_id"),
            client_secret=secret,
        )
    scopes = tuple(
        (_scope(name, f"server.auth.scopes.{name}"), globs) for name, globs in (section.scopes or {}).items()
    )
    for name, globs in scopes:
        if not globs:
            raise ConfigError(f"server.auth.scopes.{name} must list at least one tool glob")
    return OAuthSettings(
        issuer=_secure_url(section.issuer, "server.auth.issuer"),
        audience=_secure_url(section.audience, "server.auth.audience") if section.audience is not None else None,
        jwks_uri=_secure_url(section.jwks_uri, "server.auth.jwks_uri") if section.jwks_uri is not None else None,
        introspection=introspection,
        scopes=scopes,
        required_scopes=tuple(
            _scope(name, f"server.auth.required_scopes.{index}") for index, name in enumerate(section.required_scopes)
        ),
    )


def _secure_url(value: str, label: str) -> str:
    """An http(s) URL; plain ``http`` only to a loopback host (tokens and keys travel over it)."""
    from urllib.parse import urlsplit

    check_url(value, label)
    parts = urlsplit(value)
    if parts.scheme != "https" and parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise ConfigError(f"{label} must be an https URL (http is accepted for loopback hosts only)")
    if parts.fragment:
        raise ConfigError(f"{label} must not have a #fragment")
    return value


def _scope(value: str, label: str) -> str:
    # RFC 6749 §3.3: a scope token is printable ASCII without spaces, quotes or backslashes.
    if not value or not all(0x21 <= ord(c) <= 0x7E and c not in '"\\' for c in value):
        raise ConfigError(f"{label} must be a scope name (printable ASCII, no spaces, quotes or backslashes)")
    return value


def _word(value: str, label: str) -> str:
    if not value.strip():
        raise ConfigError(f"{label} must not be empty")
    return value
