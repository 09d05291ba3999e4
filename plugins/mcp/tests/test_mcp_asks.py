"""What an upstream MCP server asks the client passes through (issue 45, item 1): an upstream tool's
sampling, form and URL elicitation and roots requests reach an official SDK client's callbacks over
stateful HTTP and stdio in the handshake era, and the tool's result reflects the answers; a client
that cannot answer (no callback, stateless handshake-era HTTP, 2026-07-28) gets a clear ``isError``
naming why, and the call still ends."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import mcp
import mcp_types as types
import pytest
from mcp import StdioServerParameters

from lorenz.host import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HERE = Path(__file__).parent
UPSTREAM = [sys.executable, str(HERE / "asking_upstream.py")]
MODERN = "2026-07-28"
#: What a client that can answer every request declares.
CAN = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}
STATEFUL = "  stateful: true\n  json_response: false\n"


def _workflow(tmp_path: Path, server: str = "", timeout: float = 30) -> None:
    mark = str(tmp_path / "cancelled")
    options = json.dumps({"command": UPSTREAM, "timeout_seconds": 30, "env": {"ASKS_CANCELLED": mark}})
    front = f"tools:\n  mcp: {options}\nserver:\n  tool_timeout_seconds: {timeout}\n{server}"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-mcp"
    return env


@pytest.fixture
def stateful(tmp_path: Path) -> Iterator[str]:
    _workflow(tmp_path, STATEFUL)
    with serve_in_thread(cwd=tmp_path, env=_env(), reload=False) as running:
        yield running.url


class Client:
    """The client's callbacks: a sampled line, an accepted form, a visited URL, two roots."""

    def __init__(self) -> None:
        self.asked: list[Any] = []

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.asked.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="Tides turn."), model="tiny-1"
        )

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params)
        if params.mode == "url":
            return types.ElicitResult(action="accept")
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/a"), types.Root(uri="file:///work/b")])

    def open(self, server: Any, **kwargs: Any) -> mcp.Client:
        kwargs.setdefault("mode", "legacy")
        callbacks = {"sampling_callback": self.sample, "elicitation_callback": self.elicit}
        return mcp.Client(server, list_roots_callback=self.roots, **callbacks, **kwargs)


def _text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def _mounted(client: mcp.Client) -> None:
    """Once the upstream's tools are served (it starts beside the host, and may take a while)."""
    deadline = time.monotonic() + 60
    while {tool.name for tool in (await client.list_tools()).tools} != {"sample", "form", "visit", "roots"}:
        assert time.monotonic() < deadline, "the upstream's tools were never served"
        await anyio.sleep(0.1)


async def _every_request(client: mcp.Client, answers: Client) -> None:
    await _mounted(client)
    sampled = await client.call_tool("sample", {"topic": "the sea"})
    assert sampled.is_error is False, sampled
    assert _text(sampled) == "sampled: Tides turn. (tiny-1)"
    (params,) = answers.asked
    assert params.max_tokens == 50 and params.messages[0].content.text == "a line on the sea"
    form = await client.call_tool("form", {})
    assert _text(form) == "form: accept Ada"
    assert answers.asked[-1].message == "What is your name?"
    visit = await client.call_tool("visit", {})
    assert _text(visit) == "visit: accept"
    url = answers.asked[-1]
    assert url.mode == "url" and url.url == "https://example.invalid/sign-in"
    # The handshake era names each URL elicitation; a 2026-07-28 round carries no elicitationId.
    assert url.elicitation_id == ("visit-1" if client.protocol_version != "2026-07-28" else None)
    roots = await client.call_tool("roots", {})
    assert _text(roots) == "roots: file:///work/a, file:///work/b"
    assert answers.asked[-1] == "roots"


#: (id, WORKFLOW server section, mcp.Client mode): every path a client can answer on over HTTP.
ANSWERING = [
    ("handshake-stateful", STATEFUL, "legacy"),
    ("2026-stateless", "", "auto"),
    ("2026-stateful", STATEFUL, "auto"),
]


@pytest.mark.parametrize(("server", "mode"), [(s, m) for _, s, m in ANSWERING], ids=[i for i, _, _ in ANSWERING])
async def test_every_request_reaches_the_client_over_http(tmp_path: Path, server: str, mode: str) -> None:
    _workflow(tmp_path, server)
    answers = Client()
    with serve_in_thread(cwd=tmp_path, env=_env(), reload=False) as running:
        async with answers.open(running.url, mode=mode) as client:
            assert (client.protocol_version == "2026-07-28") == (mode == "auto")
            await _every_request(client, answers)


@pytest.mark.parametrize("mode", ["legacy", "auto"], ids=["handshake", "2026"])
async def test_every_request_reaches_the_client_over_stdio(tmp_path: Path, mode: str) -> None:
    _workflow(tmp_path)
    params = StdioServerParameters(command=sys.executable, args=["-m", "lorenz", "serve", "--stdio"], env=_env())
    params.cwd = tmp_path
    answers = Client()
    async with answers.open(params, mode=mode) as client:
        await _every_request(client, answers)


@pytest.mark.parametrize("era", ["legacy", "auto"])
async def test_a_client_without_the_capability_gets_a_clear_error(stateful: str, era: str) -> None:
    # Never put to a client that did not declare it can answer: its SDK would fail the whole call
    # (in the 2026-07-28 era) rather than answer, so the upstream is told instead and goes on.
    async with mcp.Client(stateful, mode=era) as client:  # type: ignore[arg-type]
        await _mounted(client)
        sampled = await client.call_tool("sample", {"topic": "the sea"})
        roots = await client.call_tool("roots", {})
        after = await client.call_tool("sample", {"topic": "the sea"})
    assert sampled.is_error is True
    text = _text(sampled)
    assert "asked the client for sampling (sampling/createMessage) during sample" in text, text
    assert "sampling failed: " in text and "this client did not declare the sampling capability" in text, text
    # The upstream's roots tool says nothing of why: lorenz-mcp adds it.
    assert roots.is_error is True and "asked the client for roots (roots/list) during roots" in _text(roots)
    assert "did not declare the roots capability" in _text(roots)
    assert after.is_error is True  # the upstream still serves


async def test_a_stateless_handshake_client_is_told_why(tmp_path: Path) -> None:
    _workflow(tmp_path)
    answers = Client()
    with serve_in_thread(cwd=tmp_path, env=_env(), reload=False) as running:
        async with answers.open(running.url) as client:
            await _mounted(client)
            form = await client.call_tool("form", {})
            roots = await client.call_tool("roots", {})
    assert answers.asked == []
    for result in (form, roots):
        assert result.is_error is True, result
        assert "stateless HTTP" in _text(result) and "asked the client for" in _text(result), _text(result)


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN}
    headers.update({"Mcp-Method": body["method"], "Mcp-Name": body["params"]["name"]})
    response = httpx.post(url, json=body, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    return reply


def _call(n: int, name: str, **extra: Any) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": CAN}
    params = {"name": name, "arguments": {}, "_meta": meta, **extra}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


def test_a_call_never_retried_is_cancelled_upstream_and_its_retry_told_why(tmp_path: Path) -> None:
    _workflow(tmp_path, timeout=2)

    async def mounted(url: str) -> None:
        async with mcp.Client(url) as client:
            await _mounted(client)

    with serve_in_thread(cwd=tmp_path, env=_env(), reload=False) as running:
        anyio.run(mounted, running.url)
        first = _post(running.url, _call(1, "form"))["result"]
        assert first["resultType"] == "input_required"
        (request,) = first["inputRequests"].values()
        assert request["method"] == "elicitation/create"
        assert request["params"]["message"] == "What is your name?"
        mark = tmp_path / "cancelled"
        deadline = time.monotonic() + 20
        while not mark.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert mark.exists(), "the upstream's call waiting for a retry was never cancelled"
        answer = {"action": "accept", "content": {"name": "Ada"}}
        retry = _call(2, "form", requestState=first["requestState"], inputResponses={"upstream": answer})
        late = _post(running.url, retry)["result"]
    assert late["isError"] is True
    assert "is no longer waiting here" in late["content"][0]["text"], late


@pytest.mark.parametrize(("server", "mode"), [(STATEFUL, "legacy"), ("", "auto")], ids=["handshake", "2026"])
async def test_server_everything_asks_the_client(
    everything_server: list[str], tmp_path: Path, server: str, mode: str
) -> None:
    options = json.dumps({"command": everything_server, "timeout_seconds": 30, "start_timeout_seconds": 60})
    front = f"tools:\n  mcp: {options}\nserver:\n  tool_timeout_seconds: 30\n{server}"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    answers = Client()
    wanted = {"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list"}
    with serve_in_thread(cwd=tmp_path, env=_env(), reload=False) as running:
        async with answers.open(running.url, mode=mode) as client:
            deadline = time.monotonic() + 60
            while not wanted <= {tool.name for tool in (await client.list_tools()).tools}:
                assert time.monotonic() < deadline, "server-everything's asking tools were never served"
                await anyio.sleep(0.1)
            sampled = await client.call_tool("trigger-sampling-request", {"prompt": "the sea", "maxTokens": 20})
            form = await client.call_tool("trigger-elicitation-request", {})
            roots = await client.call_tool("get-roots-list", {})
    assert sampled.is_error is False, sampled
    assert "Tides turn." in _text(sampled) and "tiny-1" in _text(sampled)
    # server-everything may also ask for roots on its own (when a call of it happens to be in flight).
    (sampling,) = [asked for asked in answers.asked if hasattr(asked, "messages")]
    assert sampling.messages[0].content.text.endswith("the sea")
    assert form.is_error is False and "Name: Ada" in _text(form), form
    assert roots.is_error is False and "file:///work/a" in _text(roots), roots
