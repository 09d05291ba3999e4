"""Typed tool packs: define tools from attrs classes, with error contracts and disabled tools.

A pack built here is a normal :class:`lorenz.ToolProvider`::

    from attrs import field, frozen
    from lorenz.authoring import CallContext, ErrorContract, Pack, describe, hints, tool

    @frozen
    class EchoArgs:
        text: str = field(metadata=describe("The text to echo back."))

    @frozen
    class Echo:
        text: str = field(metadata=describe("The same text."))

    @tool(name="demo_echo_text", description="Echo a text back unchanged.", input=EchoArgs, output=Echo,
          annotations=hints(read_only=True))
    async def echo(ctx: CallContext, args: EchoArgs) -> Echo:
        return Echo(text=args.text)

    PACK = Pack(name="demo", tools=[echo])

See ``docs/writing-a-pack.md``.
"""

from __future__ import annotations

from .pack import DisabledTool, Pack, disabled
from .schema import SchemaError, describe, input_schema, output_schema, widened_output_schema
from .structure import ArgumentError, structure_strict, unstructure
from .tool import CallContext, ErrorContract, FormattedResult, Tool, ToolFailure, failure_result, hints, tool

__all__ = [
    "ArgumentError",
    "CallContext",
    "DisabledTool",
    "ErrorContract",
    "FormattedResult",
    "Pack",
    "SchemaError",
    "Tool",
    "ToolFailure",
    "describe",
    "disabled",
    "failure_result",
    "hints",
    "input_schema",
    "output_schema",
    "structure_strict",
    "tool",
    "unstructure",
    "widened_output_schema",
]
