"""A client of a running ``lorenz serve``, for ``lorenz tools --server`` and ``lorenz call --server``:
the official MCP SDK client over Streamable HTTP, with an optional bearer token. What it answers is
plain data; a server that cannot be reached, or refuses the token, is one :class:`RemoteError` line
naming the URL and what to do about it."""

from __future__ import annotations

import json
from typing import Any

from attrs import frozen

__all__ = ["RemoteCall", "RemoteError", "remote_call", "remote_tools"]

_TOKEN_HINT = "set --token or LORENZ_MCP_TOKEN to the server's token"


class RemoteError(Exception):
    """The server at a URL could not be asked: refused, timed out, or refused the token."""


async def remote_tools(url: str, token: str | None) -> list[dict[str, Any]]:
    """The tools the server lists to this token, in their wire form (``name``, ``inputSchema``...)."""

    async def work(client: Any) -> list[dict[str, Any]]:
        listed = await client.list_tools()
        return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]

    result: list[dict[str, Any]] = await _session(url, token, work)
    return result


@frozen
class RemoteCall:
    """One call's outcome: ``result`` in ``lorenz call``'s shape, and, when the call failed, the names
    of the tools the server lists to this token (to tell a misspelt tool from a failing one)."""

    result: dict[str, Any]
    listed: tuple[str, ...] | None = None


async def remote_call(url: str, token: str | None, name: str, arguments: dict[str, Any]) -> RemoteCall:
    """Call ``name`` and, if it failed, list the server's tools in the same session."""

    async def work(client: Any) -> RemoteCall:
        result = _as_result(await client.call_tool(name, arguments))
        if result["success"]:
            return RemoteCall(result)
        listed = await client.list_tools()
        return RemoteCall(result, tuple(tool.name for tool in listed.tools))

    call: RemoteCall = await _session(url, token, work)
    return call


def _as_result(reply: Any) -> dict[str, Any]:
    """``{success, result?, error?}`` as the in-process ``lorenz call`` prints it: a failure keeps the
    server's error object (``reason``, ``retryable``, ``recovery``...) under ``result``."""
    structured = reply.structured_content
    texts = [block.text for block in reply.content if getattr(block, "type", None) == "text"]
    payload: Any = structured
    if payload is None and texts:
        try:
            payload = json.loads(texts[0])
        except ValueError:
            payload = texts[0]
    if not reply.is_error:
        return {"success": True, "result": payload if payload is not None else {}}
    error = payload.get("error") if isinstance(payload, dict) else payload
    message = error.get("message") if isinstance(error, dict) else error
    summary = message if isinstance(message, str) else " ".join(texts) or "tool failed"
    if isinstance(error, dict):
        return {"success": False, "result": payload, "error": summary}
    return {"success": False, "error": summary}


async def _session(url: str, token: str | None, work: Any) -> Any:
    import httpx2
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        timeout = httpx2.Timeout(30.0, read=300.0)
        async with (
            httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
            mcp.Client(streamable_http_client(url, http_client=http)) as client,
        ):
            return await work(client)
    except Exception as exc:
        status = await _status(url, headers) if _leaves_mcp_error(exc) else None
        described = _describe(url, exc, token is not None, status)
        if status is not None and status not in (200, 401, 403):  # it answers, but not MCP here
            described += await _mcp_hint(url, headers)
        raise RemoteError(described) from exc


def _leaves_mcp_error(exc: BaseException) -> bool:
    from mcp.shared.exceptions import MCPError

    return any(isinstance(leaf, MCPError) for leaf in _leaves(exc))


async def _status(url: str, headers: dict[str, str]) -> int | None:
    """The HTTP status a plain ``ping`` gets: the SDK reports a refused request as a bare JSON-RPC error."""
    import httpx2

    accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    try:
        async with httpx2.AsyncClient(headers={**headers, **accept}, timeout=10.0) as http:
            response = await http.post(url, content=b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    except Exception:
        return None
    return response.status_code


async def _mcp_hint(url: str, headers: dict[str, str]) -> str:
    """`` (did you mean <url>/mcp?)`` when the URL lacks the ``/mcp`` path and that URL answers MCP."""
    path = url.split("?", 1)[0].rstrip("/")
    if path.endswith("/mcp"):
        return ""
    guess = f"{path}/mcp"
    return f" (did you mean {guess}?)" if await _status(guess, headers) in (200, 401, 403) else ""


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    found = [exc]
    if exc.__cause__ is not None:
        found += _leaves(exc.__cause__)
    return found


def _describe(url: str, exc: BaseException, with_token: bool, status: int | None = None) -> str:
    import httpx2

    refused = _refused(url, status, with_token)
    if refused is not None:
        return refused
    for leaf in _leaves(exc):
        if isinstance(leaf, httpx2.ConnectError):
            return f"{url}: connection refused (is lorenz serve running there?)"
        if isinstance(leaf, httpx2.TimeoutException):
            return f"{url}: timed out"
        if isinstance(leaf, httpx2.HTTPStatusError):
            return _refused(url, leaf.response.status_code, with_token) or f"{url}: HTTP {leaf.response.status_code}"
    leaf = _leaves(exc)[-1]
    return f"{url}: {' '.join(str(leaf).split()) or type(leaf).__name__}"


def _refused(url: str, status: int | None, with_token: bool) -> str | None:
    if status == 401:
        return f"{url}: 401 Unauthorized: {'the token was refused; check it' if with_token else _TOKEN_HINT}"
    if status == 403:
        return f"{url}: 403 Forbidden (server.allowed_origins, or what this token may call)"
    if status == 404:
        return f"{url}: 404 Not Found: lorenz serve answers MCP at /mcp"
    if status == 405:
        return f"{url}: 405 Method Not Allowed: not an MCP endpoint"
    return None
