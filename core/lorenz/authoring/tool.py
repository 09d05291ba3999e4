"""One typed tool: its definition (:class:`Tool`, made by :func:`~lorenz.authoring.define.tool`), with
its declared failure modes (:class:`ErrorContract`, see ``failures.py``), and what its handler gets
(:class:`CallContext`)."""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import attrs
from attrs import field, frozen

from lorenz.arguments import as_arguments, invalid_arguments
from lorenz.contracts import ToolSpec, send_progress
from lorenz.results import FormattedResult, ToolResult, failure_result

from . import inputs
from .content import joined_text, rendered, with_text_after
from .enrichment import Enrich, enrichment_spec
from .failures import BASELINE_ERRORS, ErrorContract, ToolFailure, kit_logger, unexpected_failure
from .inputs import InputRequest, InputRound
from .plan import CallPlan, call_plan, default_text
from .schema import KeywordCheck, input_schema, keyword_check, widened_output_schema
from .structure import ArgumentError, unstructure

if TYPE_CHECKING:
    import httpx

    from lorenz.client_input import ClientInput
    from lorenz.contracts import Caller
    from lorenz.settings.model import Settings

    from .content import ContentBlock
    from .inputs import Inputs
    from .logs import ClientLog

__all__ = ["CallContext", "ErrorContract", "FormattedResult", "Tool", "ToolFailure", "failure_result"]

In = TypeVar("In")
Out = TypeVar("Out")

NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
REASON_RE = re.compile(r"^[a-z][a-z0-9_]*$")
#: An OAuth scope token (RFC 6749 §3.3): printable ASCII without space, ``"`` or ``\\``.
SCOPE_RE = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")


def _scopes(value: Sequence[str]) -> tuple[str, ...]:
    return tuple(value)


@functools.cache
def _client_log_class() -> type[ClientLog]:
    from .logs import ClientLog  # with asyncio: loaded by the first call, not the pack's import

    return ClientLog


def _client_log(sink: Any) -> ClientLog:
    return _client_log_class()(kit_logger(), sink)


@functools.cache
def _run_rounds() -> Callable[..., Awaitable[Any]]:
    from .rounds import run_rounds  # the call-time modules: listing tools never loads them

    return run_rounds


@attrs.define(kw_only=True)
class CallContext:
    """What a typed handler gets besides its arguments.

    ``options`` is the pack's structured ``tools.<pack>`` options (or the raw mapping when the pack
    declares no options class); make outbound HTTP calls through ``http``; report how far long work
    got with ``await ctx.progress(done, total, message)``; ``ctx.log.info(...)`` goes to the server
    log, and to the client too when it asked for log messages. A call the client cancels raises
    ``CancelledError`` at the handler's next ``await``: clean up in ``finally`` and let it propagate.
    """

    settings: Settings
    http: httpx.AsyncClient
    options: Any
    tool: Tool[Any, Any]
    #: The host's ``notifications/message`` channel (``ToolContext.log_sink``); ``None``: server log only.
    log_sink: Any = field(default=None, repr=False)
    #: A logger (a :class:`logging.LoggerAdapter`); a plain ``Logger`` given here is wrapped.
    log: ClientLog = field(default=attrs.Factory(lambda self: _client_log(self.log_sink), takes_self=True))
    #: The host's progress channel (``ToolContext.progress``); ``None`` in tests without one.
    progress_sink: Any = field(default=None, repr=False)
    #: Agent-facing context for a successful result (``ctx.enrich.notice(...)``): see :class:`Enrich`.
    enrich: Enrich = field(default=attrs.Factory(lambda self: self.tool.enricher(), takes_self=True))
    #: Whether a tool is callable by this caller (set by the pack from the host's ``ToolContext``).
    enabled: Callable[[str], bool] | None = field(default=None, repr=False)
    #: How this call may ask its client for input (the host's ``ToolContext.client_input``).
    client_input: ClientInput | None = field(default=None, repr=False)
    #: The client's answers to the rounds asked so far (``ctx.inputs.accepted("confirm", Confirm)``).
    inputs: Inputs = field(factory=inputs.Inputs)
    #: Who is calling (``ToolContext.caller``): subject, client id and scopes of a checked OAuth
    #: token; ``None`` when the host checked none (loopback, a static token, stdio, tests).
    caller: Caller | None = None

    def __attrs_post_init__(self) -> None:
        wrapper = _client_log_class()
        given: Any = self.log  # a plain Logger passed in, until wrapped here
        if not isinstance(given, wrapper):
            self.log = wrapper(given, self.log_sink)

    def request_input(self, requests: Mapping[str, InputRequest]) -> InputRound:
        """A round of questions for the client, by name: ``return ctx.request_input({"confirm":
        elicit("Delete BOARD-3?", schema=Confirm)})``. The handler is called again with the same
        arguments once they are answered, the answers on ``ctx.inputs``."""
        for name, request in requests.items():
            if not isinstance(request, InputRequest):
                msg = f"request_input: {name!r} is a {type(request).__name__}, not a request from elicit(), ..."
                raise TypeError(msg)
        return InputRound(dict(requests))

    def is_enabled(self, tool_name: str) -> bool:
        """Whether ``tool_name`` is callable by this caller under this configuration: mounted, not
        switched off, and allowed by the caller's token. Ask before suggesting another tool."""
        return self.enabled(tool_name) if self.enabled is not None else tool_name == self.tool.name

    async def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the client how far the call got (a no-op unless it asked for progress)."""
        await send_progress(self.progress_sink, done, total, message)

    def fail(
        self,
        reason: str,
        message: str | None = None,
        /,
        *,
        recovery: str | None = None,
        retryable: bool | None = None,
        code: int | None = None,
        **details: Any,
    ) -> ToolFailure:
        """The failure for a declared ``reason`` (``message`` defaults to the contract's ``when``).

        Write ``raise ctx.fail("city_not_found", f"No city named {args.city!r}.")``. ``recovery``,
        ``retryable`` and ``code`` given here win over the contract's; other keywords are added to the
        error object. A baseline reason (``not_found``, ``timeout``, ...) needs no declaration. Any
        other undeclared reason is a programming error: it becomes an ``undeclared_reason`` failure
        (and the lint flags the call site).
        """
        contract = self.tool.contract(reason) or BASELINE_ERRORS.get(reason)
        if contract is None:
            declared = [c.reason for c in self.tool.errors]
            kit_logger().error("tool %s failed with undeclared reason %r", self.tool.name, reason)
            return ToolFailure(
                f"{self.tool.name} failed with an undeclared reason {reason!r}" + (f": {message}" if message else ""),
                reason="undeclared_reason",
                retryable=False,
                recovery=None,
                details={"declaredReasons": declared},
            )
        return ToolFailure.of(contract, message, recovery=recovery, retryable=retryable, code=code, details=details)

    def recovery_for(self, reason: str) -> str | None:
        """The declared (or baseline) recovery hint of ``reason`` (``None`` if undeclared)."""
        contract = self.tool.contract(reason) or BASELINE_ERRORS.get(reason)
        return contract.recovery if contract is not None else None


Handler = Callable[[CallContext, Any], Awaitable[Any]]
#: ``reader(ctx, raw_arguments) -> input``: raises :class:`lorenz.ArgumentError` (or a ``ToolFailure``).
ArgumentReader = Callable[[CallContext, Mapping[str, Any]], Any]


@frozen(kw_only=True, eq=False)
class Tool(Generic[In, Out]):
    """A typed tool definition. Made by :func:`tool`; checked when it is made, so a bad definition
    fails when its module is imported."""

    name: str
    description: str
    handler: Handler
    input: type[In]
    output: type[Out] | None = None
    title: str | None = None
    annotations: Mapping[str, Any] | None = None
    errors: tuple[ErrorContract, ...] = ()
    #: The text for the model: a ``str``, or a list of content blocks (``text``, ``image``, ...).
    format: Callable[[Out], str | Sequence[ContentBlock | str]] | None = None
    #: Agent-facing fields beside the output: ``True`` (``echo``/``total``/``notice``), a tuple of
    #: those names, or an attrs class.
    enrichment: type | bool | tuple[str, ...] | None = None
    #: A published ``inputSchema`` to advertise instead of the one generated from ``input``.
    schema: Mapping[str, Any] | None = None
    #: How refused arguments read: ``(raw arguments, error) -> ToolResult``, ``None`` for the default.
    argument_errors: Callable[[Any, ArgumentError], ToolResult | None] | None = field(default=None, repr=False)
    #: Reads the raw arguments instead of the strict structuring (see :func:`tool`).
    read_arguments: ArgumentReader | None = field(default=None, repr=False)
    #: Whether the handler asks the client for input (``lorenz check`` warns where none could answer).
    needs_client_input: bool = False
    #: OAuth scopes an access token must all carry to see and call this tool (``server.auth``).
    auth: tuple[str, ...] = field(default=(), converter=_scopes)
    input_schema: Mapping[str, Any] = field(init=False)
    output_schema: Mapping[str, Any] | None = field(init=False)
    #: The keywords cattrs does not check, when the input has any.
    _keywords: KeywordCheck | None = field(init=False, repr=False)
    _spec: Any = field(init=False, repr=False)
    _enrichment: Any = field(init=False, repr=False)
    #: What every call needs, worked out at the first call (:mod:`.plan`).
    _plan: CallPlan | None = field(init=False, default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if not NAME_RE.match(self.name):
            msg = f"tool name {self.name!r} must match {NAME_RE.pattern}"
            raise ValueError(msg)
        reasons = [contract.reason for contract in self.errors]
        duplicates = sorted({reason for reason in reasons if reasons.count(reason) > 1})
        if duplicates:
            msg = f"tool {self.name} declares the reason(s) {', '.join(duplicates)} more than once"
            raise ValueError(msg)
        bad = [scope for scope in self.auth if not isinstance(scope, str) or not SCOPE_RE.match(scope)]
        if bad:
            msg = f"tool {self.name}: auth scope {bad[0]!r} must be one OAuth scope token (no spaces or quotes)"
            raise ValueError(msg)
        if self.format is not None and self.output is None:
            msg = f"tool {self.name} has a format but no output class"
            raise ValueError(msg)
        schema = input_schema(self.input) if self.schema is None else dict(self.schema)
        object.__setattr__(self, "input_schema", schema)
        object.__setattr__(self, "_keywords", keyword_check(schema))
        declared = [(contract.reason, contract.when) for contract in self.errors]
        out = widened_output_schema(self.output, declared) if self.output is not None else None
        enrichment = enrichment_spec(self.name, self.enrichment, self.output)
        object.__setattr__(self, "_enrichment", enrichment)
        object.__setattr__(self, "output_schema", enrichment.widen(out) if enrichment and out else out)
        object.__setattr__(self, "_spec", self._build_spec())

    def contract(self, reason: str) -> ErrorContract | None:
        """The declared contract for ``reason``."""
        return next((contract for contract in self.errors if contract.reason == reason), None)

    def enricher(self) -> Enrich:
        """A fresh ``ctx.enrich`` for one call of this tool."""
        return Enrich(self._enrichment, self.name)

    @property
    def keywords(self) -> KeywordCheck | None:
        """The check of the input schema's keywords that structuring does not check, if any."""
        return self._keywords

    def plan(self) -> CallPlan:
        """The tool's :class:`~lorenz.authoring.plan.CallPlan` (built on the first call)."""
        plan = self._plan
        if plan is None:
            plan = call_plan(self)
            object.__setattr__(self, "_plan", plan)
        return plan

    def spec(self) -> ToolSpec:
        """The :class:`~lorenz.contracts.ToolSpec` advertised in ``tools/list`` (built once)."""
        spec: ToolSpec = self._spec
        return spec

    def _build_spec(self) -> ToolSpec:
        title = self.title or (self.annotations or {}).get("title") or _title_from(self.name)
        return ToolSpec(
            name=self.name,
            title=title,
            description=self.description,
            input_schema=self.input_schema,
            annotations=dict(self.annotations) if self.annotations is not None else None,
            output_schema=self.output_schema,
            auth=self.auth,
        )

    def parse(self, arguments: Any) -> In:
        """``arguments`` as the input class; raises :class:`lorenz.ArgumentError`."""
        arguments = {} if arguments is None else arguments
        plan = self.plan()
        value: In = plan.structure(arguments)
        if plan.keywords is not None:
            plan.keywords.check(arguments)
        return value

    def render(self, output: Out) -> tuple[Any, str]:
        """The structured payload and the text of a successful output (its text blocks joined)."""
        data, text, _ = self.render_content(output)
        return data, text

    def render_content(self, output: Out) -> tuple[Any, str, tuple[ContentBlock, ...] | None]:
        """The structured payload, the text and, when ``format()`` returned a list, its blocks."""
        plan = self.plan()
        data = plan.unstructure(output) if plan.unstructure is not None else unstructure(output)
        if plan.omitted and isinstance(data, dict):
            data = _omitting(data, plan.omitted)
        if self.format is None:
            return data, default_text(data, plan.plain_output and type(output) is self.output), None
        text, blocks = rendered(self.format(output), self.name)
        return data, text, blocks

    async def run(self, arguments: Any, context: CallContext) -> ToolResult:
        """Structure ``arguments``, run the handler, shape the result; never raises."""
        reader = self.read_arguments
        try:
            args = self.parse(arguments) if reader is None else reader(context, as_arguments(arguments))
        except ArgumentError as exc:
            worded = self.argument_errors(arguments, exc) if self.argument_errors is not None else None
            return worded if worded is not None else invalid_arguments(self.name, exc.located)
        except ToolFailure as failure:  # a reader's refusal with its own reason
            return failure.to_result()
        except Exception as exc:  # a reader that broke its contract
            return unexpected_failure(self.name, exc, context.settings, doing="Reading the arguments")
        try:
            output = await _run_rounds()(self, context, args)
        except ToolFailure as failure:
            output = failure
        except Exception as exc:
            await context.log.flush()
            return unexpected_failure(self.name, exc, context.settings)
        await context.log.flush()  # every message before the result
        if isinstance(output, ToolFailure):
            return output.to_result()
        if isinstance(output, ToolResult):
            return output
        if self.output is None:
            data = unstructure(output) if attrs.has(type(output)) else output
            return FormattedResult(success=True, result=data, text=default_text(data, plain=False))
        if not isinstance(output, self.output):
            message = f"tool {self.name} returned {type(output).__name__}, not {self.output.__name__}"
            return failure_result(message, reason="internal_error")
        try:
            data, text, blocks = self.render_content(output)
        except Exception as exc:
            return unexpected_failure(self.name, exc, context.settings, doing="Output formatting")
        if blocks is None:
            data, text = context.enrich.merge(data, text)  # on success only: a failure drops it
            return FormattedResult(success=True, result=data, text=text)
        data, mirrored = context.enrich.merge(data, "")  # after the last text block
        blocks = with_text_after(blocks, mirrored)
        content = tuple(block.wire() for block in blocks)
        return FormattedResult(success=True, result=data, text=joined_text(blocks), content=content)


def _omitting(data: dict[str, Any], omitting: tuple[str, ...]) -> dict[str, Any]:
    """``data`` without the ``None`` values of the ``omit_none`` fields named ``omitting``."""
    omitted = [name for name in omitting if data.get(name) is None]
    return {key: value for key, value in data.items() if key not in omitted} if omitted else data


def _title_from(name: str) -> str:
    return " ".join(part.capitalize() for part in re.split(r"[_.\-]+", name) if part)
