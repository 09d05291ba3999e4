"""A client of a running ``lorenz serve``, for ``lorenz tools --server`` and ``lorenz call --server``:
the official MCP SDK client over Streamable HTTP, with an optional bearer token. What it answers is
plain data; a server that cannot be reached, or refuses the token, is one :class:`RemoteError` line
naming the URL and what to do about it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from attrs import frozen

from lorenz.results import failure_result

if TYPE_CHECKING:
    from lorenz.client_input import AskClient
    from lorenz.contracts import ProgressSink

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


async def remote_call(
    url: str,
    token: str | None,
    name: str,
    arguments: dict[str, Any],
    *,
    ask: AskClient | None = None,
    progress: ProgressSink | None = None,
) -> RemoteCall:
    """Call ``name`` and, if it failed, list the server's tools in the same session. What the tool asks
    its client (a form, a URL, roots, a model's reply) is asked of ``ask`` as the in-process call asks
    it (by request name where the server names its requests, from 2026-07-28); one it could not answer
    fails the call as in-process (``client_input_failed``). Its progress goes to ``progress``."""
    unanswered: list[str] = []

    async def work(client: Any) -> RemoteCall:
        try:
            reply = await client.call_tool(name, arguments, progress_callback=progress)
        except Exception:
            if not unanswered:
                raise
            text = f"{name} asked the client for input and got no answer: {unanswered[0]}"
            return RemoteCall(failure_result(text, reason="client_input_failed").to_dict())
        result = _as_result(reply)
        if result["success"]:
            return RemoteCall(result)
        listed = await client.list_tools()
        return RemoteCall(result, tuple(tool.name for tool in listed.tools))

    callbacks = _callbacks(ask, unanswered) if ask is not None else {}
    call: RemoteCall = await _session(url, token, work, callbacks)
    return call


def _callbacks(ask: AskClient, unanswered: list[str]) -> dict[str, Any]:
    """The SDK client's callbacks for what a server asks, each answered by ``ask``; what ``ask`` could
    not answer (its error's message, kept on ``unanswered``) is the ``ErrorData`` that declines it."""
    import mcp_types as types

    async def answer(context: Any, method: str, params: Any) -> Any:
        # 2026-07-28 names each request (its key is the context's request id); earlier eras do not.
        key = context.request_id if isinstance(context.request_id, str) else method.split("/")[0]
        wire: dict[str, Any] = {"method": method}
        if params is not None:
            wire["params"] = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        try:
            answers = await ask({key: wire})
            return answers[key]
        except Exception as exc:
            message = str(exc) if not isinstance(exc, KeyError) else f"no answer to {method}"
            unanswered.append(message)
            return types.ErrorData(code=types.INVALID_REQUEST, message=message)

    async def elicitation(context: Any, params: Any) -> Any:
        found = await answer(context, "elicitation/create", params)
        return found if isinstance(found, types.ErrorData) else types.ElicitResult.model_validate(found)

    async def sampling(context: Any, params: Any) -> Any:
        found = await answer(context, "sampling/createMessage", params)
        return found if isinstance(found, types.ErrorData) else types.CreateMessageResult.model_validate(found)

    async def roots(context: Any) -> Any:
        found = await answer(context, "roots/list", None)
        return found if isinstance(found, types.ErrorData) else types.ListRootsResult.model_validate(found)

    return {"elicitation_callback": elicitation, "sampling_callback": sampling, "list_roots_callback": roots}


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


async def _session(url: str, token: str | None, work: Any, callbacks: dict[str, Any] | None = None) -> Any:
    import httpx2
    import mcp
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        timeout = httpx2.Timeout(30.0, read=300.0)
        async with (
            httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
            mcp.Client(streamable_http_client(url, http_client=http), **(callbacks or {})) as client,
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
