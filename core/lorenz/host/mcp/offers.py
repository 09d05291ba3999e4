"""The mounted packs' own resources, resource templates and prompts over MCP, beside their skills.

A caller sees those of the packs it may call at least one tool of (a scoped token's globs, matched
against every tool the pack declares, switched off or not; with catalog shapers, of the tools they
show it); for it the others do not exist. A read, a render or a completion runs like a tool call:
through the workflow's call middleware, in one of the pack's call slots, contained, within
``server.tool_timeout_seconds``, measured against ``server.max_result_bytes``, and recorded in the
call log (``kind`` ``resource``, ``prompt`` or ``completion``, the URI template rather than the URI).
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
import pydantic
from attrs import evolve
from mcp.shared.exceptions import MCPError

from lorenz.contracts import PromptSpec, ResourceSpec, ToolContext, ToolProvider
from lorenz.host.grants import origin_of
from lorenz.host.reload.live import request_snapshot
from lorenz.middleware import Call
from lorenz.mounting.instances import provider_of
from lorenz.redact import redact_text
from lorenz.results import ToolResult, error_message
from lorenz.toolcall.execution import CallOutcome
from lorenz.toolcall.middleware import run_chain
from lorenz.toolcall.replies import ToolReply

from .shaping import offer_packs
from .skills import RESOURCE_NOT_FOUND

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

    from lorenz.host.reload.live import Snapshot
    from lorenz.mounting.offers import Offered

    from .state import HostState

__all__ = ["offer_handlers"]

Handler = Callable[..., Awaitable[Any]]


def _offers(snapshot: Snapshot) -> Offered:
    offers: Offered = snapshot.workspace.mounted.offers
    return offers


class _Offering:
    """One read or render, run by the host's :class:`~lorenz.toolcall.execution.ToolRunner` as a
    call of its pack (the pack's slots, timeout and containment)."""

    def __init__(self, pack: ToolProvider, run: Callable[[Any, ToolContext], Awaitable[ToolResult]]) -> None:
        self.name = pack.name
        self._run = run

    def tool_specs(self, settings: Any) -> list[Any]:
        return []

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        return await self._run(input, context)


def _code(result: ToolResult, missing: int) -> int:
    error = result.result.get("error") if isinstance(result.result, dict) else None
    reason = error.get("reason") if isinstance(error, dict) else None
    if reason == "invalid_arguments":
        return types.INVALID_PARAMS
    return missing if reason == "not_found" else types.INTERNAL_ERROR


async def _run(
    state: HostState,
    snapshot: Snapshot,
    ctx: ServerRequestContext[Any, Any],
    pack: ToolProvider,
    label: str,
    target: tuple[str, str],
    arguments: Any,
    run: Callable[[Any, ToolContext], Awaitable[ToolResult]],
    shape: Callable[[Any], Any],
    missing: int,
) -> Any:
    """Run one read or render (through the workflow's call middleware, as ``target``: its method
    and the URI or prompt name) and record it; its answer, or an ``MCPError`` with a redacted
    message."""
    kind = {"resources/read": "resource", "prompts/get": "prompt"}.get(target[0], "completion")
    settings = snapshot.settings
    server = settings.server
    started = time.perf_counter()
    context = ToolContext(
        settings=settings,
        http=state.client(),
        log_sink=state.log_levels.sink(ctx, settings, label),
        log_level=state.log_levels.wanted(ctx),
    )
    answer: Any = None
    error: MCPError | None = None

    async def execute(passed: Any) -> CallOutcome:
        return await state.runner.run(
            _Offering(pack, run),
            label,
            passed,
            context,
            time_limit=server.tool_timeout_seconds,
            concurrency=server.pack_concurrency,
        )

    try:
        if snapshot.tools.middleware:
            call = evolve(origin_of(state.grant(ctx), ctx).call(target[1], pack.name, arguments), method=target[0])
            outcome = await _chained(snapshot, call, execute)
        else:
            outcome = await execute(arguments)
        result, outcome_kind = outcome.result, outcome.kind
        if outcome_kind == "timeout":
            message = f"{label} did not finish within {server.tool_timeout_seconds:g} s (server.tool_timeout_seconds)"
            error = MCPError(types.INTERNAL_ERROR, message)
        elif not result.success:
            text = redact_text(result.error or "failed", settings.secrets, base_dir=settings.base_dir)
            error = MCPError(_code(result, missing), text, _refusal(result) if outcome_kind == "rejected" else None)
        elif len(json.dumps(result.result, default=str).encode("utf-8")) > server.max_result_bytes:
            outcome_kind = "rejected"
            message = f"{label}: the result is more than {server.max_result_bytes:,} bytes (server.max_result_bytes)"
            error = MCPError(types.INTERNAL_ERROR, message)
        else:
            try:
                answer = shape(result.result)
            except (pydantic.ValidationError, TypeError, ValueError) as exc:
                outcome_kind = "crash"
                error = MCPError(types.INTERNAL_ERROR, f"{label} returned an invalid result: {error_message(exc)}")
    except BaseException:
        state.recorder.record(
            snapshot, label, arguments, _reply("cancelled"), "cancelled", started, ctx, kind=kind, **_owner(pack)
        )
        raise
    reply = _reply(error.error.message if error is not None else None)
    state.recorder.record(snapshot, label, arguments, reply, outcome_kind, started, ctx, kind=kind, **_owner(pack))
    if error is not None:
        raise error
    return answer


async def _chained(snapshot: Snapshot, call: Call, execute: Callable[[Any], Awaitable[CallOutcome]]) -> CallOutcome:
    """The read or render through the workflow's call middleware, whose innermost step is
    ``execute``: the pack's outcome when the result is its, else ``rejected`` (a middleware
    answered without calling on) or ``failure`` (it changed what the pack answered)."""
    outcomes: list[CallOutcome] = []

    async def terminal(passed: Call) -> ToolResult:
        outcome = await execute(passed.arguments if passed is call else dict(passed.arguments))
        outcomes.append(outcome)
        return outcome.result

    settings = snapshot.settings
    budget = settings.server.tool_timeout_seconds
    result = await run_chain(snapshot.tools.middleware, call, terminal, budget=budget, secrets=settings.secrets)
    if outcomes and outcomes[-1].result is result:
        return outcomes[-1]
    return CallOutcome(result, "success" if result.success else "failure" if outcomes else "rejected")


def _refusal(result: ToolResult) -> dict[str, Any] | None:
    """What a middleware's refusal says beside its message (``reason``, ``retryAfter``, ``recovery``),
    as the JSON-RPC error's ``data``."""
    error = result.result.get("error") if isinstance(result.result, dict) else None
    if not isinstance(error, dict):
        return None
    return {key: error[key] for key in ("reason", "recovery", "retryable", "retryAfter") if key in error} or None


def _owner(pack: ToolProvider) -> dict[str, Any]:
    """The call log's ``pack`` (the pack's own name) and ``instance`` (its ``tools:`` key, if another)."""
    own = provider_of(pack)
    return {"pack": own, "instance": pack.name if pack.name != own else None}


def _reply(error: str | None) -> ToolReply:
    if error is None:
        return ToolReply(text="", structured_content=None, is_error=False)
    return ToolReply(text=error, structured_content={"error": {"message": error}}, is_error=True)


def _read_result(payload: Any) -> types.ReadResourceResult:
    if not isinstance(payload, list) or not payload:
        raise TypeError("a resource's result must be a non-empty list of contents")
    return types.ReadResourceResult.model_validate({"contents": payload})


def _prompt_result(payload: Any) -> types.GetPromptResult:
    return types.GetPromptResult.model_validate(payload)


#: The most values one completion answer carries (the protocol's own bound).
MAX_COMPLETIONS = 100


def _complete_result(payload: Any) -> types.CompleteResult:
    if not isinstance(payload, dict):
        raise TypeError('a completion\'s result must be {"values": [...], "total"?, "hasMore"?}')
    completion = types.Completion.model_validate(payload)
    if len(completion.values) > MAX_COMPLETIONS:  # the values beyond are said to exist, not sent
        total = completion.total if completion.total is not None else len(completion.values)
        completion = types.Completion(values=completion.values[:MAX_COMPLETIONS], total=total, has_more=True)
    return types.CompleteResult(completion=completion)


def offer_handlers(state: HostState, skills: dict[str, Handler]) -> dict[str, Handler]:
    """The SDK ``Server``'s resource, prompt and completion handlers: the packs' own, then ``skills``'."""

    async def current(ctx: ServerRequestContext[Any, Any]) -> tuple[Snapshot, Offered, set[str] | None]:
        snapshot = request_snapshot(ctx.request) or await state.live.current_async()
        return snapshot, _offers(snapshot), await offer_packs(snapshot, state.grant(ctx), ctx)

    def seen(pack: ToolProvider, visible: set[str] | None) -> bool:
        return visible is None or pack.name in visible

    async def on_list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        _, offers, visible = await current(ctx)
        own = [_wire(types.Resource, spec) for spec, pack in offers.resources if seen(pack, visible)]
        listed: types.ListResourcesResult = await skills["on_list_resources"](ctx, params)
        return types.ListResourcesResult(resources=[*own, *listed.resources])

    async def on_list_resource_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        _, offers, visible = await current(ctx)
        templates = [_wire(types.ResourceTemplate, spec) for spec, pack, _ in offers.templates if seen(pack, visible)]
        return types.ListResourceTemplatesResult(resource_templates=templates)

    async def on_read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        snapshot, offers, visible = await current(ctx)
        uri = str(params.uri)
        found = offers.resource(uri)
        if found is None or not seen(found[1], visible):
            result: types.ReadResourceResult = await skills["on_read_resource"](ctx, params)
            return result
        spec, pack = found
        read = getattr(pack, "read_resource", None)
        if not callable(read):
            raise MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")

        async def run(arguments: Any, context: ToolContext) -> ToolResult:
            result: ToolResult = await read(uri, context)  # a middleware may not read another resource
            return result

        label = f"resources/read {spec.uri}"
        target = ("resources/read", uri)
        answer: types.ReadResourceResult = await _run(
            state, snapshot, ctx, pack, label, target, {"uri": uri}, run, _read_result, RESOURCE_NOT_FOUND
        )
        return answer

    async def on_list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        _, offers, visible = await current(ctx)
        own = [_wire(types.Prompt, spec) for spec, pack in offers.prompts if seen(pack, visible)]
        listed: types.ListPromptsResult = await skills["on_list_prompts"](ctx, params)
        return types.ListPromptsResult(prompts=[*own, *listed.prompts])

    async def on_get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        snapshot, offers, visible = await current(ctx)
        found = offers.prompt(params.name)
        render = getattr(found[1], "get_prompt", None) if found is not None else None
        if found is None or not seen(found[1], visible) or not callable(render):
            result: types.GetPromptResult = await skills["on_get_prompt"](ctx, params)
            return result
        spec, pack = found
        arguments = dict(params.arguments or {})

        async def run(passed: Any, context: ToolContext) -> ToolResult:
            result: ToolResult = await render(spec.name, passed, context)
            return result

        label = f"prompts/get {spec.name}"
        target = ("prompts/get", spec.name)
        answer: types.GetPromptResult = await _run(
            state, snapshot, ctx, pack, label, target, arguments, run, _prompt_result, types.INVALID_PARAMS
        )
        return answer

    async def on_completion(
        ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        snapshot, offers, visible = await current(ctx)
        ref = params.ref
        found: ToolProvider | None
        if isinstance(ref, types.PromptReference):
            prompt = offers.prompt(ref.name)
            found = prompt[1] if prompt is not None else None
            what, label = f"prompt {ref.name}", f"completion/complete prompt {ref.name}"
        else:
            found = next((pack for spec, pack, _ in offers.templates if spec.uri == ref.uri), None)
            found = found or next((pack for spec, pack in offers.resources if spec.uri == ref.uri), None)
            what, label = f"resource template {ref.uri}", f"completion/complete {ref.uri}"
        if found is None or not seen(found, visible):
            raise MCPError(types.INVALID_PARAMS, f"no {what} to complete an argument of")
        pack = found
        complete = getattr(pack, "complete", None)
        if not callable(complete):  # a pack that suggests nothing
            return types.CompleteResult(completion=types.Completion(values=[]))
        wire_ref = ref.model_dump(by_alias=True, mode="json", exclude_none=True)
        argument = {"name": params.argument.name, "value": params.argument.value}
        context_arguments = dict(params.context.arguments or {}) if params.context is not None else {}

        async def run(passed: Any, context: ToolContext) -> ToolResult:
            result: ToolResult = await complete(wire_ref, argument, context_arguments, context)
            return result

        arguments = {"ref": wire_ref, "argument": argument}
        target = ("completion/complete", ref.name if isinstance(ref, types.PromptReference) else ref.uri)
        answer: types.CompleteResult = await _run(
            state, snapshot, ctx, pack, label, target, arguments, run, _complete_result, types.INVALID_PARAMS
        )
        return answer

    return {
        "on_completion": on_completion,
        "on_list_resources": on_list_resources,
        "on_list_resource_templates": on_list_resource_templates,
        "on_read_resource": on_read_resource,
        "on_list_prompts": on_list_prompts,
        "on_get_prompt": on_get_prompt,
    }


def _wire(model: Any, spec: ResourceSpec | PromptSpec) -> Any:
    return model.model_validate(spec.to_wire())
