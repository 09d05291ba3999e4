"""One typed tool: its definition (:class:`Tool`, made by :func:`tool`), with its declared failure
modes (:class:`ErrorContract`, see ``failures.py``), and what its handler gets (:class:`CallContext`)."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import attrs
from attrs import field, frozen

from lorenz.arguments import INVALID_ARGUMENTS_RECOVERY, as_arguments, invalid_arguments
from lorenz.results import FormattedResult, ToolResult, failure_result
from lorenz.toolcall.schemas import schema_problems

from .content import ContentBlock, joined_text, rendered, with_text_after
from .enrichment import Enrich, enrichment_spec
from .failures import BASELINE_ERRORS, ErrorContract, ToolFailure, unexpected_failure
from .logs import ClientLog
from .schema import input_schema, widened_output_schema
from .structure import ArgumentError, structure_strict, unstructure

if TYPE_CHECKING:
    import httpx

    from lorenz.contracts import ToolSpec
    from lorenz.settings.model import Settings

__all__ = [
    "CallContext",
    "ErrorContract",
    "FormattedResult",
    "Tool",
    "ToolFailure",
    "failure_result",
    "hints",
    "tool",
]

logger = logging.getLogger("lorenz.authoring")

In = TypeVar("In")
Out = TypeVar("Out")

NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
REASON_RE = re.compile(r"^[a-z][a-z0-9_]*$")


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
    log: ClientLog = field(default=attrs.Factory(lambda self: ClientLog(logger, self.log_sink), takes_self=True))
    #: The host's progress channel (``ToolContext.progress``); ``None`` in tests without one.
    progress_sink: Any = field(default=None, repr=False)
    #: Agent-facing context for a successful result (``ctx.enrich.notice(...)``): see :class:`Enrich`.
    enrich: Enrich = field(default=attrs.Factory(lambda self: self.tool.enricher(), takes_self=True))
    #: Whether a tool is callable by this caller (set by the pack from the host's ``ToolContext``).
    enabled: Callable[[str], bool] | None = field(default=None, repr=False)

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.log, ClientLog):
            self.log = ClientLog(self.log, self.log_sink)

    def is_enabled(self, tool_name: str) -> bool:
        """Whether ``tool_name`` is callable by this caller under this configuration: mounted, not
        switched off, and allowed by the caller's token. Ask before suggesting another tool."""
        return self.enabled(tool_name) if self.enabled is not None else tool_name == self.tool.name

    async def progress(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """Tell the client how far the call got (a no-op unless it asked for progress)."""
        from lorenz.contracts import send_progress

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
            logger.error("tool %s failed with undeclared reason %r", self.tool.name, reason)
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


def _default_format(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


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
    #: Reads the raw arguments in the tool's own words instead of the strict structuring (see :func:`tool`).
    arguments: ArgumentReader | None = None
    input_schema: Mapping[str, Any] = field(init=False)
    output_schema: Mapping[str, Any] | None = field(init=False)
    #: A ``jsonschema`` validator for the keywords cattrs does not check, when the schema has any.
    _keywords: Any = field(init=False, repr=False)
    _spec: Any = field(init=False, repr=False)
    _enrichment: Any = field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        if not NAME_RE.match(self.name):
            msg = f"tool name {self.name!r} must match {NAME_RE.pattern}"
            raise ValueError(msg)
        reasons = [contract.reason for contract in self.errors]
        duplicates = sorted({reason for reason in reasons if reasons.count(reason) > 1})
        if duplicates:
            msg = f"tool {self.name} declares the reason(s) {', '.join(duplicates)} more than once"
            raise ValueError(msg)
        if self.format is not None and self.output is None:
            msg = f"tool {self.name} has a format but no output class"
            raise ValueError(msg)
        schema = input_schema(self.input)
        object.__setattr__(self, "input_schema", schema)
        object.__setattr__(self, "_keywords", _keyword_validator(schema))
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

    def spec(self) -> ToolSpec:
        """The :class:`~lorenz.contracts.ToolSpec` advertised in ``tools/list`` (built once)."""
        spec: ToolSpec = self._spec
        return spec

    def _build_spec(self) -> ToolSpec:
        from lorenz.contracts import ToolSpec

        title = self.title or (self.annotations or {}).get("title") or _title_from(self.name)
        return ToolSpec(
            name=self.name,
            title=title,
            description=self.description,
            input_schema=self.input_schema,
            annotations=dict(self.annotations) if self.annotations is not None else None,
            output_schema=self.output_schema,
        )

    def parse(self, arguments: Any) -> In:
        """``arguments`` as the input class; raises :class:`lorenz.ArgumentError`."""
        arguments = {} if arguments is None else arguments
        value = structure_strict(arguments, self.input)
        if self._keywords is not None:
            problems = schema_problems(self._keywords.iter_errors(arguments))
            if problems:
                raise ArgumentError(*problems)
        return value

    def render(self, output: Out) -> tuple[Any, str]:
        """The structured payload and the text of a successful output (its text blocks joined)."""
        data, text, _ = self.render_content(output)
        return data, text

    def render_content(self, output: Out) -> tuple[Any, str, tuple[ContentBlock, ...] | None]:
        """The structured payload, the text and, when ``format()`` returned a list, its blocks."""
        data = unstructure(output)
        if self.format is None:
            return data, _default_format(data), None
        text, blocks = rendered(self.format(output), self.name)
        return data, text, blocks

    async def run(self, arguments: Any, context: CallContext) -> ToolResult:
        """Structure ``arguments``, run the handler, shape the result; never raises."""
        if self.arguments is not None:
            try:
                args = self.arguments(context, as_arguments(arguments))
            except ArgumentError as exc:  # the reader's own words, as they are
                return failure_result(str(exc), reason="invalid_arguments", recovery=INVALID_ARGUMENTS_RECOVERY)
            except ToolFailure as failure:
                return failure.to_result()
            except Exception as exc:
                return unexpected_failure(self.name, exc, context.settings)
        else:
            try:
                args = self.parse(arguments)
            except ArgumentError as exc:
                return invalid_arguments(self.name, exc.located)
        try:
            output = await self.handler(context, args)
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
            return FormattedResult(success=True, result=data, text=_default_format(data))
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


_KEYWORDS = ("minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems")


def _constraints(schema: Any) -> dict[str, Any]:
    """The part of ``schema`` that carries keyword constraints (types, keys and enums are already
    checked by structuring), so validating a call costs only what the constraints need."""
    if not isinstance(schema, Mapping):
        return {}
    out: dict[str, Any] = {key: schema[key] for key in _KEYWORDS if key in schema}
    properties = {name: _constraints(sub) for name, sub in (schema.get("properties") or {}).items()}
    properties = {name: sub for name, sub in properties.items() if sub}
    if properties:
        out["properties"] = properties
    items = _constraints(schema.get("items"))
    if items:
        out["items"] = items
    if any(_constraints(branch) for branch in schema.get("anyOf") or ()):
        out["anyOf"] = schema["anyOf"]
    return out


def _keyword_validator(schema: Mapping[str, Any]) -> Any:
    """A validator for the constraints cattrs does not check (``minimum``, ``maxLength``, ...)."""
    constraints = _constraints(schema)
    if not constraints:
        return None
    from jsonschema import Draft202012Validator

    return Draft202012Validator(constraints)


def _title_from(name: str) -> str:
    return " ".join(part.capitalize() for part in re.split(r"[_.\-]+", name) if part)


def hints(
    *,
    read_only: bool | None = None,
    destructive: bool | None = None,
    idempotent: bool | None = None,
    open_world: bool | None = None,
) -> dict[str, bool]:
    """MCP tool annotations by their wire names, leaving out the ones not given."""
    pairs = {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": open_world,
    }
    return {key: value for key, value in pairs.items() if value is not None}


def tool(
    *,
    name: str,
    description: str,
    input: type[In],
    output: type[Out] | None = None,
    title: str | None = None,
    annotations: Mapping[str, Any] | None = None,
    errors: Sequence[ErrorContract] = (),
    format: Callable[[Out], str | Sequence[ContentBlock | str]] | None = None,
    enrichment: type | bool | tuple[str, ...] | None = None,
    arguments: Callable[[CallContext, Mapping[str, Any]], In] | None = None,
) -> Callable[[Callable[[CallContext, In], Awaitable[Out]]], Tool[In, Out]]:
    """Define a tool from an async handler::

    @tool(name="weather_get_forecast", description="...", input=ForecastArgs, output=Forecast,
          annotations=hints(read_only=True), errors=[ErrorContract(...)])
    async def get_forecast(ctx: CallContext, args: ForecastArgs) -> Forecast: ...

    ``arguments=reader`` replaces the strict structuring for a tool that must keep its own wording
    (a pack moved onto the kit with callers pinned to its messages): ``reader(ctx, raw)`` returns the
    input instance or raises :class:`lorenz.ArgumentError`, whose message is the failure's, as is.
    A reader checks only what it checks, so serve such a tool from a provider without
    ``validates_arguments``: the host then checks the ``inputSchema`` first.
    """

    def decorate(handler: Callable[[CallContext, In], Awaitable[Out]]) -> Tool[In, Out]:
        return Tool(
            name=name,
            description=description,
            handler=handler,
            input=input,
            output=output,
            title=title,
            annotations=annotations,
            errors=tuple(errors),
            format=format,
            enrichment=enrichment,
            arguments=arguments,
        )

    return decorate
