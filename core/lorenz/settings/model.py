"""The typed settings a workflow parses into. Plain data: parsing lives beside it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import field, frozen

__all__ = [
    "DEFAULT_ACTIVE_STATES",
    "DEFAULT_HOST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_PORT",
    "DEFAULT_TERMINAL_STATES",
    "DispatchSettings",
    "ServerSettings",
    "Settings",
    "TrackerSettings",
]

DEFAULT_ACTIVE_STATES: tuple[str, ...] = ("Todo", "In Progress")
DEFAULT_TERMINAL_STATES: tuple[str, ...] = ("Closed", "Cancelled", "Canceled", "Duplicate", "Done")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4040
DEFAULT_MAX_BODY_BYTES = 1024 * 1024


@frozen(kw_only=True)
class DispatchSettings:
    """Routing of candidate issues (``tracker.dispatch``)."""

    accept_unrouted: bool = True
    only_routes: tuple[str, ...] | None = None
    route_label_prefix: str = "Lorenz:"


@frozen(kw_only=True)
class TrackerSettings:
    """The dispatch tracker after bundle selection, aliases and secret resolution.

    ``options`` is the provider-owned bag returned by its ``parse_options`` hook.
    """

    kind: str | None = None
    endpoint: str | None = None
    api_key: str | None = field(default=None, repr=False)
    assignee: str | None = None
    active_states: tuple[str, ...] = DEFAULT_ACTIVE_STATES
    terminal_states: tuple[str, ...] = DEFAULT_TERMINAL_STATES
    dispatch: DispatchSettings = field(factory=DispatchSettings)
    options: Mapping[str, Any] = field(factory=dict, repr=False)


@frozen(kw_only=True)
class ServerSettings:
    """How ``lorenz serve`` listens (``server:``)."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    #: ``server.mcp_port`` (1-65535) when configured.
    mcp_port: int | None = None
    #: Bearer token required on ``/mcp`` when set (``server.token`` or ``LORENZ_MCP_TOKEN``).
    token: str | None = field(default=None, repr=False)
    #: Extra ``Origin`` values allowed besides loopback (``http://host:port`` or ``http://host:*``).
    allowed_origins: tuple[str, ...] = ()
    #: Extra ``Host`` header values allowed besides loopback (``host:port`` or ``host:*``).
    allowed_hosts: tuple[str, ...] = ()
    #: Keep MCP sessions (``Mcp-Session-Id``) instead of a fresh transport per request.
    stateful: bool = False
    #: Answer with one JSON body per request instead of an SSE stream.
    json_response: bool = True
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES


@frozen(kw_only=True)
class Settings:
    """Everything a workflow configures that the host, trackers and packs read."""

    tracker: TrackerSettings = field(factory=TrackerSettings)
    #: The ``tools:`` map keyed by pack name; ``None`` when absent or empty.
    tool_options: Mapping[str, Mapping[str, Any]] | None = None
    server: ServerSettings = field(factory=ServerSettings)
    #: The WORKFLOW.md these settings came from (``None`` for the embedded default).
    workflow_path: Path | None = None
    #: The directory relative paths in the workflow are resolved against.
    base_dir: Path = field(factory=Path.cwd)
    #: The Markdown body of the workflow (the prompt template).
    body: str = ""
    #: Resolved secrets, redacted from every diagnostic (see :mod:`lorenz.redact`).
    secrets: frozenset[str] = field(factory=frozenset, repr=False)
