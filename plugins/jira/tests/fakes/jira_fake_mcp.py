"""A loopback fake of a remote Jira MCP server, built with the official MCP SDK.

Stateful Streamable HTTP (``initialize`` → ``Mcp-Session-Id``), SSE or JSON replies. Emulates the
default Atlassian-style tools (renamable), checks the bearer token and records every HTTP request
(headers and JSON-RPC method) and every tool call. ``script(tool, reply)`` queues canned replies:
a ``str`` (text content), any JSON value, ``RpcError(message)`` (a JSON-RPC error) or
``ToolError(text)`` (a result with ``isError``); ``http_replies`` queues raw HTTP answers to the
next POSTs (e.g. ``429`` with ``Retry-After: 0``). ``strict[tool] = {keys}`` answers
``Error: <key> is not accepted`` unless the issue reference uses one of those keys.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from attrs import define
from jira_fake_rest import CREATED, adf
from mcp import types
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

TOKEN = "mcp-token"
DEFAULT_TOOLS = (
    "jira_search",
    "jira_get_issue",
    "jira_transition_issue",
    "jira_get_comments",
    "jira_add_comment",
    "jira_update_comment",
    "jira_create_issue",
)
_REFS = ("issue_key", "issueKey", "issueIdOrKey", "issueId", "key")


@define
class RpcError:
    message: str


@define
class ToolError:
    text: str


@define
class HttpRequest:
    method: str
    headers: dict[str, str]
    rpc_method: str | None


def jira_issue(
    key: str = "ENG-1", *, status: str = "To Do", category: str = "new", summary: str = "Fix login"
) -> dict[str, Any]:
    """An issue as Jira's REST API (and most Jira MCP servers) return it."""
    return {
        "id": "10001",
        "key": key,
        "fields": {
            "summary": summary,
            "description": adf("Fix the thing"),
            "status": {"name": status, "statusCategory": {"key": category}},
            "labels": ["Lorenz:Backend"],
            "issuelinks": [],
            "assignee": {"accountId": "account-1"},
            "priority": {"name": "High"},
            "created": CREATED,
            "updated": CREATED,
        },
    }


def jira_comment(comment_id: str = "comment-1", text: str = "## Codex Workpad") -> dict[str, Any]:
    return {
        "id": comment_id,
        "body": adf(text),
        "author": {"accountId": "account-1"},
        "created": CREATED,
        "updated": CREATED,
        "self": f"https://example.atlassian.net/rest/api/3/issue/10001/comment/{comment_id}",
    }


class FakeJiraMcp:
    """The fake server; ``url`` is set once it listens."""

    def __init__(self, *, json_response: bool = False, stateless: bool = False) -> None:
        self.url = ""
        self.json_response = json_response
        self.stateless = stateless
        self.reset()
        self._server: Server[Any] = Server("fake-jira-mcp", on_list_tools=self._list_tools, on_call_tool=self._call)
        self.app = self._build_app()

    def reset(self) -> None:
        self.token = TOKEN
        self.issues: dict[str, dict[str, Any]] = {"ENG-1": jira_issue()}
        self.comments: list[dict[str, Any]] = [jira_comment()]
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.http: list[HttpRequest] = []
        self.scripts: dict[str, list[Any]] = {}
        self.strict: dict[str, set[str]] = {}
        self.http_replies: list[tuple[int, dict[str, str], bytes]] = []

    def script(self, tool: str, *replies: Any) -> None:
        self.scripts.setdefault(tool, []).extend(replies)

    # -- MCP ------------------------------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[types.Tool(name=name, input_schema={"type": "object"}) for name in DEFAULT_TOOLS]
        )

    async def _call(self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        args = dict(params.arguments or {})
        self.calls.append((params.name, args))
        queue = self.scripts.get(params.name)
        reply = queue.pop(0) if queue else self._default(params.name, args)
        if isinstance(reply, RpcError):
            raise MCPError(code=-32000, message=reply.message)
        if isinstance(reply, ToolError):
            return types.CallToolResult(content=[types.TextContent(text=reply.text)], is_error=True)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return types.CallToolResult(content=[types.TextContent(text=text)])

    def _default(self, name: str, args: dict[str, Any]) -> Any:
        accepted = self.strict.get(name)
        if accepted is not None:
            for key in _REFS:
                if key in args and key not in accepted:
                    return f"Error: {key} is not accepted"
        ref = str(next((args[k] for k in _REFS if k in args), None))
        if "transition" in name:
            issue = self.issues[ref]
            issue["fields"]["status"] = {"name": args["status"], "statusCategory": {"key": "indeterminate"}}
            return {"issue": issue}
        if "comment" in name and "update" in name:
            text = str(args.get("comment") or args.get("body"))
            return {"comment": jira_comment(str(args.get("comment_id") or args.get("commentId")), text)}
        if "comment" in name and "add" in name:
            comment_id = str(10000 + len(self.comments))
            self.comments.append(jira_comment(comment_id, str(args.get("comment") or args.get("body"))))
            return f"Comment added. ID: {comment_id}"
        if "comment" in name:
            return {"comments": self.comments}
        if "create" in name:
            issue = jira_issue(f"ENG-{len(self.issues) + 1}", summary=str(args["summary"]))
            self.issues[issue["key"]] = issue
            return {"issue": issue}
        if "search" in name:
            return {"issues": list(self.issues.values())}
        if "issue" in name:
            found = self.issues.get(ref)
            return {"issue": found} if found else ToolError(f"Issue {ref} does not exist")
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {name}")

    # -- HTTP -----------------------------------------------------------------------------------

    def _build_app(self) -> Starlette:
        manager = StreamableHTTPSessionManager(
            app=self._server, json_response=self.json_response, stateless=self.stateless
        )

        @contextlib.asynccontextmanager
        async def lifespan(_app: Starlette) -> AsyncIterator[None]:
            async with manager.run():
                yield

        guarded = _Guarded(self, StreamableHTTPASGIApp(manager))
        return Starlette(routes=[Route("/mcp", endpoint=guarded)], lifespan=lifespan)

    def tool_calls(self, name: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        return [call for call in self.calls if name is None or call[0] == name]


class _Guarded:
    """Records each HTTP request, checks the bearer token, then hands over to the SDK."""

    def __init__(self, fake: FakeJiraMcp, inner: Any) -> None:
        self.fake = fake
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        chunks: list[bytes] = []
        if scope["method"] == "POST":
            more = True
            while more:
                message = await receive()
                chunks.append(message.get("body", b""))
                more = message.get("more_body", False)
        body = b"".join(chunks)
        rpc_method = None
        if body:
            with contextlib.suppress(ValueError, AttributeError):
                rpc_method = json.loads(body).get("method")
        self.fake.http.append(HttpRequest(scope["method"], headers, rpc_method))
        if headers.get("authorization") != f"Bearer {self.fake.token}":
            payload = json.dumps({"error": "invalid_token", "message": "bad bearer"}).encode()
            start = {"type": "http.response.start", "status": 401, "headers": [(b"content-type", b"application/json")]}
            await send(start)
            await send({"type": "http.response.body", "body": payload})
            return
        if self.fake.http_replies and scope["method"] == "POST":
            status, extra, reply = self.fake.http_replies.pop(0)
            raw = [(k.encode(), v.encode()) for k, v in extra.items()]
            await send({"type": "http.response.start", "status": status, "headers": raw})
            await send({"type": "http.response.body", "body": reply})
            return
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if scope["method"] == "POST" and not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.inner(scope, replay, send)
