"""The kit's one set of hooks for a pack moved onto it that must answer in its own words: an argument
reader (``read_arguments``) worded by ``argument_errors``, a field's own schema and ``omit_none``
(``describe``), some built-in enrichment only, and the lint following ``typed_pack()``; behind the
real MCP host where the client sees it."""

from __future__ import annotations

import sys
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from attrs import field, frozen
from jsonschema import Draft202012Validator

from lorenz import ArgumentError, Settings, ToolContext, ToolResult, require_str, tool_failure
from lorenz.authoring import CallContext, Pack, ToolFailure, describe, tool
from lorenz.authoring.lint import lint_pack
from lorenz.testing import PackHost, make_pack_host

pytestmark = pytest.mark.anyio

RECORD = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "author": {"type": "string"}},
    "required": ["id"],
}


@frozen(kw_only=True)
class NoteArgs:
    noteId: str = field(metadata=describe("Note id."))
    note: str | None = field(default=None, metadata=describe("A note.", schema={"type": "string"}))


@frozen(kw_only=True)
class Saved:
    ok: bool = field(metadata=describe("Always true."))
    note: dict[str, str] | None = field(
        default=None, metadata=describe("The saved note, when known.", schema=RECORD, omit_none=True)
    )
    total: int = field(default=1, metadata=describe("How many notes were saved."))


def read(ctx: CallContext, raw: Mapping[str, Any]) -> NoteArgs:
    """Checks in the pack's own order and words; a ``ToolFailure`` for a refusal with its own reason."""
    value = require_str(raw, "noteId")  # ArgumentError("'noteId' is required")
    if value == "locked":
        raise ToolFailure("note locked is read-only", reason="forbidden", retryable=False, recovery=None, details={})
    if value == "crash":
        raise RuntimeError("the reader broke")
    return NoteArgs(noteId=value, note=raw.get("note"))


def as_before(raw: Any, exc: ArgumentError) -> ToolResult | None:
    """The bare message in ``{"error": {"message"}}``, except for ``keep`` (the kit's wording)."""
    return None if isinstance(raw, dict) and raw.get("keep") else tool_failure(str(exc))


@tool(
    name="notes_save_note",
    description="Save a note.",
    input=NoteArgs,
    output=Saved,
    read_arguments=read,
    argument_errors=as_before,
    enrichment=("echo", "notice"),
)
async def save_note(ctx: CallContext, args: NoteArgs) -> Saved:
    ctx.enrich.echo(args.noteId)
    return Saved(ok=True, note=None if args.noteId == "quiet" else {"id": args.noteId})


@tool(name="notes_plain", description="Read a note.", input=NoteArgs, output=Saved, read_arguments=read)
async def plain(ctx: CallContext, args: NoteArgs) -> Saved:
    return Saved(ok=True)


@pytest.fixture
def host(tmp_path: Path) -> PackHost:
    return make_pack_host(Pack(name="notes", tools=[save_note, plain]), base_dir=tmp_path)


def _context(host: PackHost, which: Any = save_note) -> CallContext:
    return CallContext(settings=host.settings, http=httpx.AsyncClient(), options={}, tool=which)


async def test_the_reader_builds_the_input(host: PackHost) -> None:
    result = await host.call("notes_save_note", {"noteId": "n1"})
    assert result.success and result.result == {"ok": True, "note": {"id": "n1"}, "total": 1, "echo": "n1"}


@pytest.mark.parametrize("raw", [{}, {"noteId": "  "}, {"noteId": 3}, None])
async def test_argument_errors_words_the_readers_refusal(host: PackHost, raw: Any) -> None:
    """No ``invalid arguments for tool`` prefix and no reason: the pack's own result, verbatim."""
    result = await save_note.run(raw, _context(host))
    assert result.to_dict() == {
        "success": False,
        "error": "'noteId' is required",
        "result": {"error": {"message": "'noteId' is required"}},
    }


async def test_without_a_wording_the_refusal_is_the_kits(host: PackHost) -> None:
    kept = await save_note.run({"keep": True}, _context(host))
    default = await plain.run({}, _context(host, plain))
    for result, name in ((kept, "notes_save_note"), (default, "notes_plain")):
        assert result.error == f"invalid arguments for tool {name}: 'noteId' is required"
        assert result.result["error"]["reason"] == "invalid_arguments"


async def test_a_readers_tool_failure_and_crash_are_failures_not_exceptions(host: PackHost) -> None:
    locked = await save_note.run({"noteId": "locked"}, _context(host))
    broken = await save_note.run({"noteId": "crash"}, _context(host))
    assert locked.error == "note locked is read-only" and locked.result["error"]["reason"] == "forbidden"
    assert broken.error == "Reading the arguments failed: the reader broke"
    assert broken.result["error"]["reason"] == "internal_error"


def test_a_field_schema_replaces_the_typed_one_without_a_default() -> None:
    assert save_note.input_schema["properties"]["note"] == {"type": "string", "description": "A note."}
    out = save_note.output_schema
    assert out is not None
    assert out["properties"]["note"] == {**RECORD, "description": "The saved note, when known."}
    assert "note" not in out["anyOf"][0].get("required", [])


def test_enrichment_can_name_some_builtins_only() -> None:
    assert save_note.output_schema is not None
    properties = save_note.output_schema["properties"]
    assert "echo" in properties and "notice" in properties
    assert properties["total"]["description"] == "How many notes were saved."  # the output's own field
    with pytest.raises(ValueError, match="'totals' not built-in enrichment fields"):
        tool(name="notes_bad", description="x", input=NoteArgs, output=Saved, enrichment=("totals",))(plain.handler)


async def test_omit_none_leaves_the_key_out_and_the_client_accepts_it(host: PackHost) -> None:
    """Over MCP the result without the key validates against the advertised outputSchema (the host
    would turn a mismatch into an error)."""
    quiet = await host.call_mcp("notes_save_note", {"noteId": "quiet"})
    loud = await host.call_mcp("notes_save_note", {"noteId": "n2"})
    assert quiet.is_error is False and quiet.structured_content == {"ok": True, "total": 1, "echo": "quiet"}
    assert '"note"' not in quiet.content[0].text
    assert loud.structured_content == {"ok": True, "note": {"id": "n2"}, "total": 1, "echo": "n2"}
    for result in (quiet, loud):
        Draft202012Validator(save_note.output_schema).validate(result.structured_content)


class Deferred:
    """A plain provider whose typed pack loads on demand."""

    name = "notes"

    def tool_specs(self, settings: Settings) -> list[Any]:
        return [save_note.spec()]

    def typed_pack(self) -> Pack:
        return Pack(name="notes", tools=[save_note])

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> Any:
        return await self.typed_pack().execute_tool(name, input, context)


def test_the_lint_checks_the_typed_pack_behind_a_provider() -> None:
    @tool(name="notes_save_note", description="Save.", input=NoteArgs, output=Saved, format=lambda out: "nothing")
    async def silent(ctx: CallContext, args: NoteArgs) -> Saved:
        return Saved(ok=True)

    class Hidden(Deferred):
        def typed_pack(self) -> Pack:
            return Pack(name="notes", tools=[silent])

    assert [d.rule for d in lint_pack(Deferred(), contract=False)] == []
    assert "format-parity" in [d.rule for d in lint_pack(Hidden(), contract=False)]


async def test_the_guides_snippet_answers_in_its_own_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    guide = (Path(__file__).parents[1] / "docs" / "writing-a-pack.md").read_text(encoding="utf-8")
    section = guide.split("### Moving a published tool to the kit, answers and all\n", 1)[1].split("\n## ", 1)[0]
    (code,) = [part.split("```", 1)[0] for part in section.split("```python\n")[1:]]
    module = types.ModuleType("guide_snippet")  # registered: the kit resolves the field types by module
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(code, "writing-a-pack.md", "exec"), module.__dict__)
    comment = module.comment
    host = make_pack_host(Pack(name="acme", tools=[comment]), base_dir=tmp_path)
    refused = await host.call("acme_comment", {"issueId": "ACME-1", "body": "hi"})
    assert refused.to_dict()["result"] == {"error": {"message": "issueId must be in '<project>:<number>' form"}}
    assert comment.output_schema["properties"]["comment"]["required"] == ["id"]
