"""The ``template_pack`` pack: typed tools built with :mod:`lorenz.authoring`."""

from __future__ import annotations

from pathlib import Path

from attrs import field, frozen
from lorenz import Settings, run_in_thread
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
class TemplatePackOptions:
    """``tools.template_pack`` in WORKFLOW.md."""

    max_length: int = field(
        default=1000,
        metadata=describe("The longest text template_pack_reverse_text accepts."),
    )
    notes_dir: str = field(
        default="notes",
        metadata=describe("Where template_pack_save_note writes, relative to WORKFLOW.md."),
    )


@frozen(kw_only=True)
class ReverseArgs:
    text: str = field(metadata=describe("The text to reverse, e.g. 'stressed'."))


@frozen(kw_only=True)
class Reversed:
    text: str = field(metadata=describe("The input, reversed character by character."))
    length: int = field(metadata=describe("The number of characters."))


def render_reversed(result: Reversed) -> str:
    return f"**Reversed:** {result.text}\n\n{result.length} characters"


@tool(
    name="template_pack_reverse_text",
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
    options: TemplatePackOptions = ctx.options
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
            pattern="^[a-z0-9][a-z0-9-]*$",
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
    path.write_text(text + "\n", encoding="utf-8")


@tool(
    name="template_pack_save_note",
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
    options: TemplatePackOptions = ctx.options
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


def permissions(settings: Settings) -> Permissions:
    """What the pack may reach when an operator sandboxes it: the notes' directory (notes_dir),
    where the save tool writes, and nothing else. Declare the hosts, paths and environment
    variables your tools need (network=["api.example.com:443"], env=["API_TOKEN"])."""
    raw = (settings.tool_options or {}).get(PACK.name)
    options: TemplatePackOptions = PACK.parse_options(raw)
    return Permissions(write=[str(settings.base_dir / options.notes_dir)])


PACK = Pack(
    name="template_pack",
    options=TemplatePackOptions,
    tools=[reverse_text, save_note],
    permissions=permissions,  # computed from the options: where the notes go
)
