"""A remote upstream answering ``503`` (``Retry-After: 0``): the requests that are safe to send twice
(listings, ``resources/read``, a ``tools/call`` of an idempotent tool) are retried under the host's
retry policy; a call of any other tool gets the error. The SDK's ``MCPServer`` over Streamable HTTP
behind a flaky front, driven through ``lorenz serve`` with the official SDK client."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import anyio
import mcp
import pytest
from mcp.server.mcpserver import MCPServer
from mcp_types import TextResourceContents, ToolAnnotations

from lorenz.testing import loopback_server

pytestmark = pytest.mark.slow


class Flaky:
    """An ASGI front answering ``503`` to the first requests of each armed kind, then passing on."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.failures: Counter[str] = Counter()
        self.seen: Counter[str] = Counter()
        self.lock = threading.Lock()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = b""
        more = True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        request = json.loads(body)
        kind = request.get("method", "")
        if kind == "tools/call":
            kind += " " + request["params"]["name"]
        with self.lock:
            self.seen[kind] += 1
            fail = self.failures[kind] > 0
            if fail:
                self.failures[kind] -= 1
        if fail:
            headers = [(b"content-type", b"text/plain"), (b"retry-after", b"0")]
            await send({"type": "http.response.start", "status": 503, "headers": headers})
            await send({"type": "http.response.body", "body": b"busy"})
            return
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _upstream() -> Flaky:
    server = MCPServer("lorenz-mcp-flaky-upstream")

    @server.tool(annotations=ToolAnnotations(idempotent_hint=True))
    def lookup(key: str) -> str:
        """Look a key up (idempotent)."""
        return f"value of {key}"

    @server.tool()
    def append(item: str) -> str:
        """Append an item (not idempotent)."""
        return f"appended {item}"

    @server.resource("flaky://status", name="status")
    def status() -> str:
        return "up"

    return Flaky(server.streamable_http_app())


@pytest.fixture
def flaky() -> Iterator[tuple[Flaky, str]]:
    app = _upstream()
    app.failures["tools/list"] = 2  # the start itself is retried
    with loopback_server(app) as server:
        yield app, f"{server.base_url}/mcp"


def test_idempotent_requests_are_retried_and_others_are_not(flaky: tuple[Flaky, str], serve: Any) -> None:
    app, url = flaky
    served = serve(f"tools:\n  vendor: {json.dumps({'provider': 'mcp', 'url': url})}\n")
    served.until_listed({"lookup", "append"})

    async def scenario() -> None:
        async with mcp.Client(served.url) as client:
            assert {tool.name for tool in (await client.list_tools()).tools} == {"lookup", "append"}
            app.failures.update({"tools/call lookup": 2, "tools/call append": 1, "resources/read": 2})
            looked = await client.call_tool("lookup", {"key": "k"})
            assert looked.is_error is False and "value of k" in looked.content[0].text  # type: ignore[union-attr]
            (content,) = (await client.read_resource("flaky://status")).contents
            assert isinstance(content, TextResourceContents) and content.text == "up"
            appended = await client.call_tool("append", {"item": "x"})
            assert appended.is_error is True

    anyio.run(scenario)
    assert app.seen["tools/list"] >= 3
    assert app.seen["tools/call lookup"] == 3 and app.seen["resources/read"] == 3
    assert app.seen["tools/call append"] == 1
    served.until_stderr("answered 503 to tools/call lookup; retrying in 0 s")
