"""The example pack ``lorenz new-pack`` writes, as :class:`string.Template` texts (``$$`` is a literal
``$``): its tools module (a read tool with enrichment, a write tool that asks the user first) and
the tests that drive both through :mod:`lorenz.testing`."""

from __future__ import annotations

TOOLS = '''\
"""The ``${pack}`` pack: typed tools built with :mod:`lorenz.authoring`."""

from __future__ import annotations

from pathlib import Path

from attrs import field, frozen
from lorenz import run_in_thread
from lorenz.authoring import (
    CallContext,
    ErrorContract,
    InputRound,
    Pack,
    Permissions,
    describe,
    elicit,
    hints,
    tool,
)

__all__ = ["PACK"]


@frozen(kw_only=True)
class ${cls}Options:
    """``tools.${pack}`` in WORKFLOW.md."""

    max_length: int = field(
        default=1000,
        metadata=describe("The longest text ${tool} accepts."),
    )
    notes_dir: str = field(
        default="notes",
        metadata=describe("Where ${pack}_save_note writes, relative to WORKFLOW.md."),
    )


@frozen(kw_only=True)
class ReverseArgs:
    text: str = field(metadata=describe("The text to reverse, e.g. 'stressed'."))


@frozen(kw_only=True)
class Reversed:
    text: str = field(metadata=describe("The input, reversed character by character."))
    length: int = field(metadata=describe("The number of characters."))


def render_reversed(result: Reversed) -> str:
    return f"**Reversed:** {result.text}\\n\\n{result.length} characters"


@tool(
    name="${tool}",
    title="Reverse text",
    description="Reverse a text character by character and report its length.",
    annotations=hints(read_only=True, idempotent=True, open_world=False),
    input=ReverseArgs,
    output=Reversed,
    errors=[
        ErrorContract(
            reason="text_too_long",
            when="The text is longer than the configured maximum.",
            recovery="Split the text into shorter parts and reverse each part separately.",
        ),
    ],
    # Context beside the output: a notice, merged into structuredContent and after the text.
    enrichment=True,
    format=render_reversed,
)
async def reverse_text(ctx: CallContext, args: ReverseArgs) -> Reversed:
    options: ${cls}Options = ctx.options
    if len(args.text) > options.max_length:
        message = f"The text has {len(args.text)} characters; the maximum is {options.max_length}."
        raise ctx.fail("text_too_long", message)
    if not args.text:  # not a failure: say why the result is empty
        ctx.enrich.notice("The text is empty: there is nothing to reverse.")
    # Long work reports how far it got (a no-op unless the client asked for progress). A client that
    # cancels raises CancelledError at the next await: clean up in `finally` and let it propagate.
    await ctx.progress(1, 1, "reversed")
    return Reversed(text=args.text[::-1], length=len(args.text))


@frozen(kw_only=True)
class SaveNoteArgs:
    name: str = field(
        metadata=describe(
            "The note's name, lowercase letters, digits and dashes, e.g. 'todo'.",
            pattern="^[a-z0-9][a-z0-9-]*$$",
            maxLength=64,
        )
    )
    text: str = field(metadata=describe("The note's text; replaces any note of that name."))


@frozen(kw_only=True)
class Confirm:
    confirm: bool = field(metadata=describe("Whether to write the note."))


@frozen(kw_only=True)
class SavedNote:
    note: str = field(metadata=describe("The note's file, relative to WORKFLOW.md."))
    saved: bool = field(metadata=describe("false when the user did not confirm: nothing was written."))


def render_saved(result: SavedNote) -> str:
    if result.saved:
        return f"saved: {result.note}"
    return f"not saved: the user did not confirm writing {result.note}"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\\n", encoding="utf-8")


@tool(
    name="${pack}_save_note",
    title="Save note",
    description="Save a note to a file, after the user confirms it; an existing note is replaced.",
    # Replaces a file (destructive); saving the same text again changes nothing more (idempotent).
    annotations=hints(read_only=False, destructive=True, idempotent=True, open_world=False),
    input=SaveNoteArgs,
    output=SavedNote,
    format=render_saved,
    needs_client_input=True,
)
async def save_note(ctx: CallContext, args: SaveNoteArgs) -> SavedNote | InputRound:
    options: ${cls}Options = ctx.options
    note = f"{options.notes_dir}/{args.name}.md"
    answer = ctx.inputs.accepted("confirm", Confirm)
    if answer is None and not ctx.inputs.view("confirm").asked:
        # The handler returns the question; it runs again, same arguments, once the client answered.
        question = elicit(f"Write {note}? It replaces any note of that name.", schema=Confirm)
        return ctx.request_input({"confirm": question})
    if answer is None or not answer.confirm:  # declined, cancelled or "no": write nothing
        return SavedNote(note=note, saved=False)
    # File I/O blocks: run it in a thread counted against this pack, off the event loop.
    await run_in_thread(_write, ctx.settings.base_dir / note, args.text)
    return SavedNote(note=note, saved=True)


PACK = Pack(
    name="${pack}",
    options=${cls}Options,
    tools=[reverse_text, save_note],
    # What the pack may reach when an operator sandboxes it: declare the hosts, paths and
    # environment variables your tools need (network=["api.example.com:443"], env=["API_TOKEN"]).
    permissions=Permissions(),
)
'''

TESTS = '''\
"""The ``${pack}`` pack, tested with the lorenz.testing fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from lorenz.testing import HostFactory, assert_pack_contract

from ${module} import PACK

pytestmark = pytest.mark.anyio

SAVE = "${pack}_save_note"
#: What the test host answers for the client (MCP result shapes, by request name).
YES = {"confirm": {"action": "accept", "content": {"confirm": True}}}
DECLINED = {"confirm": {"action": "decline"}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_pack_keeps_the_contract() -> None:
    """Names, descriptions, schemas, error contracts and format parity pass the lint."""
    assert_pack_contract(PACK)


async def test_reverse_text(lorenz_host: HostFactory) -> None:
    """The result arrives as structuredContent and as the formatted text."""
    host = lorenz_host(PACK)
    outcome = await host.call_tool("${tool}", {"text": "stressed"})
    assert outcome.result.success
    assert outcome.mcp.structured_content == {"text": "desserts", "length": 8}
    assert getattr(outcome.mcp.content[0], "text", "").startswith("**Reversed:** desserts")


async def test_empty_text_carries_a_notice(lorenz_host: HostFactory) -> None:
    """The enrichment notice is merged into structuredContent and mirrored after the text."""
    host = lorenz_host(PACK)
    outcome = await host.call_tool("${tool}", {"text": ""})
    notice = "The text is empty: there is nothing to reverse."
    assert outcome.mcp.structured_content == {"text": "", "length": 0, "notice": notice}
    assert getattr(outcome.mcp.content[0], "text", "").endswith(f"notice: {notice}")


async def test_reverse_text_reports_progress(lorenz_host: HostFactory) -> None:
    """What the tool reports with ctx.progress is recorded by the test host."""
    host = lorenz_host(PACK)
    await host.call("${tool}", {"text": "abc"})
    assert host.progress == [(1, 1, "reversed")]


async def test_too_long_is_a_declared_failure(lorenz_host: HostFactory) -> None:
    """Over the configured maximum, the call fails with the contract's reason and recovery."""
    host = lorenz_host(PACK, options={"${pack}": {"max_length": 3}})
    outcome = await host.call_tool("${tool}", {"text": "stressed"})
    assert outcome.mcp.is_error is True
    assert outcome.mcp.structured_content is not None
    assert outcome.mcp.structured_content["error"]["reason"] == "text_too_long"


async def test_misspelled_argument_is_refused(lorenz_host: HostFactory) -> None:
    """An unknown key is refused by name, not silently dropped."""
    host = lorenz_host(PACK)
    result = await host.call("${tool}", {"txet": "x"})
    assert not result.success
    assert result.error is not None
    assert 'Unrecognized key: "txet"' in result.error


async def test_save_note_writes_once_the_user_confirms(lorenz_host: HostFactory, tmp_path: Path) -> None:
    """The tool asks first, then writes (the test host's workflow lives in tmp_path)."""
    host = lorenz_host(PACK)
    result = await host.call(SAVE, {"name": "todo", "text": "Ship it"}, answers=YES)
    assert result.success
    assert result.result == {"note": "notes/todo.md", "saved": True}
    assert [list(question) for question in host.asked] == [["confirm"]]
    assert (tmp_path / "notes" / "todo.md").read_text(encoding="utf-8") == "Ship it\\n"


async def test_save_note_writes_nothing_when_declined(lorenz_host: HostFactory, tmp_path: Path) -> None:
    """A declined (or cancelled) question writes nothing and says so."""
    host = lorenz_host(PACK)
    result = await host.call(SAVE, {"name": "todo", "text": "Ship it"}, answers=DECLINED)
    assert result.success
    assert result.result == {"note": "notes/todo.md", "saved": False}
    assert not (tmp_path / "notes").exists()


async def test_save_note_needs_a_client_that_can_answer(lorenz_host: HostFactory, tmp_path: Path) -> None:
    """Without a client to ask, the call fails before anything is written."""
    host = lorenz_host(PACK)
    result = await host.call(SAVE, {"name": "todo", "text": "Ship it"})
    assert not result.success
    assert not (tmp_path / "notes").exists()
'''

TESTS_TRACKER = '''

async def test_tracker_mounts_the_pack(lorenz_host: HostFactory) -> None:
    """The tracker mounts the ${pack} pack and hands out its active issues."""
    from ${module} import plugin
    from ${module}.tracker import TRACKER

    host = lorenz_host(plugins=[plugin], tracker=TRACKER)
    assert host.workspace.pack_names() == ["${pack}"]
    issues = await host.workspace.tracker_client().fetch_candidate_issues()
    assert [issue.identifier for issue in issues] == ["${upper}-1"]
'''
