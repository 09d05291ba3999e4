"""Defining a typed tool: :func:`tool` makes a :class:`~lorenz.authoring.tool.Tool` of an async
handler, :func:`hints` writes its MCP annotations."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from .tool import CallContext, ErrorContract, Tool

if TYPE_CHECKING:
    from lorenz.results import ToolResult

    from .content import ContentBlock
    from .inputs import InputRound
    from .structure import ArgumentError

__all__ = ["hints", "tool"]

In = TypeVar("In")
Out = TypeVar("Out")


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
    input_schema: Mapping[str, Any] | None = None,
    argument_errors: Callable[[Any, ArgumentError], ToolResult | None] | None = None,
    read_arguments: Callable[[CallContext, Mapping[str, Any]], In] | None = None,
    needs_client_input: bool = False,
    auth: Sequence[str] = (),
) -> Callable[[Callable[[CallContext, In], Awaitable[Out | InputRound]]], Tool[In, Out]]:
    """Define a tool from an async handler::

    @tool(name="weather_get_forecast", description="...", input=ForecastArgs, output=Forecast,
          annotations=hints(read_only=True), errors=[ErrorContract(...)])
    async def get_forecast(ctx: CallContext, args: ForecastArgs) -> Forecast: ...

    ``input_schema`` advertises a schema already published (``input`` still structures the
    arguments, and the schema's keywords are still checked). ``read_arguments=reader`` replaces
    that structuring for a pack whose callers depend on its own checks: ``reader(ctx, raw)``
    returns the input instance, or raises :class:`lorenz.ArgumentError` or a ``ToolFailure``. An
    ``ArgumentError`` (the reader's or the structuring's) is worded by ``argument_errors(raw,
    exc)`` when given (return ``None`` to keep the kit's ``invalid arguments for tool ...``
    failure). A reader checks only what it checks: serve its tool from a provider without
    ``validates_arguments``, so the host checks the ``inputSchema`` first.
    ``auth`` names OAuth scopes a caller's access token must all carry to see and call the tool
    when the host runs with ``server.auth``.
    """

    def decorate(handler: Callable[[CallContext, In], Awaitable[Out | InputRound]]) -> Tool[In, Out]:
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
            schema=input_schema,
            argument_errors=argument_errors,
            read_arguments=read_arguments,
            needs_client_input=needs_client_input,
            auth=tuple(auth),
        )

    return decorate
