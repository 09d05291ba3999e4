"""The kit's hooks for packs rebuilt on it that must answer as they did before: ``read_arguments``
(the pack's own argument wording), and the ``json_schema`` / ``omit_none`` field metadata (records
kept as wire dicts, keys left out when they have no value), behind the real MCP host."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attrs import field, frozen
from jsonschema import Draft202012Validator

from lorenz import ArgumentError, ToolResult, as_arguments, tool_failure
from lorenz.authoring import CallContext, Pack, describe, tool
from lorenz.testing import PackHost, make_pack_host

pytestmark = pytest.mark.anyio

RECORD = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "author": {"type": "string"}},
    "required": ["id"],
}


@frozen(kw_only=True)
class NoteArgs:
    note_id: str = field(metadata=describe("Note id."))


@frozen(kw_only=True)
class Saved:
    ok: bool = field(metadata=describe("Always true."))
    note: dict[str, str] | None = field(
        default=None, metadata=describe("The saved note, when known.", json_schema=RECORD, omit_none=True)
    )


def read(raw: Any) -> NoteArgs | ToolResult:
    """Before the kit, the pack said ``'noteId' is required`` in a bare ``{"error": {"message"}}``."""
    args = as_arguments(raw)
    value = args.get("noteId")
    if value == "boom":
        raise ArgumentError("noteId: must not be boom")
    if value == "crash":
        raise RuntimeError("the reader broke")
    if not isinstance(value, str) or not value.strip():
        return tool_failure("'noteId' is required")
    return NoteArgs(note_id=value)


@tool(name="notes_save_note", description="Save a note.", input=NoteArgs, output=Saved, read_arguments=read)
async def save_note(ctx: CallContext, args: NoteArgs) -> Saved:
    return Saved(ok=True, note=None if args.note_id == "quiet" else {"id": args.note_id})


@pytest.fixture
def host(tmp_path: Path) -> PackHost:
    return make_pack_host(Pack(name="notes", tools=[save_note]), base_dir=tmp_path)


async def test_read_arguments_builds_the_input(host: PackHost) -> None:
    result = await host.call("notes_save_note", {"noteId": "n1"})
    assert result.success and result.result == {"ok": True, "note": {"id": "n1"}}


@pytest.mark.parametrize("raw", [{}, {"noteId": "  "}, {"noteId": 3}, None])
async def test_read_arguments_failure_is_returned_as_the_pack_words_it(host: PackHost, raw: Any) -> None:
    """No ``invalid arguments for tool`` prefix and no reason: the pack's own result, verbatim."""
    result = await save_note.run(raw, _context(host))
    assert result.to_dict() == {
        "success": False,
        "error": "'noteId' is required",
        "result": {"error": {"message": "'noteId' is required"}},
    }


async def test_read_arguments_errors_are_failures_not_exceptions(host: PackHost) -> None:
    refused = await save_note.run({"noteId": "boom"}, _context(host))
    broken = await save_note.run({"noteId": "crash"}, _context(host))
    assert refused.error == "invalid arguments for tool notes_save_note: noteId: must not be boom"
    assert refused.result["error"]["reason"] == "invalid_arguments"
    assert broken.error == "Reading the arguments failed: the reader broke"
    assert broken.result["error"]["reason"] == "internal_error"


def test_json_schema_and_omit_none_shape_the_output_schema() -> None:
    schema = save_note.output_schema
    assert schema is not None
    assert schema["properties"]["note"] == {**RECORD, "description": "The saved note, when known."}
    assert schema["anyOf"][0]["required"] == ["ok"]


async def test_omit_none_leaves_the_key_out_and_the_host_accepts_it(host: PackHost) -> None:
    """Over MCP the result without the key validates against the advertised outputSchema (the host
    would turn a mismatch into an error)."""
    quiet = await host.call_mcp("notes_save_note", {"noteId": "quiet"})
    loud = await host.call_mcp("notes_save_note", {"noteId": "n2"})
    assert quiet.is_error is False and quiet.structured_content == {"ok": True}
    assert '"note"' not in quiet.content[0].text
    assert loud.structured_content == {"ok": True, "note": {"id": "n2"}}
    for result in (quiet, loud):
        Draft202012Validator(save_note.output_schema).validate(result.structured_content)


def _context(host: PackHost) -> CallContext:
    import httpx

    return CallContext(settings=host.settings, http=httpx.AsyncClient(), options={}, tool=save_note)
