"""Regenerate the upstream servers' tool lists the search benchmark uses, from the real servers.

    python bench/tool_search_fixtures/fetch.py everything npx -y @modelcontextprotocol/server-everything
    python bench/tool_search_fixtures/fetch.py time /tmp/time-venv/bin/mcp-server-time

writes ``bench/tool_search_fixtures/<name>.json``: the ``tools/list`` answer as MCP wire tools.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import mcp
from mcp import StdioServerParameters


async def _tools(command: list[str]) -> list[dict[str, object]]:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with mcp.Client(params) as client:
        listed = await client.list_tools()
    return [tool.model_dump(by_alias=True, exclude_none=True, mode="json") for tool in listed.tools]


def main() -> None:
    name, *command = sys.argv[1:]
    tools = anyio.run(_tools, command)
    out = Path(__file__).with_name(f"{name}.json")
    out.write_text(json.dumps(tools, indent=2, sort_keys=True) + "\n")
    print(f"{out}: {len(tools)} tools")


if __name__ == "__main__":
    main()
