"""An upstream MCP server (the SDK's ``MCPServer``, over stdio) whose tools ask the client: for a
sampled message, a form, a URL visit and its roots; each tool's result says what the client answered."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel

server = MCPServer("lorenz-mcp-asking-upstream")


class Name(BaseModel):
    name: str


@server.tool()
async def sample(topic: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """Ask the client's model for a line about ``topic``."""
    message = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=f"a line on {topic}"))
    try:
        result = await ctx.session.create_message([message], max_tokens=50)
    except MCPError as exc:
        raise ToolError(f"sampling failed: {exc.error.message}") from None
    assert isinstance(result.content, types.TextContent)
    return f"sampled: {result.content.text} ({result.model})"


@server.tool()
async def form(ctx: Context) -> str:  # type: ignore[type-arg]
    """Ask the user their name (and leave a mark at ``$ASKS_CANCELLED`` when cancelled meanwhile)."""
    try:
        answer = await ctx.elicit("What is your name?", Name)
    except anyio.get_cancelled_exc_class():
        if os.environ.get("ASKS_CANCELLED"):
            Path(os.environ["ASKS_CANCELLED"]).write_text("form", encoding="utf-8")  # noqa: ASYNC240
        raise
    return f"form: {answer.action} {answer.data.name if answer.action == 'accept' else ''}".strip()


@server.tool()
async def visit(ctx: Context) -> str:  # type: ignore[type-arg]
    """Send the user to a URL."""
    answer = await ctx.elicit_url("Sign in, please", "https://example.invalid/sign-in", "visit-1")
    return f"visit: {answer.action}"


@server.tool()
async def roots(ctx: Context) -> str:  # type: ignore[type-arg]
    """List the client's roots."""
    listed = await ctx.session.list_roots()
    return "roots: " + ", ".join(str(root.uri) for root in listed.roots)


if __name__ == "__main__":
    server.run("stdio")
