"""Kit features for a pack moved onto lorenz.authoring with callers pinned to its wording: a field's
own schema (``describe(schema=...)``), an argument reader (``tool(arguments=...)``), a subset of the
built-in enrichment (``enrichment=("echo", "notice")``), and the lint following ``typed_pack()``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from attrs import field, frozen

from lorenz import Settings, ToolContext, require_str
from lorenz.authoring import CallContext, Pack, describe, tool
from lorenz.authoring.lint import lint_pack

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@frozen(kw_only=True)
class Args:
    name: str = field(metadata=describe("A name."))
    note: str | None = field(default=None, metadata=describe("A note.", schema={"type": "string"}))


@frozen(kw_only=True)
class Found:
    names: list[str] = field(metadata=describe("The names."))
    total: int = field(metadata=describe("How many before the limit."))


def read(ctx: CallContext, raw: Mapping[str, Any]) -> Args:
    if raw.get("boom"):
        raise RuntimeError("reader broke")
    return Args(name=require_str(raw, "name"))


@tool(
    name="own_find",
    description="Find names.",
    input=Args,
    output=Found,
    enrichment=("echo", "notice"),
    arguments=read,
    format=lambda found: ", ".join(found.names) + f" ({found.total})",
)
async def find(ctx: CallContext, args: Args) -> Found:
    ctx.enrich.echo(args.name)
    return Found(names=[args.name], total=1)


def test_a_field_schema_replaces_the_typed_one_without_a_default() -> None:
    note = find.input_schema["properties"]["note"]
    assert note == {"type": "string", "description": "A note."}
    assert find.input_schema["properties"]["name"] == {"type": "string", "description": "A name."}


def test_enrichment_can_leave_out_a_builtin_the_output_has() -> None:
    assert find.output_schema is not None
    properties = find.output_schema["properties"]
    assert "echo" in properties and "notice" in properties
    assert properties["total"]["type"] == "integer"  # the output's own field
    with pytest.raises(ValueError, match="'totals' not built-in enrichment fields"):
        tool(name="own_bad", description="x", input=Args, output=Found, enrichment=("totals",))(find.handler)


async def test_the_reader_words_a_refusal_and_a_crash_is_contained() -> None:
    context = CallContext(settings=Settings(), http=None, options={}, tool=find)  # type: ignore[arg-type]
    refused = await find.run({"note": 3}, context)
    assert (refused.success, refused.error) == (False, "'name' is required")
    assert refused.result["error"]["reason"] == "invalid_arguments"
    crashed = await find.run({"boom": True}, CallContext(settings=Settings(), http=None, options={}, tool=find))  # type: ignore[arg-type]
    assert crashed.success is False and crashed.result["error"]["reason"] == "internal_error"
    done = await find.run(
        {"name": "ada", "ignored": 1}, CallContext(settings=Settings(), http=None, options={}, tool=find)
    )  # type: ignore[arg-type]
    assert done.result == {"names": ["ada"], "total": 1, "echo": "ada"}


class Deferred:
    """A plain provider whose typed pack loads on demand."""

    name = "own"

    def tool_specs(self, settings: Settings) -> list[Any]:
        return [find.spec()]

    def typed_pack(self) -> Pack:
        return Pack(name="own", tools=[find])

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> Any:
        return await self.typed_pack().execute_tool(name, input, context)


def test_the_lint_checks_the_typed_pack_behind_a_provider() -> None:
    @tool(name="own_find", description="Find.", input=Args, output=Found, format=lambda found: "nothing")
    async def silent(ctx: CallContext, args: Args) -> Found:
        return Found(names=[], total=0)

    class Hidden(Deferred):
        def typed_pack(self) -> Pack:
            return Pack(name="own", tools=[silent])

    assert [d.rule for d in lint_pack(Deferred(), contract=False)] == []
    assert "format-parity" in [d.rule for d in lint_pack(Hidden(), contract=False)]
