"""A pack whose tools ask their client for input, for ``tests/test_cli_answers.py`` (``lorenz -p
tests/asking_pack.py call ...``): a confirmation, a form of every field kind, a URL, roots, a model's
completion, and a tool that reports its progress until the test lets it finish."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, Literal

from attrs import field, frozen

from lorenz import hookimpl
from lorenz.authoring import (
    CallContext,
    Pack,
    Roots,
    SampledMessage,
    create_message,
    describe,
    elicit,
    elicit_url,
    list_roots,
    tool,
)


@frozen(kw_only=True)
class NoArgs:
    pass


@frozen(kw_only=True)
class Confirm:
    confirm: bool = field(metadata=describe("Whether to go ahead."))


@frozen(kw_only=True)
class Details:
    title: str = field(metadata=describe("The ticket's title."))
    count: int = field(default=3, metadata=describe("How many copies.", minimum=1, maximum=10))
    colour: Literal["red", "green", "blue"] = field(default="green", metadata=describe("The label's colour."))
    urgent: bool = field(default=False, metadata=describe("Whether it is urgent."))
    note: str | None = field(default=None, metadata=describe("Anything else."))


def _view(ctx: CallContext, name: str) -> dict[str, Any]:
    view = ctx.inputs.view(name)
    return {"action": view.action, "content": view.content}


@tool(name="asking_confirm", description="Ask for a yes, and say what came back.", input=NoArgs)
async def confirm(ctx: CallContext, args: NoArgs) -> Any:
    if "confirm" not in ctx.inputs:
        return ctx.request_input({"confirm": elicit("Go ahead?", schema=Confirm)})
    return _view(ctx, "confirm")


@tool(name="asking_details", description="Ask for a ticket's details, and say what came back.", input=NoArgs)
async def details(ctx: CallContext, args: NoArgs) -> Any:
    if "details" not in ctx.inputs:
        return ctx.request_input({"details": elicit("Describe the ticket.", schema=Details)})
    return _view(ctx, "details")


@tool(name="asking_sign_in", description="Send the user to a page.", input=NoArgs)
async def sign_in(ctx: CallContext, args: NoArgs) -> Any:
    if "sign_in" not in ctx.inputs:
        return ctx.request_input({"sign_in": elicit_url("Sign in to Acme.", "https://acme.test/login")})
    return _view(ctx, "sign_in")


@tool(name="asking_roots", description="The client's roots.", input=NoArgs)
async def roots(ctx: CallContext, args: NoArgs) -> Any:
    found = ctx.inputs.accepted("roots", Roots)
    if found is None:
        return ctx.request_input({"roots": list_roots()})
    return {"roots": [root.uri for root in found.roots]}


@tool(name="asking_draft", description="Ask the client's model for a draft.", input=NoArgs)
async def draft(ctx: CallContext, args: NoArgs) -> Any:
    if "draft" not in ctx.inputs:
        return ctx.request_input({"draft": create_message("Write a haiku.", max_tokens=40)})
    sampled = ctx.inputs.accepted("draft", SampledMessage)
    return {"action": ctx.inputs.view("draft").action, "text": sampled.text if sampled else None}


@tool(name="asking_steps", description="Report progress until $ASKING_GO exists.", input=NoArgs)
async def steps(ctx: CallContext, args: NoArgs) -> Any:
    await ctx.progress(2, 5, "indexing\x1b[31m pages")
    go = Path(os.environ["ASKING_GO"])
    for _ in range(600):  # at most 30 s, then the test has failed anyway
        if await asyncio.to_thread(go.exists):
            break
        await asyncio.sleep(0.05)
    return {"done": True}


PACK = Pack(name="asking", tools=[confirm, details, sign_in, roots, draft, steps])


@hookimpl
def lorenz_register_tool_packs(register: Any) -> None:
    register(PACK)
