"""The MCP protocol side: the SDK's low-level ``Server`` over a :class:`LiveWorkspace`.

The SDK owns JSON-RPC, both protocol eras and the transports; this module only answers
``tools/list`` and ``tools/call`` (:mod:`lorenz.toolcall.call` runs the call, as for every caller).
Every failure (bad arguments, an unknown tool, a pack that raised) is an ``isError`` result,
never a JSON-RPC error, so every client hands it to the model.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import mcp_types as types
import pydantic
import pydantic_core
from mcp.server import Server, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions
from mcp.server.models import InitializationOptions
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from lorenz._version import __version__
from lorenz.contracts import ToolContext, ToolSpec
from lorenz.host.grants import origin_of
from lorenz.host.reload.live import request_snapshot
from lorenz.results import tool_failure
from lorenz.toolcall.call import call_tool as run_tool
from lorenz.toolcall.enabled import EnabledTools
from lorenz.toolcall.execution import CallOutcome, ClientGone
from lorenz.toolcall.replies import ToolReply, call_result

from .asking import SealedRequestState, client_capabilities, client_input_for, refused_requests
from .client_log import session_key
from .instructions import instructions_for
from .offers import offer_handlers
from .shaping import CatalogFailed, shaped, shaped_tools, shaped_wire
from .skills import skill_handlers
from .state import HostState

if TYPE_CHECKING:
    from lorenz.host.reload.live import Snapshot

__all__ = ["LorenzServer", "build_server"]

logger = logging.getLogger("lorenz.host")

SERVER_NAME = "lorenz"


class LorenzServer(Server[Any]):
    """The SDK server, advertising ``listChanged`` (tools, resources, prompts) when reloads are
    pushed to sessions."""

    def __init__(self, state: HostState, **kwargs: Any) -> None:
        self._state = state
        self._stamp_json: bytes | None = None
        super().__init__(SERVER_NAME, **kwargs)
        self._list_changed = state.list_changed

    @property
    def server_info_stamp(self) -> dict[str, Any]:
        """The SDK's fresh ``serverInfo`` dump for each 2026-era result, parsed from its JSON
        made once (``copy.deepcopy`` of the dump cost more than the rest of the stamp)."""
        if self._stamp_json is None:
            self._stamp_json = pydantic_core.to_json(super().server_info_stamp)
        stamp: dict[str, Any] = pydantic_core.from_json(self._stamp_json)
        return stamp

    @property
    def instructions(self) -> str:
        """The current workflow's body, read when a client initializes (or discovers): it follows
        hot reload."""
        return instructions_for(self._state.live.snapshot())

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        """Ignored: the SDK's constructor sets a fixed value; ours comes from the workflow."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        if notification_options is None:
            changed = self._list_changed
            notification_options = NotificationOptions(
                tools_changed=changed, resources_changed=changed, prompts_changed=changed
            )
        return super().create_initialization_options(notification_options, experimental_capabilities, extensions)


def wire_tools(snapshot: Snapshot) -> list[types.Tool]:
    """The snapshot's tools as SDK models, built once per snapshot."""
    tools: list[types.Tool] | None = snapshot.wire.get("tools")
    if tools is None:
        tools = [types.Tool.model_validate(spec.to_wire()) for spec in snapshot.specs]
        for spec in snapshot.specs:
            for problem in portability_problems(spec):
                logger.warning("lorenz: tool %s (pack %s): %s", spec.name, snapshot.pack_of(spec.name), problem)
        snapshot.wire["tools"] = tools
    return tools


_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def portability_problems(spec: ToolSpec) -> list[str]:
    """What some MCP clients reject in a tool definition (served anyway, but worth a warning)."""
    problems = []
    if not _TOOL_NAME.match(spec.name):
        problems.append("the name should match ^[A-Za-z0-9_.-]{1,128}$")
    if not spec.description.strip():
        problems.append("no description (some clients and the conformance suite reject it)")
    if spec.input_schema.get("type") != "object":
        problems.append('inputSchema should have "type": "object" at the root')
    if spec.output_schema is not None and spec.output_schema.get("type") != "object":
        problems.append('outputSchema should have "type": "object" at the root before protocol 2026-07-28')
    return problems


async def call_tool(
    state: HostState, snapshot: Snapshot, name: str, arguments: Any, ctx: ServerRequestContext[Any, Any] | None = None
) -> ToolReply:
    """Run one tool call for the request of ``ctx`` (:func:`lorenz.toolcall.call.call_tool`), within
    what its grant allows, and record it; never raises."""
    started = time.perf_counter()
    name = name.strip()

    def after_client_left(outcome: CallOutcome) -> None:
        reply = call_result(outcome.result)
        state.recorder.record(snapshot, name, arguments, reply, outcome.kind, started, ctx, client_gone=True)

    left = ClientGone(after_client_left)
    grant = state.grant(ctx)
    allows: Callable[[str], bool] | None = None if grant.everything else grant.allows
    if shaped(snapshot):
        try:  # what the catalog shapers show this caller is all it may call
            allows = frozenset(spec.name for spec in await shaped_tools(snapshot, grant, ctx)).__contains__
        except CatalogFailed as failed:
            refused = call_result(failed.failure())
            state.recorder.record(snapshot, name, arguments, refused, "rejected", started, ctx)
            return refused

    def context() -> ToolContext:
        session = ctx.session if ctx is not None else None
        return ToolContext(
            settings=snapshot.settings,
            http=state.client(),
            progress_sink=session.report_progress if session is not None else None,
            # Mounted and not switched off: what the caller's token may call of it.
            enabled=EnabledTools(snapshot.owners, allows),
            log_sink=state.log_levels.sink(ctx, snapshot.settings, name),
            log_level=state.log_levels.wanted(ctx) if ctx is not None else None,
            client_input=client_input_for(ctx),
            caller=grant.caller,
        )

    try:
        answer = await run_tool(
            snapshot.tools,
            name,
            arguments,
            context,
            state.runner,
            visible=allows,
            when_left=left,
            check_requests=lambda requests: refused_requests(requests, client_capabilities(ctx)),
            origin=origin_of(grant, ctx) if snapshot.tools.middleware else None,
        )
    except BaseException:  # cancelled by the client (or the host stopping): the pack's task was cancelled too
        if not left.following:  # the runner records it once the pack's work has ended
            cancelled = call_result(tool_failure(f"tool {name} was cancelled"))
            state.recorder.record(snapshot, name, arguments, cancelled, "cancelled", started, ctx, client_gone=True)
        raise
    state.recorder.record(snapshot, name, arguments, answer.reply, answer.kind, started, ctx)
    state.catalog.count(grant, name, snapshot)
    return answer.reply


async def visible_tools(state: HostState, snapshot: Snapshot, ctx: ServerRequestContext[Any, Any]) -> list[types.Tool]:
    """The tools the caller of ``ctx`` may see and call: within its grant, as the workflow's catalog
    shapers show them (none when one failed), before a ``server.catalog`` budget."""
    tools = wire_tools(snapshot)
    grant = state.grant(ctx)
    if shaped(snapshot):
        return await shaped_wire(snapshot, grant, ctx, tools)
    return tools if grant.everything else [tool for tool in tools if grant.allows(tool.name)]


async def catalog_call(
    state: HostState, snapshot: Snapshot, name: str, arguments: Any, ctx: ServerRequestContext[Any, Any]
) -> ToolReply:
    """A call of ``server.catalog``'s search or call tool: the call tool runs the tool it names
    through :func:`call_tool` (recorded under that tool's name); a search is recorded as itself."""
    started = time.perf_counter()

    async def call(target: str, given: Any) -> ToolReply:
        return await call_tool(state, snapshot, target, given, ctx)

    # A search shows what it found in a session's list where the client hears of list changes.
    key = session_key(ctx) if state.list_changed and ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS else None
    visible = await visible_tools(state, snapshot, ctx)
    reply = await state.catalog.answer(snapshot, name, arguments, visible, call, ctx.session, key)
    if name != "lorenz_call_tool":
        outcome = "failure" if reply.is_error else "success"
        state.recorder.record(snapshot, name, arguments, reply, outcome, started, ctx)
    return reply


class ToolCallParams(pydantic.BaseModel):
    """What the ``tools/call`` handler reads of its params. The SDK validated the request against
    the protocol's ``CallToolRequest`` of its version before the handler; the handler's ``_meta``
    is the context's (so not parsed a third time here)."""

    model_config = pydantic.ConfigDict(extra="ignore")

    name: str
    arguments: dict[str, Any] | None = None


def build_server(state: HostState) -> LorenzServer:
    """The SDK server answering from ``state.live``'s current snapshot."""

    async def on_list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        state.remember(ctx)
        snapshot = request_snapshot(ctx.request) or await state.live.current_async()
        tools = await visible_tools(state, snapshot, ctx)
        if snapshot.settings.server.catalog is not None:
            await state.catalog.learn_once(state.recorder.log_path(snapshot))
            tools = state.catalog.listed(snapshot, tools, state.grant(ctx), session_key(ctx))
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: ServerRequestContext[Any, Any], params: ToolCallParams) -> dict[str, Any]:
        state.remember(ctx)
        arguments = params.arguments if params.arguments is not None else {}
        snapshot = request_snapshot(ctx.request) or await state.live.current_async()
        if state.catalog.serves(snapshot, params.name):
            return (await catalog_call(state, snapshot, params.name, arguments, ctx)).wire()
        return (await call_tool(state, snapshot, params.name, arguments, ctx)).wire()

    def input_schema(name: str) -> Mapping[str, Any] | None:
        # Synchronous (the SDK's hook): the request already passed SecurityMiddleware, which
        # brought the snapshot up to date without blocking the event loop.
        spec = state.live.snapshot().by_name.get(name)
        return spec.input_schema if spec is not None else None

    state.live.prepare = wire_tools
    wire_tools(state.live.snapshot())  # a spec the SDK cannot represent fails here, at startup
    server = LorenzServer(
        state,
        version=__version__,
        title="Lorenz",
        on_list_tools=on_list_tools,
        get_tool_input_schema=input_schema,
        on_subscriptions_listen=state.subscriptions.listen(state.listen) if state.listen is not None else None,
        **offer_handlers(state, skill_handlers(state.live, state.grant)),
    )
    # Registered as a plain request handler: its result is the wire dict, which the SDK validates
    # against the request's version as it would the model (and dumping the model first cost more).
    server.add_request_handler("tools/call", ToolCallParams, on_call_tool)
    # Seals the state of a call that needs the client's input, and refuses state it did not mint.
    # The key is read for each call: a reload that sets server.request_state_key applies at once.
    server.middleware.append(
        SealedRequestState(
            lambda: state.live.snapshot().settings.server.request_state_key,
            audience=SERVER_NAME,
            principal=lambda ctx: state.grant(ctx).name,
            single_use=lambda ctx: not _idempotent(state.live.snapshot(), ctx),
        )
    )
    # Registered here, not as the constructor's (deprecated) hook: it advertises `logging`, and a
    # handshake-era client opts in to ctx.log messages with it.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, state.log_levels.on_set_level)
    if state.list_changed:  # handshake-era subscribers are sessions: only kept where they are
        subscriptions = state.subscriptions
        server.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscriptions.on_subscribe)
        server.add_request_handler(
            "resources/unsubscribe", types.UnsubscribeRequestParams, subscriptions.on_unsubscribe
        )
    return server


def _idempotent(snapshot: Snapshot, ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether the tool ``ctx`` calls is marked idempotent (or read-only): calling it twice with
    the same answers does no more than once."""
    spec = snapshot.by_name.get(str((ctx.params or {}).get("name")))
    hints = (spec.annotations if spec is not None else None) or {}
    return hints.get("idempotentHint") is True or hints.get("readOnlyHint") is True
