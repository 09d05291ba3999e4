"""A pack whose tools ask the client for input, for ``test_authoring_inputs.py`` (loaded by path;
the stdio test registers it with ``-p input_pack``): a confirm-before-delete tool, a sampling
round, a roots round, and tools that break the rules (re-asking, too many rounds, a malformed request)."""

from __future__ import annotations

from typing import Any

from attrs import field, frozen

from lorenz import hookimpl
from lorenz.authoring import (
    CallContext,
    InputRound,
    Pack,
    Roots,
    SampledMessage,
    create_message,
    describe,
    elicit,
    hints,
    list_roots,
    tool,
    validation_error,
)

#: The boards the delete tool deletes from (tests check what is left).
BOARDS: dict[str, str] = {}


@frozen(kw_only=True)
class Confirm:
    confirm: bool = field(metadata=describe("Whether to delete it."))


@frozen(kw_only=True)
class BoardArgs:
    board: str = field(metadata=describe("The board, e.g. BOARD-3."))


@frozen(kw_only=True)
class Deleted:
    board: str = field(metadata=describe("The board deleted."))


@tool(
    name="boards_delete_board",
    description="Delete a board, after the user confirms.",
    input=BoardArgs,
    output=Deleted,
    annotations=hints(destructive=True),
    needs_client_input=True,
)
async def delete_board(ctx: CallContext, args: BoardArgs) -> Deleted | InputRound:
    answer = ctx.inputs.accepted("confirm", Confirm)
    if answer is None:
        view = ctx.inputs.view("confirm")
        if view.asked:  # declined or cancelled: final
            raise validation_error(f"The user did not confirm deleting {args.board} ({view.action}).")
        return ctx.request_input({"confirm": elicit(f"Delete {args.board}?", schema=Confirm)})
    if not answer.confirm:
        raise validation_error(f"The user chose not to delete {args.board}.")
    BOARDS.pop(args.board, None)
    return Deleted(board=args.board)


@frozen(kw_only=True)
class Summary:
    summary: str = field(metadata=describe("The client's model's summary."))
    model: str = field(metadata=describe("The model that wrote it."))


@tool(name="boards_summarize_board", description="Summarize a board with the client's model.", input=BoardArgs)
async def summarize_board(ctx: CallContext, args: BoardArgs) -> Any:
    sampled = ctx.inputs.accepted("draft", SampledMessage)
    if sampled is None:
        ask = create_message(f"Summarize {args.board}.", max_tokens=50, system_prompt="Be brief.")
        return ctx.request_input({"draft": ask})
    return {"summary": sampled.text, "model": sampled.model}


@frozen(kw_only=True)
class NoArgs:
    pass


@tool(name="boards_list_roots", description="The client's roots.", input=NoArgs, annotations=hints(read_only=True))
async def roots_tool(ctx: CallContext, args: NoArgs) -> Any:
    roots = ctx.inputs.accepted("roots", Roots)
    if roots is None:
        return ctx.request_input({"roots": list_roots()})
    return {"roots": [root.uri for root in roots.roots]}


@tool(name="boards_nag", description="Asks the same question again (a bug).", input=NoArgs)
async def nag(ctx: CallContext, args: NoArgs) -> Any:
    return ctx.request_input({"confirm": elicit("Sure?", schema=Confirm)})


@frozen(kw_only=True)
class Note:
    note: str = field(metadata=describe("A note."))


@tool(name="boards_interview", description="Asks one question per round, forever.", input=NoArgs)
async def interview(ctx: CallContext, args: NoArgs) -> Any:
    asked = len(ctx.inputs.answers)
    return ctx.request_input({f"q{asked}": elicit(f"Question {asked}?", schema=Note)})


@tool(name="boards_ask_badly", description="Asks for a sample in a form MCP cannot carry (a bug).", input=NoArgs)
async def ask_badly(ctx: CallContext, args: NoArgs) -> Any:
    system_turn = {"role": "system", "content": {"type": "text", "text": "Be brief."}}
    return ctx.request_input({"draft": create_message(["Summarize.", system_turn], max_tokens=50)})


PACK = Pack(name="boards", tools=[delete_board, summarize_board, roots_tool, nag, interview, ask_badly])


class _Tracker:
    kind = "boardtracker"

    def create_client(self, settings: Any, context: Any) -> Any:
        raise NotImplementedError

    def default_tool_packs(self, settings: Any) -> list[str]:
        return ["boards"]


@hookimpl
def lorenz_register_tool_packs(register: Any) -> None:
    register(PACK)


@hookimpl
def lorenz_register_trackers(register: Any) -> None:
    register(_Tracker())
