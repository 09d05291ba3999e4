"""The one way a tool is called, whoever calls it: the MCP host, ``lorenz call``, ``lorenz.testing``
and :func:`~lorenz.mounting.mount.execute_mounted_tool`.

:func:`call_tool` finds the tool's pack, refuses unsafe or invalid arguments, runs the pack through
:class:`~lorenz.toolcall.execution.ToolRunner` within the tool timeout, and checks the result
against the tool's ``outputSchema`` and ``server.max_result_bytes``. What only the host has (a
token's grant, progress and log sinks, the client's input, the call log) comes in as parameters
or stays around the call.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from attrs import field, frozen

from lorenz.client_input import InputRequired, InvalidInputRequest
from lorenz.middleware import Call
from lorenz.redact import redact_text, redacted_traceback
from lorenz.results import ToolResult, error_message, failure_result, tool_failure, unsupported_tool_failure

from .middleware import CallOrigin, Layer, run_chain
from .replies import RESULT_TOO_LARGE, ToolReply, call_result, checked_reply
from .schemas import Validator, compile_schema, validate_arguments
from .wire import refuse_unsafe_arguments

if TYPE_CHECKING:
    from lorenz.contracts import ToolContext, ToolProvider, ToolSpec
    from lorenz.settings.model import Settings

    from .execution import ClientGone, ToolRunner

__all__ = ["CallAnswer", "ToolTable", "call_tool"]

logger = logging.getLogger("lorenz.host")

#: How long asking the unmounted packs for their tools may take before an unknown tool's failure
#: goes out without the "how to mount it" hint.
_INSTALLED_TOOLS_SECONDS = 5.0


@frozen(kw_only=True, eq=False)
class ToolTable:
    """The tools one mounted workflow serves, and what calling one of them needs."""

    settings: Settings
    specs: Sequence[ToolSpec]
    #: ``{tool name: the pack serving it}``
    owners: Mapping[str, ToolProvider]
    #: The failure for a name no pack here serves (it may ask the unmounted packs: it runs in a thread).
    unsupported: Callable[[str], ToolResult]
    #: The workflow's call middleware (``server.middleware``), outermost first.
    middleware: tuple[Layer, ...] = ()
    by_name: Mapping[str, ToolSpec] = field(init=False)
    _validators: dict[str, tuple[Validator | None, Validator | None]] = field(init=False, factory=dict)

    @by_name.default
    def _by_name(self) -> Mapping[str, ToolSpec]:
        return {spec.name: spec for spec in self.specs}

    def validators(self, name: str) -> tuple[Validator | None, Validator | None]:
        """The compiled ``inputSchema`` and ``outputSchema`` of ``name``, compiled on first use."""
        found = self._validators.get(name)
        if found is None:
            spec = self.by_name[name]
            found = self._validators[name] = (compile_schema(spec.input_schema), compile_schema(spec.output_schema))
        return found

    def compile(self) -> ToolTable:
        """Compile every tool's schemas now (the host, once per snapshot, before it serves it)."""
        for spec in self.specs:
            self.validators(spec.name)
        return self


@frozen
class CallAnswer:
    """The tool's own result or the failure that replaced it, its wire form, and how the call
    ended (``kind``: :class:`~lorenz.toolcall.execution.CallOutcome`'s, or ``input_required``)."""

    result: ToolResult
    reply: ToolReply
    kind: str


async def call_tool(
    tools: ToolTable,
    name: str,
    arguments: Any,
    context: Callable[[], ToolContext],
    runner: ToolRunner,
    *,
    visible: Callable[[str], bool] | None = None,
    when_left: ClientGone | None = None,
    check_requests: Callable[[Mapping[str, Any]], str | None] | None = None,
    origin: CallOrigin | None = None,
) -> CallAnswer:
    """Route, check and run one call of ``name``; never raises except for a real host signal or
    this call's own cancellation.

    ``context`` builds the call's context (only for a call that runs); ``visible`` is what the
    caller may see (a scoped token: any other tool does not exist for it); ``when_left`` is told how
    a call its caller stopped waiting for ended; ``check_requests`` says why a pack's requests for
    the client's input cannot be sent (``None`` when they can); ``origin`` is who calls and how, for
    the workflow's call middleware (``tools.middleware``)."""
    try:
        if visible is not None and not visible(name):
            return _answer(unsupported_tool_failure(name, [spec.name for spec in tools.specs if visible(spec.name)]))
        pack = tools.owners.get(name)
        if pack is None:  # lists every mounted tool, and says how to mount an installed one
            return _answer(await _unsupported(tools, name))
        if tools.middleware:  # only then is a Call built: none costs this one test

            async def run(arguments: Any) -> CallAnswer:
                return await _run(tools, name, arguments, context, runner, when_left, check_requests)

            return await _through_middleware(tools, pack, name, arguments, origin or CallOrigin(), run)
        return await _run(tools, name, arguments, context, runner, when_left, check_requests)
    except Exception as exc:  # a defect here must still reach the model as a tool error
        settings = tools.settings
        logger.error("lorenz: tools/call %s failed\n%s", name, redacted_traceback(exc, settings.secrets))
        text = redact_text(error_message(exc), settings.secrets, base_dir=settings.base_dir)
        return _answer(tool_failure(text), "crash")


async def _run(
    tools: ToolTable,
    name: str,
    arguments: Any,
    context: Callable[[], ToolContext],
    runner: ToolRunner,
    when_left: ClientGone | None,
    check_requests: Callable[[Mapping[str, Any]], str | None] | None,
) -> CallAnswer:
    """The arguments checked, the pack run, and its result checked."""
    pack = tools.owners[name]
    inputs, output = tools.validators(name)
    refused = refuse_unsafe_arguments(name, arguments)
    # Typed packs (lorenz.authoring) refuse bad arguments themselves, naming the key at fault.
    if refused is None and not getattr(pack, "validates_arguments", False):
        refused = validate_arguments(name, arguments, inputs)
    if refused is not None:
        return _answer(refused)
    server = tools.settings.server
    outcome = await runner.run(
        pack,
        name,
        arguments,
        context(),
        time_limit=server.tool_timeout_seconds,
        concurrency=server.pack_concurrency,
        when_left=when_left,
    )
    result, kind = outcome.result, outcome.kind
    if isinstance(result, InputRequired):  # the client answers, then retries the call
        why = check_requests(result.requests) if check_requests is not None else None
        if why is not None:  # the pack's bug, said as such: never the SDK's refusal of the result
            return _answer(
                failure_result(InvalidInputRequest(why).answer(name), reason="invalid_input_request"), "failure"
            )
        reply = ToolReply(f"input required: {', '.join(result.requests)}", None, False, input_required=result.wire())
        return CallAnswer(result, reply, "input_required")
    answered, reply = checked_reply(result, tools.by_name[name], output, max_bytes=server.max_result_bytes)
    if kind == "success" and answered is not result:  # too large, or not matching its outputSchema
        kind = "rejected" if _reason(answered) == RESULT_TOO_LARGE else "failure"
    elif kind == "failure" and _reason(result) == "invalid_arguments":
        kind = "rejected"  # a typed pack refusing its arguments
    return CallAnswer(answered, reply, kind)


async def _through_middleware(
    tools: ToolTable,
    pack: ToolProvider,
    name: str,
    arguments: Any,
    origin: CallOrigin,
    run: Callable[[Any], Awaitable[CallAnswer]],
) -> CallAnswer:
    """The call through the workflow's middleware, whose innermost step is ``run``. The answer is
    the pack's when the result is; one a middleware made instead is checked like a pack's, and a
    failure it answered without calling on is ``rejected``."""
    answers: list[CallAnswer] = []
    call = origin.call(name, str(pack.name), arguments)

    async def terminal(passed: Call) -> ToolResult:
        answer = await run(passed.arguments if passed is call else dict(passed.arguments))
        answers.append(answer)
        return answer.result

    settings = tools.settings
    budget = settings.server.tool_timeout_seconds
    result = await run_chain(tools.middleware, call, terminal, budget=budget, secrets=settings.secrets)
    if answers and answers[-1].result is result:
        return answers[-1]
    if not result.success:
        return _answer(result, "failure" if answers else "rejected")
    _, output = tools.validators(name)
    answered, reply = checked_reply(result, tools.by_name[name], output, max_bytes=settings.server.max_result_bytes)
    return CallAnswer(answered, reply, "success" if answered is result else "failure")


def _answer(result: ToolResult, kind: str = "rejected") -> CallAnswer:
    return CallAnswer(result, call_result(result), kind)


def _reason(result: ToolResult) -> Any:
    error = result.result.get("error") if isinstance(result.result, dict) else None
    return error.get("reason") if isinstance(error, dict) else None


async def _unsupported(tools: ToolTable, name: str) -> ToolResult:
    """The failure for an unknown tool; the unmounted packs are asked for their tools off the loop."""
    with anyio.move_on_after(_INSTALLED_TOOLS_SECONDS):
        return await anyio.to_thread.run_sync(tools.unsupported, name, abandon_on_cancel=True)
    return unsupported_tool_failure(name, [spec.name for spec in tools.specs])
