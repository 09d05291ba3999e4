"""The typed settings a workflow parses into. Plain data: parsing lives beside it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from attrs import field, frozen

from lorenz.sandbox.permissions import Permissions

__all__ = [
    "DEFAULT_ACTIVE_STATES",
    "DEFAULT_HOST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_PORT",
    "DEFAULT_TERMINAL_STATES",
    "DispatchSettings",
    "IntrospectionSettings",
    "OAuthSettings",
    "ScopedToken",
    "ServerSettings",
    "Settings",
    "ToolInstance",
    "TrackerSettings",
]

DEFAULT_ACTIVE_STATES: tuple[str, ...] = ("Todo", "In Progress")
DEFAULT_TERMINAL_STATES: tuple[str, ...] = ("Closed", "Cancelled", "Canceled", "Duplicate", "Done")
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4040
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
DEFAULT_TOOL_TIMEOUT_SECONDS = 120.0
DEFAULT_MAX_RESULT_BYTES = 8 * 1024 * 1024
DEFAULT_PACK_CONCURRENCY = 16
DEFAULT_READ_TIMEOUT_SECONDS = 10.0
DEFAULT_CALL_LOG_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_CALL_LOG_KEEP = 5


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
class ScopedToken:
    """One entry of ``server.tokens``: a bearer token limited to the tools matching ``tools`` (globs)."""

    token: str = field(repr=False)
    name: str
    tools: tuple[str, ...] = ("*",)


@frozen(kw_only=True)
class IntrospectionSettings:
    """``server.auth.introspection``: where opaque tokens are checked (RFC 7662)."""

    endpoint: str
    client_id: str
    client_secret: str = field(repr=False)


@frozen(kw_only=True)
class OAuthSettings:
    """``server.auth``: the host as an OAuth 2.1 resource server for tokens ``issuer`` issues."""

    issuer: str
    #: The ``aud`` a token must carry; ``None``: the server's own URL of ``/mcp``, as requested.
    audience: str | None = None
    #: Where the issuer's signing keys are; ``None``: found through the issuer's metadata.
    jwks_uri: str | None = None
    introspection: IntrospectionSettings | None = None
    #: Each scope and the globs of the tools it grants, in the workflow's order.
    scopes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: Scopes every token must carry to reach ``/mcp`` at all.
    required_scopes: tuple[str, ...] = ()


@frozen(kw_only=True)
class CatalogSettings:
    """``server.catalog``: the budget a caller's ``tools/list`` fits (docs/catalogs.md)."""

    #: Estimated tokens of the listed tools' definitions (``lorenz tools --budget``), at most.
    budget_tokens: int | None = None
    #: Listed tools, at most.
    max_tools: int | None = None
    #: Globs of tools always listed first, whatever the budget.
    pinned: tuple[str, ...] = ()
    #: Whether a caller over budget is served the search and call tools.
    search: bool = True


@frozen(kw_only=True)
class ServerSettings:
    """How ``lorenz serve`` listens (``server:``)."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    #: ``server.mcp_port`` (1-65535) when configured.
    mcp_port: int | None = None
    #: Bearer token required on ``/mcp`` when set (``server.token`` or ``LORENZ_MCP_TOKEN``).
    token: str | None = field(default=None, repr=False)
    #: ``Origin`` values allowed besides the server's own (``http://host:port`` or ``http://host:*``).
    allowed_origins: tuple[str, ...] = ()
    #: Extra ``Host`` header values allowed besides loopback (``host:port`` or ``host:*``).
    allowed_hosts: tuple[str, ...] = ()
    #: Keep MCP sessions (``Mcp-Session-Id``) instead of a fresh transport per request.
    stateful: bool = False
    #: Answer with one JSON body per request instead of an SSE stream.
    json_response: bool = True
    #: Answer plain stateless JSON requests on the host's lean path (``False``: every request
    #: goes through the SDK's transport; ``LORENZ_FAST_PATH=0`` says the same).
    fast_path: bool = True
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    #: A tool call still running after this long gets an ``isError`` result.
    tool_timeout_seconds: float = DEFAULT_TOOL_TIMEOUT_SECONDS
    #: A tool result whose JSON exceeds this many bytes becomes an ``isError`` result.
    max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES
    #: Calls one pack may run at once; further calls wait for a slot (within the tool timeout).
    pack_concurrency: int = DEFAULT_PACK_CONCURRENCY
    #: Seconds a client has to send a request's headers, and then its body.
    read_timeout_seconds: float = DEFAULT_READ_TIMEOUT_SECONDS
    #: The JSON-lines call log: a file path, ``-`` for stderr, ``None`` for none.
    call_log: str | None = None
    call_log_max_bytes: int = DEFAULT_CALL_LOG_MAX_BYTES
    #: Rotated call-log files kept beside the current one.
    call_log_keep: int = DEFAULT_CALL_LOG_KEEP
    #: uvicorn's access log (the token is never in it).
    access_log: bool = False
    #: Globs of tool names hidden from clients; a call gets an ``isError`` result with the reason.
    disabled_tools: tuple[str, ...] = ()
    #: Bearer tokens limited to some tools, beside the all-tools ``token``.
    tokens: tuple[ScopedToken, ...] = field(default=(), repr=False)
    #: OAuth access tokens accepted beside ``token``/``tokens`` (``server.auth``).
    auth: OAuthSettings | None = None
    #: Worker processes ``lorenz serve`` runs on one port.
    workers: int = 1
    #: Packs run in supervised child processes (``"*"``: every pack not shipped with Lorenz).
    isolated_packs: tuple[str, ...] = ()
    #: Memory limit of each isolated pack's process, in MiB (``None``: no limit).
    pack_memory_mb: int | None = None
    #: Child processes per isolated pack.
    pack_processes: int = 1
    #: Packs run isolated *and* confined to their declared permissions (``"*"``: every pack not
    #: shipped with Lorenz); each is in ``isolated_packs`` too.
    sandboxed_packs: tuple[str, ...] = ()
    #: ``fail``: a sandboxed pack the kernel cannot confine does not start; ``warn``: it runs
    #: isolated but unconfined, with a warning.
    sandbox_fallback: Literal["fail", "warn"] = "fail"
    #: The secret sealing the ``requestState`` of calls that ask the client for input (2026-07-28);
    #: ``None``: a key made per process (every worker and replica needs the same one to share it).
    request_state_key: str | None = field(default=None, repr=False)
    #: ``server.catalog``: each caller's list fitted to a budget, with a search (``None``: every tool).
    catalog: CatalogSettings | None = None
    #: Call middleware, by name, outermost first (``lorenz_call_middleware``; docs/hooks.md).
    middleware: tuple[str, ...] = ()
    #: Each listed middleware's options, as written (its provider validates them).
    middleware_options: Mapping[str, Mapping[str, Any]] = field(factory=dict, repr=False)


@frozen(kw_only=True)
class ToolInstance:
    """The host keys of one ``tools:`` entry: the pack serving it and how its tools are named.

    ``rename`` maps a tool's own name to the name it is served as; ``prefix`` goes before every
    name that is not renamed.
    """

    key: str
    provider: str
    prefix: str = ""
    rename: Mapping[str, str] = field(factory=dict)

    @property
    def plain(self) -> bool:
        """Mounted as the pack itself: under its own name, its tools under theirs."""
        return self.key == self.provider and not self.prefix and not self.rename

    def served(self, name: str) -> str:
        """The name a tool called ``name`` by its pack is served as."""
        return self.rename.get(name) or f"{self.prefix}{name}"


@frozen(kw_only=True)
class Settings:
    """Everything a workflow configures that the host, trackers and packs read."""

    tracker: TrackerSettings = field(factory=TrackerSettings)
    #: The ``tools:`` map keyed by pack name; ``None`` when absent or empty.
    tool_options: Mapping[str, Mapping[str, Any]] | None = None
    #: ``{tools: key: its host keys}`` for the entries setting ``provider``, ``prefix`` or
    #: ``rename`` (removed from ``tool_options``); an entry not here is the pack of that name.
    tool_instances: Mapping[str, ToolInstance] = field(factory=dict)
    server: ServerSettings = field(factory=ServerSettings)
    #: The WORKFLOW.md these settings came from (``None`` for the embedded default).
    workflow_path: Path | None = None
    #: The directory relative paths in the workflow are resolved against.
    base_dir: Path = field(factory=Path.cwd)
    #: The Markdown body of the workflow (the prompt template).
    body: str = ""
    #: Resolved secrets, redacted from every diagnostic (see :mod:`lorenz.redact`).
    secrets: frozenset[str] = field(factory=frozenset, repr=False)
    #: One sentence per key the workflow sets that this host ignores or that is deprecated;
    #: ``WORKFLOW.md: …`` when loaded from a file. The commands print each once.
    warnings: tuple[str, ...] = ()
    #: ``{config key: NAME}`` for each whole-value ``$NAME`` reference that resolved to nothing
    #: (``tracker.api_key``, ``tracker.base_url``, ``tools.linear.api_key``), so a "required"
    #: problem with that key can name the variable.
    unset_variables: Mapping[str, str] = field(factory=dict)
    #: ``tools.<pack>.permissions``: what the operator grants a sandboxed pack beyond what it declares.
    tool_permissions: Mapping[str, Permissions] = field(factory=dict)
