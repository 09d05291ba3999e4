"""When ``lorenz serve`` refuses to listen over HTTP: beyond loopback without a bearer token or
(with ``server.auth``) an audience, or a stateful server with several workers. Light to import, so
``lorenz check`` says so too."""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lorenz.settings.model import ServerSettings

__all__ = ["NO_AUDIENCE", "audience_warning", "http_refusal", "is_loopback"]

#: Why ``server.auth`` cannot be served beyond loopback without ``server.auth.audience``.
NO_AUDIENCE = (
    "server.auth.audience is not set: beyond loopback, Lorenz cannot know the URL clients reach /mcp at, "
    "and an access token must name it to be accepted here and by no other server; set server.auth.audience "
    "to that public URL (https://mcp.example.com/mcp)"
)


def is_loopback(host: str) -> bool:
    """Whether a bind address only reaches this machine."""
    try:
        return host == "localhost" or ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def http_refusal(settings: ServerSettings, *, host: str, workers: int, allow_no_token: bool) -> str | None:
    """Why ``lorenz serve`` must not start over HTTP with these settings, or ``None``."""
    if settings.stateful and workers > 1:
        return (
            f"server.stateful: true cannot run {workers} worker processes: an MCP session (Mcp-Session-Id) lives "
            "in the memory of the process that created it, and the other workers would answer it with 404. "
            "Run one worker (--workers 1, server.workers: 1); to scale a stateful server, run several replicas of "
            "one worker each behind a load balancer with session affinity on the Mcp-Session-Id header "
            "(docs/deploy.md), or serve stateless (the default), which any number of workers can"
        )
    if not is_loopback(host) and not (settings.token or settings.tokens or settings.auth) and not allow_no_token:
        return (
            f"refusing to listen on {host}, beyond this machine, without an access token for clients: "
            "set LORENZ_MCP_TOKEN (or server.token), and list the names clients use in server.allowed_hosts; "
            "--allow-no-token serves without one (behind a proxy that authenticates)"
        )
    if settings.auth is not None and settings.auth.audience is None and not is_loopback(host):
        return f"refusing to listen on {host} with server.auth: {NO_AUDIENCE}"
    return None


def audience_warning(settings: ServerSettings) -> str | None:
    """``server.auth`` on loopback without an audience, yet other names allowed: a proxy in front,
    whose clients get tokens for its public URL, which this server does not accept."""
    if settings.auth is None or settings.auth.audience is not None or not settings.allowed_hosts:
        return None
    return (
        f"server.auth.audience is not set, so access tokens must name this server's loopback URL of /mcp, not one "
        f"at {', '.join(settings.allowed_hosts)} (server.allowed_hosts): behind a proxy, set server.auth.audience "
        "to the public URL of /mcp"
    )
