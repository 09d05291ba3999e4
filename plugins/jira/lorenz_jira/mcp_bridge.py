"""The ``httpx2`` → ``httpx`` bridge: the MCP SDK's requests carried over the host's client.

Every byte the SDK sends to a remote Jira MCP server goes through ``context.http`` with a timeout and
the shared retry policy.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

import attrs
import httpx

from lorenz import RetryPolicy, send_with_retry, summarize_body

if TYPE_CHECKING:
    import httpx2

__all__ = ["bridge_transport"]

# Hop-by-hop and body-framing headers describe the upstream bytes, not the re-wrapped body.
_DROPPED_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding", "connection"})


def _is_tool_call(body: bytes) -> bool:
    """Whether a POSTed JSON-RPC message may act on Jira (a ``tools/call``, or anything unreadable)."""
    try:
        message = json.loads(body)
    except ValueError:
        return True
    return not isinstance(message, Mapping) or message.get("method") == "tools/call"


def bridge_transport(
    http: httpx.AsyncClient,
    *,
    policy: RetryPolicy,
    timeout: float,
    sleep: Callable[[float], Awaitable[None]] | None,
    secrets: frozenset[str],
    failures: list[str],
) -> httpx2.AsyncBaseTransport:
    """An ``httpx2`` transport that sends through ``http``.

    POSTs (one JSON-RPC message each) go through the shared retry policy (a ``tools/call`` is retried
    on 429 only: a 503 does not prove the call was not applied) and are buffered, which is
    safe because this client advertises no sampling, elicitation or roots, so no server request
    can arrive on a POST's stream before its reply; other requests (the server-event GET stream,
    the session DELETE) stream. Non-2xx replies are
    summarised into ``failures`` so an error names the HTTP status.
    """
    import httpx2

    call_policy = attrs.evolve(policy, retry_statuses=policy.retry_statuses & {429})

    class RawStream(httpx2.AsyncByteStream):
        """An upstream ``httpx`` response body, handed to ``httpx2`` undecoded."""

        def __init__(self, response: httpx.Response) -> None:
            self._response = response

        async def __aiter__(self) -> AsyncIterator[bytes]:
            async for chunk in self._response.aiter_raw():
                yield chunk

        async def aclose(self) -> None:
            await self._response.aclose()

    class Bridge(httpx2.AsyncBaseTransport):
        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            body = await request.aread()
            headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() not in ("host", "content-length")]
            url = str(request.url)
            if request.method == "POST":
                chosen = call_policy if _is_tool_call(body) else policy
                response = await send_with_retry(
                    http, "POST", url, policy=chosen, timeout=timeout, sleep=sleep, headers=headers, content=body
                )
                if not response.is_success:
                    failures.append(f"jira-mcp status {response.status_code}: {summarize_body(response.text, secrets)}")
                kept = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in _DROPPED_HEADERS]
                return httpx2.Response(response.status_code, headers=kept, content=response.content)
            upstream = await http.send(
                http.build_request(request.method, url, headers=headers, content=body or None, timeout=timeout),
                stream=True,
            )
            return httpx2.Response(
                upstream.status_code, headers=upstream.headers.multi_items(), stream=RawStream(upstream)
            )

    return Bridge()
