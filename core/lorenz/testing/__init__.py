"""Test helpers for pack authors, and the fixtures of the pytest plugin ``lorenz.testing``
(:mod:`lorenz.pytest_plugin`, which imports this module only when a test asks for a fixture).

Opt-in: the plugin only adds fixtures, nothing runs unless a test asks for one. ``lorenz_host``
(a factory of :class:`PackHost`: packs registered in-process, served by the real host) and
``fake_tracker`` (a :class:`FakeTracker` serving fixed issues) are fixtures;
:func:`assert_pack_contract` and :func:`loopback_server` (a fake API over real HTTP on
``127.0.0.1``) are functions; :mod:`.kit` adds the host's own steps (parse and validate a
workflow, open it, run one tool as the host does, lint a pack, run the CLI) and :class:`ServedWorkflow`
(``lorenz serve`` in a subprocess). ``docs/writing-a-pack.md`` shows them in use.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from attrs import frozen

from lorenz.client_input import ASK, ClientInput
from lorenz.contracts import ToolProvider, ToolSpec
from lorenz.hookspecs import hookimpl
from lorenz.host.grants import FULL
from lorenz.host.http.loopback import LoopbackServer, serve_app_in_thread
from lorenz.host.mcp.server import build_server
from lorenz.host.mcp.state import HostState
from lorenz.host.reload.live import LiveWorkspace
from lorenz.issue import Issue, IssueStateType
from lorenz.plugins.discovery import discover
from lorenz.plugins.model import Discovery
from lorenz.results import ToolResult
from lorenz.settings.model import Settings
from lorenz.workspace import Workspace

from .kit import (
    check_pack_settings,
    lint_pack,
    mounted_packs,
    mounted_skill_sources,
    open_workspace,
    parse_config,
    result_text,
    run_cli,
    run_tool,
    validate_dispatch_config,
)
from .serve import ServedWorkflow

if TYPE_CHECKING:
    import mcp
    import mcp_types


__all__ = [
    "CallOutcome",
    "FakeTracker",
    "FakeTrackerClient",
    "HostFactory",
    "PackHost",
    "ServedWorkflow",
    "assert_pack_contract",
    "check_pack_settings",
    "lint_pack",
    "loopback_server",
    "make_pack_host",
    "mounted_packs",
    "mounted_skill_sources",
    "no_network",
    "open_workspace",
    "parse_config",
    "result_text",
    "run_cli",
    "run_tool",
    "validate_dispatch_config",
]

#: pytest resolves ``-p lorenz.testing`` and ``pytest_plugins = ["lorenz.testing"]`` to the entry
#: point of that name; where no distribution declares it (a source tree on ``PYTHONPATH``), it
#: registers this module, which then brings the fixtures with it.
pytest_plugins = ["lorenz.pytest_plugin"]

FAKE_TRACKER_KIND = "lorenz-testing"


def no_network(request: httpx.Request) -> httpx.Response:
    """The default transport of a :class:`PackHost`: every outbound request fails loudly."""
    msg = (
        f"lorenz.testing: no network in tests ({request.method} {request.url}); "
        "pass transport=httpx.MockTransport(handler) to lorenz_host(...)"
    )
    raise httpx.ConnectError(msg, request=request)


# -- a fake tracker -----------------------------------------------------------------------------


@frozen(kw_only=True)
class FakeTrackerClient:
    """Serves the tracker's issues: candidates are those in an active state."""

    issues: Sequence[Issue]
    active_states: Sequence[str]

    async def fetch_candidate_issues(self) -> list[Issue]:
        active = {state.casefold() for state in self.active_states}
        return [issue for issue in self.issues if (issue.state or "").casefold() in active]

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        by_key = {key: issue for issue in self.issues for key in (issue.id, issue.identifier)}
        return [by_key[key] for key in ids if key in by_key]

    async def fetch_issues_by_states(self, states: Sequence[str]) -> list[Issue]:
        wanted = {state.casefold() for state in states}
        return [issue for issue in self.issues if (issue.state or "").casefold() in wanted]


class FakeTracker:
    """A ``TrackerProvider`` for tests: no I/O; ``issues`` is a list you fill; ``packs`` are the
    packs it mounts by default (``lorenz_host`` sets them)."""

    def __init__(self, *, kind: str = FAKE_TRACKER_KIND, issues: Sequence[Issue] = (), packs: Sequence[str] = ()):
        self.kind = kind
        self.issues: list[Issue] = list(issues)
        self.packs: list[str] = list(packs)

    def create_client(self, settings: Settings, context: Any) -> FakeTrackerClient:
        return FakeTrackerClient(issues=tuple(self.issues), active_states=settings.tracker.active_states)

    def default_tool_packs(self, settings: Settings) -> list[str]:
        return list(self.packs)

    def add_issue(
        self,
        identifier: str,
        title: str,
        *,
        state: str = "Todo",
        state_type: IssueStateType = "unstarted",
        **fields: Any,
    ) -> Issue:
        """Add an issue (``id`` defaults to ``identifier``) and return it."""
        issue = Issue(
            id=str(fields.pop("id", identifier)),
            identifier=identifier,
            title=title,
            state=state,
            state_type=state_type,
            **fields,
        )
        self.issues.append(issue)
        return issue


# -- the host ---------------------------------------------------------------------------------------


@frozen(kw_only=True)
class CallOutcome:
    """One call seen from both sides: the pack's exact ``ToolResult`` and the MCP ``CallToolResult``
    a client receives for the same arguments."""

    result: ToolResult
    mcp: mcp_types.CallToolResult


class _InProcessPlugin:
    """Registers the given packs and trackers, like an installed plugin would."""

    def __init__(self, packs: Sequence[ToolProvider], trackers: Sequence[Any]) -> None:
        self.__name__ = "lorenz-testing"
        self._packs = list(packs)
        self._trackers = list(trackers)

    @hookimpl
    def lorenz_register_tool_packs(self, register: Callable[[ToolProvider], None]) -> None:
        for pack in self._packs:
            register(pack)

    @hookimpl
    def lorenz_register_trackers(self, register: Callable[[Any], None]) -> None:
        for tracker in self._trackers:
            register(tracker)


class PackHost:
    """A workspace mounting the packs under test, plus the real MCP host over it, in-process."""

    def __init__(self, workspace: Workspace, *, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.workspace = workspace
        #: ``(done, total, message)`` of every progress report the tools made through :meth:`call`.
        self.progress: list[tuple[float, float | None, str | None]] = []
        #: ``{name: {"method", "params"}}`` of every request the tools put to the client through :meth:`call`.
        self.asked: list[dict[str, Any]] = []
        self.transport = transport if transport is not None else httpx.MockTransport(no_network)

    @property
    def settings(self) -> Settings:
        return self.workspace.settings

    @property
    def discovery(self) -> Discovery:
        return self.workspace.discovery

    def tool_specs(self) -> list[ToolSpec]:
        return self.workspace.tool_specs()

    def tool_names(self) -> list[str]:
        return [spec.name for spec in self.workspace.tool_specs()]

    def _http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=self.transport, timeout=10.0)

    async def call(self, name: str, arguments: Any = None, *, answers: Mapping[str, Any] | None = None) -> ToolResult:
        """The exact ``ToolResult`` of one call, routed like the host routes it (never raises). What
        the tool reported with ``context.progress`` is appended to :attr:`progress`.

        ``answers`` plays the client for a tool that asks for input: ``{"confirm": {"action": "accept",
        "content": {"confirm": True}}}`` (MCP result shapes, by request name; a name left out is
        cancelled). Each round asked is appended to :attr:`asked`. Without it the tool cannot ask."""

        async def record(done: float, total: float | None, message: str | None) -> None:
            self.progress.append((done, total, message))

        async def ask(requests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
            self.asked.append({key: dict(value) for key, value in requests.items()})
            given = answers or {}
            return {key: given[key] for key in requests if key in given}

        client = ClientInput(mode=ASK, ask=ask) if answers is not None else None
        async with self._http() as http:
            arguments = {} if arguments is None else arguments
            return await self.workspace.call(name, arguments, http, progress=record, client_input=client)

    def server(self) -> mcp.server.Server[Any]:
        """The host's MCP server (the SDK's low-level ``Server``) over this workspace."""
        state = HostState(LiveWorkspace(self.workspace, reload=False), local_grant=FULL)
        state.http = self._http()
        server = build_server(state)
        server._lorenz_state = state  # type: ignore[attr-defined]  # closed by mcp_client()
        return server

    @contextlib.asynccontextmanager
    async def mcp_client(self) -> AsyncIterator[mcp.Client]:
        """An MCP client session connected in-process to the real host (``mcp.Client(server)``)."""
        import mcp  # the host on use: pytest imports this

        server = self.server()
        try:
            async with mcp.Client(server) as client:
                yield client
        finally:
            await server._lorenz_state.aclose()  # type: ignore[attr-defined]

    async def list_tools(self) -> list[mcp_types.Tool]:
        """``tools/list`` as an MCP client sees it."""
        async with self.mcp_client() as client:
            return list((await client.list_tools()).tools)

    async def call_mcp(self, name: str, arguments: Mapping[str, Any] | None = None) -> mcp_types.CallToolResult:
        """``tools/call`` as an MCP client sees it."""
        async with self.mcp_client() as client:
            return await client.call_tool(name, dict(arguments or {}))

    async def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> CallOutcome:
        """The same call twice: in-process (the ``ToolResult``) and over MCP (the ``CallToolResult``)."""
        result = await self.call(name, dict(arguments or {}))
        return CallOutcome(result=result, mcp=await self.call_mcp(name, arguments))


def make_pack_host(
    *packs: ToolProvider,
    plugins: Sequence[object] = (),
    options: Mapping[str, Mapping[str, Any]] | None = None,
    tracker: Any = None,
    config: Mapping[str, Any] | None = None,
    base_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> PackHost:
    """A :class:`PackHost` for ``packs`` (and the packs of plugin modules in ``plugins``).

    Installed plugins are not loaded. ``options`` are the workflow's ``tools:`` map
    (``{"weather": {"allow_writes": True}}``); ``tracker`` (default: a :class:`FakeTracker`)
    is the dispatch tracker. ``config`` replaces the generated workflow front matter entirely.
    """
    if tracker is None:
        tracker = FakeTracker()
    trackers = [tracker] if isinstance(tracker, FakeTracker) or not _registered_by(plugins, tracker) else []
    discovery = discover(plugins=[*plugins, _InProcessPlugin(packs, trackers)], entry_points_enabled=False)
    if discovery.failures:
        problems = "; ".join(f"{failure.name}: {failure.error}" for failure in discovery.failures)
        msg = f"plugin registration failed: {problems}"
        raise RuntimeError(msg)
    pack_names = [name for info in discovery.plugins for name in info.packs]
    if isinstance(tracker, FakeTracker) and not tracker.packs:
        tracker.packs = list(pack_names)
    if config is None:
        tools = {name: dict((options or {}).get(name, {})) for name in pack_names}
        for name, values in (options or {}).items():
            tools.setdefault(name, dict(values))
        config = {"tracker": {"kind": tracker.kind}, "tools": tools}
    base = base_dir if base_dir is not None else Path.cwd()
    settings = parse_config(config, env=dict(env or {}), trackers=discovery.trackers, base_dir=base)
    validate_dispatch_config(settings, discovery.trackers, discovery.tools)
    workspace = Workspace(settings=settings, discovery=discovery)
    workspace.tool_specs()  # a collision or an unknown pack fails here
    return PackHost(workspace, transport=transport)


def _registered_by(plugins: Sequence[object], tracker: Any) -> bool:
    probe = discover(plugins=plugins, entry_points_enabled=False)
    return probe.trackers.get(getattr(tracker, "kind", "")) is tracker


def assert_pack_contract(pack: ToolProvider, settings: Settings | None = None, *, strict: bool = False) -> None:
    """Fail the test when ``pack`` breaks the pack contract.

    Checks tool names (valid, unique, ``<pack>_`` prefix), descriptions, input/output schemas
    (valid JSON Schema, object roots), error contracts, ``ctx.fail`` reasons and format parity
    of typed tools, and that an unknown tool or arguments the schema refuses come back as
    failure results rather than exceptions. ``strict`` also fails on warnings.
    """
    diagnostics = lint_pack(pack, settings)
    bad = [d for d in diagnostics if d.severity == "error" or strict]
    if bad:
        lines = "\n".join(f"  {d}" for d in bad)
        pytest.fail(f"pack {getattr(pack, 'name', '?')!r} breaks the contract:\n{lines}", pytrace=False)


def loopback_server(app: Any, *, start_timeout: float = 10.0) -> contextlib.AbstractContextManager[LoopbackServer]:
    """Serve the ASGI ``app`` with uvicorn on ``127.0.0.1:<free port>`` in a daemon thread while the
    ``with`` block runs; yields an object with ``.port`` and ``.base_url`` (``http://127.0.0.1:<port>``).

    Raises ``RuntimeError`` when the server does not start within ``start_timeout`` seconds.
    Share one server per session with a fixture and reset the fake's state per test.
    """
    return serve_app_in_thread(app, start_timeout=start_timeout, name="lorenz-testing-loopback")


#: The type of the ``lorenz_host`` fixture, for annotating tests.
HostFactory = Callable[..., PackHost]
