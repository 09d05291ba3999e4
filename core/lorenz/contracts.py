"""The contracts a plugin implements: tool packs (:class:`ToolProvider`) and trackers
(:class:`TrackerProvider`), plus the data they exchange with the host."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from attrs import field, frozen

from .issue import Issue
from .results import ToolResult
from .settings.context import ResolveSecret as ResolveSecret
from .settings.context import TrackerContext as TrackerContext
from .settings.model import Settings

if TYPE_CHECKING:
    import asyncio

    import httpx

    from .client_input import ClientInput

__all__ = [
    "Caller",
    "LogSink",
    "PackInstance",
    "PromptArgument",
    "PromptSpec",
    "ResourceSpec",
    "ProgressSink",
    "ResolveSecret",
    "send_progress",
    "serving_loop",
    "serving_on",
    "RuntimeTrackerClient",
    "ToolContext",
    "ToolProvider",
    "ToolSpec",
    "TrackerContext",
    "TrackerProvider",
]


def _strings(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@frozen(kw_only=True)
class ToolSpec:
    """One tool as an agent sees it in ``tools/list``.

    ``input_schema`` is a JSON Schema object, serialised as MCP's ``inputSchema``.
    """

    name: str
    description: str
    input_schema: Mapping[str, Any] = field(factory=lambda: {"type": "object", "properties": {}})
    title: str | None = None
    #: MCP tool annotations with their wire names (``readOnlyHint``, ``destructiveHint``, …).
    annotations: Mapping[str, Any] | None = None
    output_schema: Mapping[str, Any] | None = None
    #: OAuth scopes a caller's access token must all carry to see and call the tool (beside what
    #: ``server.auth.scopes`` grants); static tokens and unauthenticated callers are not asked.
    #: Not part of the MCP wire form.
    auth: tuple[str, ...] = field(default=(), converter=_strings)

    def to_wire(self) -> dict[str, Any]:
        """The camelCase MCP form of the tool."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "inputSchema": dict(self.input_schema),
        }
        if self.title is not None:
            out["title"] = self.title
        if self.annotations is not None:
            out["annotations"] = dict(self.annotations)
        if self.output_schema is not None:
            out["outputSchema"] = dict(self.output_schema)
        return out


@frozen(kw_only=True)
class ResourceSpec:
    """One resource a pack serves (``resources/list``), or with ``template=True`` a family of
    them (``resources/templates/list``): ``uri`` is then an RFC 6570 level-1 template such as
    ``board://issues/{issue_id}``, each ``{name}`` matching one non-empty path segment."""

    uri: str
    name: str
    description: str | None = None
    title: str | None = None
    mime_type: str | None = None
    template: bool = False

    def to_wire(self) -> dict[str, Any]:
        """The camelCase MCP form (a ``Resource``, or a ``ResourceTemplate`` with ``uriTemplate``)."""
        out: dict[str, Any] = {"uriTemplate" if self.template else "uri": self.uri, "name": self.name}
        for key, value in (("title", self.title), ("description", self.description), ("mimeType", self.mime_type)):
            if value is not None:
                out[key] = value
        return out


@frozen(kw_only=True)
class PromptArgument:
    """One argument of a prompt (its values are strings on the wire)."""

    name: str
    description: str | None = None
    required: bool = False


@frozen(kw_only=True)
class PromptSpec:
    """One prompt a pack serves (``prompts/list``)."""

    name: str
    description: str | None = None
    title: str | None = None
    arguments: tuple[PromptArgument, ...] = ()

    def to_wire(self) -> dict[str, Any]:
        """The camelCase MCP form of the prompt."""
        out: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        arguments = []
        for argument in self.arguments:
            item: dict[str, Any] = {"name": argument.name, "required": argument.required}
            if argument.description is not None:
                item["description"] = argument.description
            arguments.append(item)
        out["arguments"] = arguments
        return out


@frozen(kw_only=True)
class Caller:
    """Who is calling, as the host's OAuth check established it (``server.auth``).

    ``subject`` is the token's ``sub`` (the user, unique per ``issuer``), ``client_id`` the
    application that obtained it, ``scopes`` what it was granted. The token itself never
    reaches a pack: call upstream APIs with the pack's own credentials.
    """

    subject: str | None
    client_id: str | None
    scopes: tuple[str, ...] = ()
    issuer: str | None = None


@frozen(kw_only=True)
class ToolContext:
    """What a tool call gets besides its arguments.

    ``http`` is the host-owned :class:`httpx.AsyncClient`; make every outbound call through it
    (tests replace it with one on an ``httpx.MockTransport``). Long work reports how far it got
    with :meth:`progress`; a call the client cancels is cancelled like any task (``CancelledError``
    at the next ``await``: clean up and let it propagate).
    """

    settings: Settings
    http: httpx.AsyncClient
    #: Where :meth:`progress` goes (the host's ``notifications/progress`` sender); ``None``: nowhere.
    progress_sink: ProgressSink | None = field(default=None, repr=False)
    #: Whether a tool is callable by this caller (mounted, not switched off, allowed by its token);
    #: set by the host, ``None`` when nobody said (a pack then answers for its own tools only).
    enabled: Callable[[str], bool] | None = field(default=None, repr=False)
    #: Where :meth:`log` goes (the host's ``notifications/message`` sender, set only when the client
    #: asked for log messages); ``None``: nowhere.
    log_sink: LogSink | None = field(default=None, repr=False)
    #: The least severe MCP level (``debug`` … ``emergency``) the client asked log messages at for
    #: this call (``logging/setLevel``, or a 2026-07-28 request's log-level ``_meta``); ``None``: none.
    log_level: str | None = None
    #: How the call may ask its client for input (:mod:`lorenz.client_input`); ``None``: it
    #: cannot. Read by :mod:`lorenz.authoring`'s ``ctx.request_input``.
    client_input: ClientInput | None = field(default=None, repr=False)
    #: Who is calling when an OAuth access token was checked; ``None`` otherwise (loopback, a
    #: static ``server.token``, stdio).
    caller: Caller | None = None

    def is_enabled(self, tool: str) -> bool:
        """Whether ``tool`` is callable by this caller under this configuration (``False`` when the
        host did not say): ask before suggesting another tool to the agent."""
        return self.enabled is not None and self.enabled(tool)

    async def log(self, level: str, message: str) -> None:
        """Send a log message to the client (``notifications/message`` at an MCP level: ``debug``,
        ``info``, ``notice``, ``warning``, ``error``...) when it asked for messages at that level; a
        no-op otherwise. The host redacts it. Never raises."""
        if self.log_sink is None:
            return
        try:
            await self.log_sink(level, message)
        except Exception:
            return

    async def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the client how far the call got (``notifications/progress`` when it asked for progress
        with a ``progressToken``; a no-op otherwise). Never raises: progress is best effort."""
        await send_progress(self.progress_sink, done, total, message)


async def send_progress(sink: ProgressSink | None, done: float, total: float | None, message: str | None) -> None:
    """Send one progress report to ``sink``, if any; a client that went away never fails the tool."""
    if sink is None:
        return
    try:
        await sink(done, total, message)
    except Exception:
        return


class ProgressSink(Protocol):
    async def __call__(self, done: float, total: float | None, message: str | None, /) -> None: ...


class LogSink(Protocol):
    async def __call__(self, level: str, message: str, /) -> None: ...


@frozen(kw_only=True)
class PackInstance:
    """One mount of a pack while a configuration is served, as ``attach``/``detach``/``health`` get it.

    ``name`` is the ``tools:`` key it is served under (the pack's own name unless it is an
    instance), ``settings`` the settings as the pack sees them, and ``tools_changed()`` (safe from
    any thread) asks the host to list the pack's tools, resources and prompts again and tell its
    clients that they changed; ``resource_updated(uri)`` (also from any thread) tells the clients
    subscribed to the pack's resource ``uri`` that it changed (``notifications/resources/updated``).
    """

    name: str
    settings: Settings
    tools_changed: Callable[[], None] = field(default=lambda: None)
    resource_updated: Callable[[str], None] = field(default=lambda uri: None)


#: The loop :func:`serving_loop` names, set while a host that owns one mounts a workflow.
_serving: ContextVar[asyncio.AbstractEventLoop | None] = ContextVar("lorenz_serving_loop", default=None)


def serving_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop the host will serve this workflow's calls on, asked from a pack's hooks while
    the host mounts it (``tool_specs``, ``resource_specs``, ``prompt_specs``), when that loop is the
    host's own (``lorenz serve``, HTTP or ``--stdio``); ``None`` anywhere else (``lorenz call``, an
    app another server's loop runs, a mount outside the host).

    A pack keeping connections of its own may run them on it, so that its calls need not cross
    between threads. While ``lorenz serve`` mounts at start the loop is not running yet (a pack that
    must wait for it runs it with ``run_until_complete``); a reload mounts in a thread of its own,
    while it runs."""
    return _serving.get()


@contextlib.contextmanager
def serving_on(loop: asyncio.AbstractEventLoop | None) -> Iterator[None]:
    """Within the block, :func:`serving_loop` is ``loop`` (the host, around mounting)."""
    token = _serving.set(loop)
    try:
        yield
    finally:
        _serving.reset(token)


@runtime_checkable
class ToolProvider(Protocol):
    """A tool pack: a named bundle of tools an agent can call.

    Optional members, looked up with ``getattr``:

    * ``skills``: absolute skill directories.
    * ``validate_options(options)``: raise ``ValueError`` with a message naming the
      ``tools.<pack>.<key>`` at fault.
    * ``check_settings(settings) -> Sequence[str]``: what the pack still lacks to work with these
      settings, one sentence each naming the key (``tools.linear.api_key is required``); empty when
      it can work. For the case where every call would fail (no credentials, a tracker of another
      kind); ``lorenz check`` fails with these problems, ``lorenz serve`` does not ask. A problem
      about a key whose ``$VAR`` is unset is reworded as ``<key>: $VAR is not set``. No I/O.
    * ``resource_specs(settings) -> Sequence[ResourceSpec]`` and
      ``async read_resource(uri, context) -> ToolResult``: resources and resource templates. A
      success's ``result`` is a list of contents in wire form (``{"uri", "mimeType"?, "text"}`` or
      ``{"uri", "mimeType"?, "blob": base64}``); a failure's message goes to the client as the
      error (``reason: "invalid_arguments"`` an invalid-params error, ``"not_found"`` resource not
      found).
    * ``prompt_specs(settings) -> Sequence[PromptSpec]`` and
      ``async get_prompt(name, arguments, context) -> ToolResult``: prompts; a success's
      ``result`` is ``{"description"?, "messages": [{"role", "content": <content block>}]}``.

    * ``attach(instance: PackInstance)`` / ``detach(instance)``: a served configuration mounting the
      pack was built / is no longer served (replaced by a reload, or the host stopped); a pack
      holding processes or connections per mount starts them on attach and stops them on the
      matching detach. A new configuration is attached before the one it replaces is detached.
    * ``health(instance: PackInstance) -> str | None``: what is wrong with the mount now (an
      upstream that is down), or ``None``; shown on ``/healthz`` as a degraded pack. No I/O.
    * ``dynamic_tools: bool``: its tools are listed by a third party (an upstream server), so a
      tool it cannot serve under its name (not a valid tool name, one another pack declares, a
      ``rename`` of a tool it does not list), or a resource URI or prompt name another pack
      declares, is left out and reported, never a mount error; the packs whose tools are their
      own claim their names first.

    The host serves resources and prompts beside the pack's tools, to callers that may call at
    least one of its tools, with the tools' timeout, containment and call log.
    """

    name: str

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        """The pack's tools for these settings, in a stable order (may be empty)."""
        ...

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        """Run one tool. Return ``tool_failure(...)`` rather than raising."""
        ...


@runtime_checkable
class RuntimeTrackerClient(Protocol):
    """A live connection to a tracker. ``fetch_issues_by_states(states)`` is optional."""

    async def fetch_candidate_issues(self) -> list[Issue]:
        """Issues in the active states (filtered by assignee where supported)."""
        ...

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        """The issues with these ids or identifiers, in the requested order; missing ones omitted."""
        ...


@runtime_checkable
class TrackerProvider(Protocol):
    """An issue-tracker backend.

    Optional members, looked up with ``getattr``:

    * ``config_aliases``: ``{snake_key: camelKey}`` applied to provider options (alias wins).
    * ``env_fallbacks``: ``{"api_key": ENV, "assignee": ENV}`` consulted when unset.
    * ``default_endpoint``: used when ``endpoint`` is unset.
    * ``parse_options(options, context) -> Mapping``: validate and normalise options; raise
      ``ValueError("tracker.<key> …")``.
    * ``validate_dispatch(settings)``: raise ``ValueError`` when the tracker cannot dispatch.
    * ``default_tool_packs(settings) -> Sequence[str] | None``: packs mounted with this tracker.
    * ``project_url(settings) -> str | None``.
    """

    kind: str

    def create_client(self, settings: Settings, context: TrackerContext) -> RuntimeTrackerClient:
        """A client for these settings."""
        ...
