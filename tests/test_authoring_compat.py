"""`tool(input_schema=..., argument_errors=...)`: a published tool moved to the kit keeps its schema
and the wording of its refusals."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from attrs import frozen

from lorenz import ToolResult, tool_failure
from lorenz.authoring import ArgumentError, CallContext, Pack, tool
from lorenz.contracts import ToolContext
from lorenz.settings.model import Settings

pytestmark = pytest.mark.anyio

SCHEMA = {"type": "object", "additionalProperties": False, "properties": {"n": {"type": "integer"}}}


@frozen
class Args:
    n: int


def legacy(raw: Any, error: ArgumentError) -> ToolResult | None:
    return tool_failure("'n' is required") if not isinstance(raw, dict) or "n" not in raw else None


@tool(name="demo_double", description="Double n.", input=Args, input_schema=SCHEMA, argument_errors=legacy)
async def double(ctx: CallContext, args: Args) -> dict[str, int]:
    return {"n": args.n * 2}


async def run(arguments: Any) -> ToolResult:
    async with httpx.AsyncClient() as http:
        return await Pack(name="demo", tools=[double]).execute_tool(
            "demo_double", arguments, ToolContext(settings=Settings(), http=http)
        )


def test_the_published_schema_is_advertised() -> None:
    assert double.spec().input_schema == SCHEMA


async def test_a_refusal_is_worded_by_the_hook() -> None:
    assert (await run({})).error == "'n' is required"


async def test_the_kit_words_what_the_hook_leaves() -> None:
    result = await run({"n": "x"})
    assert result.error is not None and result.error.startswith("invalid arguments for tool demo_double: ")
    assert (await run({"n": 2})).result == {"n": 4}
