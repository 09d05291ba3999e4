"""The ``server:`` section → :class:`ServerSettings`: the host's address, auth, limits and logs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from attrs import field, frozen

from ._kinds import McpPort, Port, PositiveInt, PositiveNumber
from ._structure import structure
from .auth import AuthSection, parse_auth
from .catalog import CatalogSection, parse_catalog
from .errors import ConfigError
from .model import (
    DEFAULT_CALL_LOG_KEEP,
    DEFAULT_CALL_LOG_MAX_BYTES,
    DEFAULT_HOST,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_RESULT_BYTES,
    DEFAULT_PACK_CONCURRENCY,
    DEFAULT_PORT,
    DEFAULT_READ_TIMEOUT_SECONDS,
    DEFAULT_TOOL_TIMEOUT_SECONDS,
    ScopedToken,
    ServerSettings,
)
from .secrets import SecretRecorder, resolve_configured_secret, unset_reference

__all__ = ["FAST_PATH_ENV", "MCP_TOKEN_ENV", "parse_server"]

#: Where the MCP bearer token comes from when ``server.token`` is not set.
MCP_TOKEN_ENV = "LORENZ_MCP_TOKEN"
#: ``0``/``false``/``no``/``off`` switches the lean path off, whatever ``server.fast_path`` says.
FAST_PATH_ENV = "LORENZ_FAST_PATH"
_DEFAULT_PORT = Port(DEFAULT_PORT)
_DEFAULT_MAX_BODY_BYTES = PositiveInt(DEFAULT_MAX_BODY_BYTES)
_DEFAULT_TOOL_TIMEOUT_SECONDS = PositiveNumber(DEFAULT_TOOL_TIMEOUT_SECONDS)
_DEFAULT_MAX_RESULT_BYTES = PositiveInt(DEFAULT_MAX_RESULT_BYTES)
_DEFAULT_PACK_CONCURRENCY = PositiveInt(DEFAULT_PACK_CONCURRENCY)
_DEFAULT_READ_TIMEOUT_SECONDS = PositiveNumber(DEFAULT_READ_TIMEOUT_SECONDS)
_DEFAULT_CALL_LOG_MAX_BYTES = PositiveInt(DEFAULT_CALL_LOG_MAX_BYTES)
_DEFAULT_CALL_LOG_KEEP = PositiveInt(DEFAULT_CALL_LOG_KEEP)
_ONE = PositiveInt(1)


@frozen(kw_only=True)
class _TokenEntry:
    token: str
    name: str | None = None
    tools: tuple[str, ...] = ("*",)


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
    fast_path: bool = True
    max_body_bytes: PositiveInt = _DEFAULT_MAX_BODY_BYTES
    tool_timeout_seconds: PositiveNumber = _DEFAULT_TOOL_TIMEOUT_SECONDS
    max_result_bytes: PositiveInt = _DEFAULT_MAX_RESULT_BYTES
    pack_concurrency: PositiveInt = _DEFAULT_PACK_CONCURRENCY
    read_timeout_seconds: PositiveNumber = _DEFAULT_READ_TIMEOUT_SECONDS
    call_log: str | None = None
    call_log_max_bytes: PositiveInt = _DEFAULT_CALL_LOG_MAX_BYTES
    call_log_keep: PositiveInt = _DEFAULT_CALL_LOG_KEEP
    access_log: bool = False
    disabled_tools: tuple[str, ...] = ()
    tokens: tuple[_TokenEntry, ...] = ()
    auth: AuthSection | None = None
    workers: PositiveInt = _ONE
    isolated_packs: tuple[str, ...] = ()
    pack_memory_mb: PositiveInt | None = None
    pack_processes: PositiveInt = _ONE
    sandboxed_packs: tuple[str, ...] = ()
    sandbox_fallback: Literal["fail", "warn"] = "fail"
    request_state_key: str | None = None
    middleware: tuple[str, ...] = ()
    middleware_options: dict[str, dict[str, Any]] = field(factory=dict)
    catalog: CatalogSection | None = None
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
        raise ConfigError(_empty_token("server.token", section.token, env))
    return ServerSettings(
        host=section.host.strip() or DEFAULT_HOST,
        port=section.port,
        mcp_port=section.mcp_port,
        token=token or None,
        allowed_origins=section.allowed_origins,
        allowed_hosts=section.allowed_hosts,
        stateful=section.stateful,
        json_response=section.json_response,
        fast_path=section.fast_path and not _switched_off(env.get(FAST_PATH_ENV)),
        max_body_bytes=section.max_body_bytes,
        tool_timeout_seconds=section.tool_timeout_seconds,
        max_result_bytes=section.max_result_bytes,
        pack_concurrency=section.pack_concurrency,
        read_timeout_seconds=section.read_timeout_seconds,
        call_log=section.call_log,
        call_log_max_bytes=section.call_log_max_bytes,
        call_log_keep=section.call_log_keep,
        access_log=section.access_log,
        disabled_tools=section.disabled_tools,
        tokens=_scoped_tokens(section.tokens, env, record_secret),
        auth=parse_auth(section.auth, env, record_secret),
        workers=section.workers,
        # A sandboxed pack runs in a process of its own: the sandbox is that process's.
        isolated_packs=section.isolated_packs
        + tuple(n for n in section.sandboxed_packs if n not in section.isolated_packs),
        sandboxed_packs=section.sandboxed_packs,
        sandbox_fallback=section.sandbox_fallback,
        pack_memory_mb=section.pack_memory_mb,
        pack_processes=section.pack_processes,
        request_state_key=_request_state_key(section.request_state_key, env, record_secret),
        middleware=_middleware_names(section.middleware),
        middleware_options=section.middleware_options,
        catalog=parse_catalog(section.catalog),
    )


def _middleware_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """``server.middleware``: names, each once (which ones exist is known after discovery)."""
    seen: set[str] = set()
    for index, name in enumerate(names):
        if not name.strip():
            raise ConfigError(f"server.middleware[{index}]: a middleware name must not be blank")
        if name in seen:
            raise ConfigError(f"server.middleware[{index}]: {name} is listed twice")
        seen.add(name)
    return names


#: The shortest ``server.request_state_key`` accepted (the SDK's sealing needs 32 bytes of secret).
MIN_REQUEST_STATE_KEY_BYTES = 32


def _request_state_key(configured: str | None, env: Mapping[str, str], record_secret: SecretRecorder) -> str | None:
    """``server.request_state_key``: a secret (``$VAR``, ``op://``) of at least 32 bytes, or unset."""
    if configured is None:
        return None
    key = resolve_configured_secret(configured, env, register=record_secret)
    if not key:
        raise ConfigError(_empty_token("server.request_state_key", configured, env))
    if len(key.encode("utf-8")) < MIN_REQUEST_STATE_KEY_BYTES:
        msg = (
            f"server.request_state_key must be at least {MIN_REQUEST_STATE_KEY_BYTES} bytes of secret randomness "
            '(make one with: python -c "import secrets; print(secrets.token_hex(32))")'
        )
        raise ConfigError(msg)
    return key


def _switched_off(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("0", "false", "no", "off")


def _scoped_tokens(
    entries: tuple[_TokenEntry, ...], env: Mapping[str, str], record_secret: SecretRecorder
) -> tuple[ScopedToken, ...]:
    """``server.tokens``: each token resolved like ``server.token`` (``$VAR``, ``op://``), never empty."""
    tokens: list[ScopedToken] = []
    names: set[str] = set()
    for index, entry in enumerate(entries):
        token = resolve_configured_secret(entry.token, env, register=record_secret)
        if not token or not token.strip():
            raise ConfigError(_empty_token(f"server.tokens.{index}.token", entry.token, env))
        name = (entry.name or "").strip() or f"token-{index}"
        if name in names:
            msg = f"server.tokens.{index}.name {name!r} is used by another token"
            raise ConfigError(msg)
        names.add(name)
        tokens.append(ScopedToken(token=token, name=name, tools=entry.tools))
    return tuple(tokens)


def _empty_token(label: str, configured: str, env: Mapping[str, str]) -> str:
    name = unset_reference(configured, env)
    return f"{label}: ${name} is not set" if name else f"{label} is set but resolves to an empty value"
