"""The ``server:`` section → :class:`ServerSettings` (core.md §7.7 plus the MCP host's keys)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from ._structure import McpPort, Port, PositiveInt, structure
from .errors import ConfigError
from .model import DEFAULT_HOST, DEFAULT_MAX_BODY_BYTES, DEFAULT_PORT, ServerSettings
from .secrets import SecretRecorder, resolve_configured_secret

__all__ = ["MCP_TOKEN_ENV", "parse_server"]

#: Where the MCP bearer token comes from when ``server.token`` is not set.
MCP_TOKEN_ENV = "LORENZ_MCP_TOKEN"
_DEFAULT_PORT = Port(DEFAULT_PORT)
_DEFAULT_MAX_BODY_BYTES = PositiveInt(DEFAULT_MAX_BODY_BYTES)


@frozen(kw_only=True)
class _ServerSection:
    host: str = DEFAULT_HOST
    port: Port = _DEFAULT_PORT
    mcp_port: McpPort | None = None
    token: str | None = None
    allowed_origins: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    stateful: bool = False
    json_response: bool = True
    max_body_bytes: PositiveInt = _DEFAULT_MAX_BODY_BYTES
    # Accepted for compatibility with existing workflows; nothing here reads them yet.
    trace_dir: str | None = None
    issue_store_path: str | None = None
    static_dir: str | None = None


def parse_server(raw: Mapping[str, Any], *, env: Mapping[str, str], record_secret: SecretRecorder) -> ServerSettings:
    """Validate ``server:`` strictly; ``host: ""`` means loopback and the token may be ``$VAR``."""
    section = structure(raw, _ServerSection, "server")
    token = resolve_configured_secret(section.token, env, fallback_env_name=MCP_TOKEN_ENV, register=record_secret)
    if section.token is not None and not token:
        # A configured token must never silently leave the server unauthenticated.
        msg = "server.token is set but resolves to an empty value"
        raise ConfigError(msg)
    return ServerSettings(
        host=section.host.strip() or DEFAULT_HOST,
        port=section.port,
        mcp_port=section.mcp_port,
        token=token or None,
        allowed_origins=section.allowed_origins,
        allowed_hosts=section.allowed_hosts,
        stateful=section.stateful,
        json_response=section.json_response,
        max_body_bytes=section.max_body_bytes,
    )
