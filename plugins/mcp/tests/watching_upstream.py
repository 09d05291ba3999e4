"""An upstream MCP server (the SDK's ``MCPServer``, over stdio) with subscribable resources,
completions and log messages: ``memo://note`` may be subscribed to and ``touch`` says it changed;
the template ``memo://notes/{name}`` and the prompt ``greet`` complete their ``name``; ``chatty``
logs at three levels and says which level it was last set to (``logging/setLevel``); ``ask_later``
asks the client for its roots once its own call is over; ``grow`` adds a resource and a prompt."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError

server = MCPServer("lorenz-mcp-watching-upstream")
NAMES = ["Ada", "Alan", "Grace"]
#: What the host asked of it: the URIs it watches, and the log level it was set to.
watched: set[str] = set()
level: list[str] = []
tasks: list[asyncio.Task[None]] = []


@server.resource("memo://note", mime_type="text/plain")
def note() -> str:
    """A note that changes."""
    return "a note"


@server.resource("memo://notes/{name}", mime_type="text/plain")
def named(name: str) -> str:
    """Someone's note."""
    return f"{name}'s note"


@server.prompt()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}!"


@server.completion()
async def complete(ref: Any, argument: types.CompletionArgument, context: Any) -> types.Completion:
    prefix = (context.arguments or {}).get("prefix", "") if context is not None else ""
    values = [name for name in NAMES if name.startswith(prefix + argument.value)]
    return types.Completion(values=values, total=len(values), has_more=False)


@server.tool()
async def touch(ctx: Context) -> str:  # type: ignore[type-arg]
    """Change the note (subscribers are told)."""
    if "memo://note" in watched:
        await ctx.session.send_resource_updated("memo://note")  # type: ignore[arg-type]
    return "watched: " + ", ".join(sorted(watched))


@server.tool()
async def chatty(ctx: Context) -> str:  # type: ignore[type-arg]
    """Log a debug, an info and a warning line."""
    await ctx.debug("a debug line", logger_name="chatty")
    await ctx.info("an info line", logger_name="chatty")
    await ctx.warning("a warning line", logger_name="chatty")
    return "level: " + (level[-1] if level else "never set")


@server.tool()
async def grow(ctx: Context) -> str:  # type: ignore[type-arg]
    """Add a resource and a prompt, and say the lists changed."""

    def fresh() -> str:
        return "fresh"

    def farewell(name: str) -> str:
        return f"Goodbye, {name}!"

    server.resource("memo://fresh", mime_type="text/plain")(fresh)
    server.prompt()(farewell)
    await ctx.session.send_resource_list_changed()
    await ctx.session.send_prompt_list_changed()
    return "grown"


@server.tool()
async def ask_later(gate: str, out: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """Once ``gate`` exists (this call long over), ask the client for its roots; write what came
    back to ``out``."""
    session = ctx.session

    async def later() -> None:
        while not os.path.exists(gate):  # noqa: ASYNC110, ASYNC240
            await anyio.sleep(0.02)
        try:
            listed = await session.list_roots()
            said = "roots: " + ", ".join(str(root.uri) for root in listed.roots)
        except MCPError as exc:
            said = f"declined: {exc.error.message}"
        Path(out).write_text(said, encoding="utf-8")  # noqa: ASYNC240

    tasks.append(asyncio.get_running_loop().create_task(later()))
    return "armed"


async def _subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
    watched.add(str(params.uri))
    return types.EmptyResult()


async def _unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    watched.discard(str(params.uri))
    return types.EmptyResult()


async def _set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    level.append(params.level)
    return types.EmptyResult()


lowlevel = server._lowlevel_server  # what MCPServer has no decorator for
lowlevel.add_request_handler("resources/subscribe", types.SubscribeRequestParams, _subscribe)
lowlevel.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, _unsubscribe)
lowlevel.add_request_handler("logging/setLevel", types.SetLevelRequestParams, _set_level)

if __name__ == "__main__":
    server.run("stdio")
