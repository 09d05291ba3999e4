"""Subscriptions, completions and log levels against the real ``@modelcontextprotocol/server-everything``
(issue 45, item 2), through ``lorenz serve`` with the official SDK client, in both protocol eras:
its subscribable resources deliver an update, its completable prompt and resource template return
its values, and its simulated log messages reach the caller at the caller's level."""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp
import mcp_types as types
import pytest

from lorenz.host import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

#: One of server-everything's static resources.
DOCUMENT = "demo://resource/static/document/architecture.md"
STATEFUL = "  stateful: true\n  json_response: false\n"
ERAS = [(STATEFUL, "legacy"), ("  json_response: false\n", "auto")]
IDS = ["handshake-stateful", "2026"]


@asynccontextmanager
async def _everything(
    tmp_path: Path, command: list[str], server: str, mode: str, **kwargs: Any
) -> AsyncIterator[mcp.Client]:
    options = json.dumps({"command": command, "timeout_seconds": 30, "start_timeout_seconds": 60})
    front = f"tools:\n  mcp: {options}\nserver:\n  tool_timeout_seconds: 30\n{server}"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-mcp"
    with serve_in_thread(cwd=tmp_path, env=env) as running:
        async with mcp.Client(running.url, mode=mode, **kwargs) as client:
            deadline = time.monotonic() + 60
            while "toggle-subscriber-updates" not in {tool.name for tool in (await client.list_tools()).tools}:
                assert time.monotonic() < deadline, "server-everything's tools were never served"
                await anyio.sleep(0.1)
            yield client


@pytest.mark.parametrize(("server", "mode"), ERAS, ids=IDS)
async def test_server_everything_delivers_a_subscribed_update(
    everything_server: list[str], tmp_path: Path, server: str, mode: str
) -> None:
    updated: list[str] = []
    told = anyio.Event()

    async def handler(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            told.set()

    async with _everything(tmp_path, everything_server, server, mode, message_handler=handler) as client:
        if client.protocol_version == "2026-07-28":
            async with client.listen(resource_subscriptions=[DOCUMENT]) as subscription:
                await client.call_tool("toggle-subscriber-updates", {})  # it tells at once, then every 5 s
                with anyio.fail_after(20):
                    event = await subscription.__anext__()
                updated.append(event.uri)  # type: ignore[union-attr]
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.subscribe_resource(DOCUMENT)
            await client.call_tool("toggle-subscriber-updates", {})
            with anyio.fail_after(20):
                await told.wait()
    assert updated[0] == DOCUMENT


@pytest.mark.parametrize(("server", "mode"), ERAS, ids=IDS)
async def test_server_everything_completes_prompt_and_template_arguments(
    everything_server: list[str], tmp_path: Path, server: str, mode: str
) -> None:
    async with _everything(tmp_path, everything_server, server, mode) as client:
        prompt = types.PromptReference(type="ref/prompt", name="completable-prompt")
        department = await client.complete(prompt, {"name": "department", "value": "S"})
        name = await client.complete(prompt, {"name": "name", "value": ""}, {"department": "Sales"})
        template = types.ResourceTemplateReference(type="ref/resource", uri="demo://resource/dynamic/text/{resourceId}")
        resource_id = await client.complete(template, {"name": "resourceId", "value": "7"})
    assert department.completion.values == ["Sales", "Support"]
    assert name.completion.values == ["David", "Eve", "Frank"]
    assert resource_id.completion.values == ["7"]


@pytest.mark.parametrize(("server", "mode"), ERAS, ids=IDS)
async def test_server_everything_logs_to_the_caller(
    everything_server: list[str], tmp_path: Path, server: str, mode: str
) -> None:
    lines: list[tuple[str, str]] = []

    async def logged(params: types.LoggingMessageNotificationParams) -> None:
        lines.append((params.level, str(params.data)))

    async with _everything(
        tmp_path, everything_server, server, mode, logging_callback=logged, log_level="debug"
    ) as client:
        if client.protocol_version != "2026-07-28":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                await client.set_logging_level("debug")
        # Its first simulated message is sent during the call that starts them (the others, every
        # 5 s, while no call is in flight, belong to no caller: the host logs them).
        await client.call_tool("toggle-simulated-logging", {})
    assert any("message" in data.lower() for _, data in lines), lines
