"""A typed pack behind the real MCP host: tools/list, the text rendering, strict arguments over the
wire, error results against the widened outputSchema, and disabled tools on the landing page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attrs import field, frozen
from jsonschema import Draft202012Validator

from lorenz.authoring import CallContext, ErrorContract, Pack, describe, disabled, hints, tool
from lorenz.host.ops.pages import render_landing
from lorenz.host.reload.live import LiveWorkspace
from lorenz.testing import PackHost, make_pack_host

pytestmark = pytest.mark.anyio


@frozen(kw_only=True)
class NoteArgs:
    title: str = field(metadata=describe("Note title."))


@frozen(kw_only=True)
class Note:
    title: str = field(metadata=describe("Note title."))
    words: int = field(metadata=describe("Words in the title."))


@tool(
    name="notes_read_note",
    description="Read a note.",
    input=NoteArgs,
    output=Note,
    annotations=hints(read_only=True),
    errors=[ErrorContract(reason="not_found", when="No such note.", recovery="List the notes and pick a title.")],
    format=lambda note: f"## {note.title}\n\n{note.words} words",
)
async def read_note(ctx: CallContext, args: NoteArgs) -> Note:
    if args.title == "missing":
        raise ctx.fail("not_found")
    return Note(title=args.title, words=len(args.title.split()))


@tool(name="notes_delete_note", description="Delete a note.", input=NoteArgs, annotations=hints(destructive=True))
async def delete_note(ctx: CallContext, args: NoteArgs) -> dict[str, Any]:
    return {"deleted": args.title}


@frozen(kw_only=True)
class NotesOptions:
    deletes: bool = False


PACK = Pack(
    name="notes",
    options=NotesOptions,
    tools=[
        read_note,
        disabled(
            delete_note,
            reason="Deleting is off <here>.",
            hint="tools.notes.deletes: true",
            since="0.2",
            unless=lambda options: options.deletes,
        ),
    ],
)


@pytest.fixture
def host(tmp_path: Path) -> PackHost:
    return make_pack_host(PACK, base_dir=tmp_path)


async def test_tools_list_leaves_out_disabled_tools(host: PackHost) -> None:
    """tools/list carries the typed tool with its generated schemas and not the disabled one."""
    (listed,) = await host.list_tools()
    assert listed.name == "notes_read_note"
    assert listed.input_schema["additionalProperties"] is False
    assert listed.output_schema == read_note.output_schema


async def test_calls_to_disabled_tools_are_refused(host: PackHost) -> None:
    """Calling a disabled tool over MCP is an error result with the pack's reason and hint, and the
    handler never runs."""
    result = await host.call_mcp("notes_delete_note", {"title": "x"})
    assert result.is_error is True
    assert result.structured_content is not None
    assert result.structured_content["error"]["message"] == (
        'Tool "notes_delete_note" is disabled: Deleting is off <here>. To enable it: tools.notes.deletes: true'
    )
    assert result.structured_content["error"]["reason"] == "tool_disabled"


async def test_text_is_the_tools_format(host: PackHost) -> None:
    """The content text is the tool's own markdown; structuredContent is the output."""
    result = await host.call_mcp("notes_read_note", {"title": "two words"})
    assert result.content[0].text == "## two words\n\n2 words"
    assert result.structured_content == {"title": "two words", "words": 2}


async def test_unknown_key_refused_by_name_over_mcp(host: PackHost) -> None:
    """Over MCP too, a misspelled key is refused by name (the pack validates, not the host)."""
    result = await host.call_mcp("notes_read_note", {"titel": "x"})
    assert result.is_error is True
    assert result.content[0].text.startswith(
        'Error: invalid arguments for tool notes_read_note: Unrecognized key: "titel"'
    )


async def test_error_result_fits_the_advertised_output_schema(host: PackHost) -> None:
    """A declared failure's structuredContent validates against the widened outputSchema."""
    result = await host.call_mcp("notes_read_note", {"title": "missing"})
    assert result.is_error is True
    assert result.structured_content["error"]["reason"] == "not_found"
    assert "Recovery: List the notes and pick a title." in result.content[0].text
    Draft202012Validator(read_note.output_schema).validate(result.structured_content)


def test_landing_page_shows_disabled_tools_muted(host: PackHost) -> None:
    """The landing page lists a disabled tool as a muted card with its reason, since and hint, escaped."""
    snapshot = LiveWorkspace(host.workspace, reload=False).snapshot()
    page = render_landing(snapshot, "http://127.0.0.1:1/mcp")
    card = page.split('<section class="tool disabled" id="tool-notes_delete_note">', 1)[1].split("</section>", 1)[0]
    assert "Disabled. Deleting is off &lt;here&gt;. (since 0.2)" in card
    assert "<pre>tools.notes.deletes: true</pre>" in card
    assert '<section class="tool" id="tool-notes_read_note">' in page


async def test_enabling_option_lists_the_tool(tmp_path: Path) -> None:
    """With the enabling option the tool is listed, callable, and no longer on the page as disabled."""
    host = make_pack_host(PACK, options={"notes": {"deletes": True}}, base_dir=tmp_path)
    assert [tool.name for tool in await host.list_tools()] == ["notes_read_note", "notes_delete_note"]
    assert (await host.call_mcp("notes_delete_note", {"title": "x"})).structured_content == {"deleted": "x"}
    page = render_landing(LiveWorkspace(host.workspace, reload=False).snapshot(), "http://x/mcp")
    assert "tool disabled" not in page
