"""Subscriptions, completions and log levels pass through (issue 45, item 2): an upstream's
subscribable resource, completions and log messages reach an official SDK client in both protocol
eras, over HTTP and stdio, through an instance with a ``prefix`` (the upstream is the test's own
``watching_upstream.py``; server-everything's are in test_mcp_watch_everything.py)."""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp
import mcp_types as types
import pytest
from mcp import StdioServerParameters

from lorenz.host import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HERE = Path(__file__).parent
UPSTREAM = [sys.executable, str(HERE / "watching_upstream.py")]
NOTE = "memo://note"
STREAMING = "  json_response: false\n"
STATEFUL = "  stateful: true\n  json_response: false\n"
#: (id, WORKFLOW server section, mcp.Client mode) over HTTP, then stdio's two eras.
HTTP = [("handshake-stateful", STATEFUL, "legacy"), ("2026-stateless", STREAMING, "auto")]
ERAS = [("handshake", "legacy"), ("2026", "auto")]


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-mcp"
    return env


def _workflow(tmp_path: Path, server: str = "") -> None:
    options = json.dumps({"provider": "mcp", "command": UPSTREAM, "timeout_seconds": 30, "prefix": "m_"})
    front = f"tools:\n  memo: {options}\nserver:\n  tool_timeout_seconds: 30\n{server}"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")


@asynccontextmanager
async def _client(tmp_path: Path, transport: str, server: str, mode: str, **kwargs: Any) -> AsyncIterator[mcp.Client]:
    """An SDK client of ``lorenz serve`` over ``transport`` (``http`` or ``stdio``), its upstream's
    tools served."""
    _workflow(tmp_path, server)
    if transport == "stdio":
        params = StdioServerParameters(command=sys.executable, args=["-m", "lorenz", "serve", "--stdio"], env=_env())
        params.cwd = tmp_path
        async with mcp.Client(params, mode=mode, **kwargs) as client:
            await _mounted(client)
            yield client
        return
    with serve_in_thread(cwd=tmp_path, env=_env()) as running:
        async with mcp.Client(running.url, mode=mode, **kwargs) as client:
            await _mounted(client)
            yield client


async def _mounted(client: mcp.Client) -> None:
    deadline = time.monotonic() + 120  # a bound on a loaded machine, not a timing assertion
    while {tool.name for tool in (await client.list_tools()).tools} != {"m_touch", "m_chatty", "m_ask_later", "m_grow"}:
        assert time.monotonic() < deadline, "the upstream's tools were never served"
        await anyio.sleep(0.1)


def _text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def _until(client: mcp.Client, want: str) -> None:
    """Until ``m_touch`` says the upstream watches ``want`` (an unsubscription ends asynchronously)."""
    deadline = time.monotonic() + 20
    while (said := _text(await client.call_tool("m_touch", {}))) != want:
        assert time.monotonic() < deadline, said
        await anyio.sleep(0.1)


def _updates() -> tuple[list[str], anyio.Event, Callable[[Any], Any]]:
    seen: list[str] = []
    event = anyio.Event()

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            seen.append(str(message.params.uri))
            event.set()

    return seen, event, handler


async def _subscription(client: mcp.Client, seen: list[str], updated: anyio.Event) -> None:
    if client.protocol_version == "2026-07-28":
        async with client.listen(resource_subscriptions=[NOTE, "memo://elsewhere"]) as subscription:
            # Only what the caller can read is watched, and acknowledged.
            assert subscription.honored.resource_subscriptions == [NOTE]
            assert _text(await client.call_tool("m_touch", {})) == f"watched: {NOTE}"
            with anyio.fail_after(20):
                event = await subscription.__anext__()
            assert event.uri == NOTE  # type: ignore[union-attr]
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.subscribe_resource(NOTE)
            with pytest.raises(mcp.MCPError, match="Resource not found"):
                await client.subscribe_resource("memo://elsewhere")
        assert _text(await client.call_tool("m_touch", {})) == f"watched: {NOTE}"
        with anyio.fail_after(20):
            await updated.wait()
        assert seen == [NOTE]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.unsubscribe_resource(NOTE)
    await _until(client, "watched: ")  # the last subscriber gone, the upstream is unsubscribed


@pytest.mark.parametrize(("server", "mode"), [(s, m) for _, s, m in HTTP], ids=[i for i, _, _ in HTTP])
async def test_a_subscription_delivers_an_update_over_http(tmp_path: Path, server: str, mode: str) -> None:
    seen, updated, handler = _updates()
    async with _client(tmp_path, "http", server, mode, message_handler=handler) as client:
        await _subscription(client, seen, updated)


@pytest.mark.parametrize("mode", [m for _, m in ERAS], ids=[i for i, _ in ERAS])
async def test_a_subscription_delivers_an_update_over_stdio(tmp_path: Path, mode: str) -> None:
    seen, updated, handler = _updates()
    async with _client(tmp_path, "stdio", "", mode, message_handler=handler) as client:
        await _subscription(client, seen, updated)


async def test_a_stateless_handshake_server_offers_no_subscription(tmp_path: Path) -> None:
    async with _client(tmp_path, "http", "", "legacy") as client:
        resources = client.server_capabilities.resources
        assert resources is not None and not resources.subscribe
        assert client.server_capabilities.completions is not None


async def _completions(client: mcp.Client) -> None:
    prompt = types.PromptReference(type="ref/prompt", name="m_greet")
    completed = await client.complete(prompt, {"name": "name", "value": "A"})
    assert completed.completion.values == ["Ada", "Alan"] and completed.completion.total == 2
    template = types.ResourceTemplateReference(type="ref/resource", uri="memo://notes/{name}")
    completed = await client.complete(template, {"name": "name", "value": "l"}, {"prefix": "A"})
    assert completed.completion.values == ["Alan"]  # the context's arguments reached the upstream
    with pytest.raises(mcp.MCPError, match="no prompt greet"):
        await client.complete(types.PromptReference(type="ref/prompt", name="greet"), {"name": "name", "value": ""})


#: Completions need no session: the default stateless JSON endpoint (its lean path) answers them too.
COMPLETING = [*HTTP, ("handshake-json", "", "legacy"), ("2026-json", "", "auto")]


@pytest.mark.parametrize(("server", "mode"), [(s, m) for _, s, m in COMPLETING], ids=[i for i, _, _ in COMPLETING])
async def test_completions_return_the_upstreams_values_over_http(tmp_path: Path, server: str, mode: str) -> None:
    async with _client(tmp_path, "http", server, mode) as client:
        await _completions(client)


@pytest.mark.parametrize("mode", [m for _, m in ERAS], ids=[i for i, _ in ERAS])
async def test_completions_return_the_upstreams_values_over_stdio(tmp_path: Path, mode: str) -> None:
    async with _client(tmp_path, "stdio", "", mode) as client:
        await _completions(client)


def _log() -> tuple[list[tuple[str, str]], Callable[[Any], Any]]:
    lines: list[tuple[str, str]] = []

    async def logged(params: types.LoggingMessageNotificationParams) -> None:
        lines.append((params.level, str(params.data)))

    return lines, logged


async def _chatty(client: mcp.Client, lines: list[tuple[str, str]]) -> None:
    if client.protocol_version != "2026-07-28":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.set_logging_level("info")
    result = await client.call_tool("m_chatty", {})
    assert _text(result) == "level: info"  # the client's level reached the upstream
    assert lines == [("info", "chatty: an info line"), ("warning", "chatty: a warning line")]


@pytest.mark.parametrize(("server", "mode"), [(s, m) for _, s, m in HTTP], ids=[i for i, _, _ in HTTP])
async def test_log_messages_reach_the_caller_at_its_level_over_http(tmp_path: Path, server: str, mode: str) -> None:
    lines, logged = _log()
    async with _client(tmp_path, "http", server, mode, logging_callback=logged, log_level="info") as client:
        await _chatty(client, lines)


@pytest.mark.parametrize("mode", [m for _, m in ERAS], ids=[i for i, _ in ERAS])
async def test_log_messages_reach_the_caller_at_its_level_over_stdio(tmp_path: Path, mode: str) -> None:
    lines, logged = _log()
    async with _client(tmp_path, "stdio", "", mode, logging_callback=logged, log_level="info") as client:
        await _chatty(client, lines)


async def test_a_caller_that_asked_for_no_log_messages_gets_none(tmp_path: Path) -> None:
    lines, logged = _log()
    async with _client(tmp_path, "http", STREAMING, "auto", logging_callback=logged) as client:
        result = await client.call_tool("m_chatty", {})
    assert _text(result) == "level: never set" and lines == []


async def test_an_upstreams_request_while_none_of_its_calls_is_in_flight_is_declined(tmp_path: Path) -> None:
    """It belongs to no caller: no client is asked, and the upstream is told why."""
    asked: list[str] = []

    async def roots(context: Any) -> types.ListRootsResult:
        asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/a")])

    gate, out = tmp_path / "gate", tmp_path / "out"
    async with _client(tmp_path, "http", STATEFUL, "legacy", list_roots_callback=roots) as client:
        armed = await client.call_tool("m_ask_later", {"gate": str(gate), "out": str(out)})
        assert _text(armed) == "armed"
        gate.write_text("go", encoding="utf-8")
        deadline = time.monotonic() + 20
        while not out.exists():
            assert time.monotonic() < deadline, "the upstream never asked"
            await anyio.sleep(0.05)
    said = out.read_text(encoding="utf-8")
    assert said.startswith("declined: MCP server ") and "asked the client for roots (roots/list)" in said
    assert said.endswith("while no tool call of it was in flight"), said
    assert asked == []


class _Told:
    """The list_changed notifications a client got: each kind's event, renewed once looked at."""

    KINDS = ("notifications/resources/list_changed", "notifications/prompts/list_changed")

    def __init__(self) -> None:
        self.events = {kind: anyio.Event() for kind in self.KINDS}

    async def handler(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method in self.events:
            self.events[method].set()

    async def next(self, kind: str) -> None:
        await self.events[kind].wait()
        self.events[kind] = anyio.Event()


@pytest.mark.parametrize(("server", "mode"), [(s, m) for _, s, m in HTTP], ids=[i for i, _, _ in HTTP])
async def test_an_upstreams_new_resources_and_prompts_reach_the_clients(tmp_path: Path, server: str, mode: str) -> None:
    """Its resources/ and prompts/list_changed re-list it; the host tells its clients both lists
    changed, and a client re-listing on each notification finds what the upstream added."""
    told = _Told()
    async with _client(tmp_path, "http", server, mode, message_handler=told.handler) as client:

        async def resources() -> set[str]:
            return {str(resource.uri) for resource in (await client.list_resources()).resources}

        async def prompts() -> set[str]:
            return {prompt.name for prompt in (await client.list_prompts()).prompts}

        if client.protocol_version == "2026-07-28":
            async with client.listen(resources_list_changed=True, prompts_list_changed=True) as subscription:
                assert _text(await client.call_tool("m_grow", {})) == "grown"
                kinds: set[str] = set()
                with anyio.fail_after(30):
                    while len(kinds) < 2 or "memo://fresh" not in await resources():
                        kinds.add(type(await subscription.__anext__()).__name__)
            assert kinds == {"ResourcesListChanged", "PromptsListChanged"} and "m_farewell" in await prompts()
            return
        assert _text(await client.call_tool("m_grow", {})) == "grown"
        # (An upstream slower than the mount's wait is first mounted without its lists: that is a
        # change of them too, which may be told after the client connected.)
        with anyio.fail_after(30):
            while "memo://fresh" not in await resources():
                await told.next("notifications/resources/list_changed")
            while "m_farewell" not in await prompts():
                await told.next("notifications/prompts/list_changed")
