"""The fast path's seam (:mod:`lorenz._internals`): what it relies on is checked when the host
starts, and a missing piece turns the fast path off with one warning, the SDK answering instead."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from mcp.server.runner import ServerRunner

from lorenz._internals import fast_path_usable, missing_internals
from lorenz.host import serve_in_thread
from lorenz.host.mcp import stateless

JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "seam-test", "version": "1"},
}


@pytest.fixture
def host_logs(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> pytest.LogCaptureFixture:
    """The ``lorenz.host`` logger's warnings (the host's logging setup may stop propagation)."""
    monkeypatch.setattr(logging.getLogger("lorenz"), "propagate", True)
    caplog.set_level(logging.WARNING, logger="lorenz.host")
    return caplog


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records if "the fast path is off" in record.getMessage()]


def test_this_python_and_sdk_have_what_the_fast_path_relies_on() -> None:
    assert missing_internals() == []


def test_a_missing_asyncio_internal_is_named(
    monkeypatch: pytest.MonkeyPatch, host_logs: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delattr(asyncio.tasks, "_enter_task")
    assert not fast_path_usable()
    [warning] = _warnings(host_logs)
    assert "asyncio.tasks._enter_task" in warning


def test_a_session_manager_without_its_lifespan_state_is_named() -> None:
    assert missing_internals(object()) == ["StreamableHTTPSessionManager._lifespan_state"]


def test_without_an_sdk_internal_the_sdk_answers(
    tmp_path: Path, host_pack: ModuleType, monkeypatch: pytest.MonkeyPatch, host_logs: pytest.LogCaptureFixture
) -> None:
    """``ServerRunner.on_request`` as a plain property (the SDK still works; the seam's getter
    would not): one warning, and every request answered through the SDK's transport."""
    monkeypatch.setattr(ServerRunner, "on_request", property(lambda runner: runner._on_request))

    def lean(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the lean path ran")

    monkeypatch.setattr(stateless, "_serve_one", lean)
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\n---\n")
    with serve_in_thread(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[host_pack]) as server:
        legacy = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        legacy["params"] = {"name": "demo_add", "arguments": {"a": 1, "b": 2}}
        modern = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": MODERN_META}}
        modern_headers = {**JSON, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
        replies = [
            httpx.post(server.url, content=json.dumps(legacy), headers={**JSON, "MCP-Protocol-Version": "2025-11-25"}),
            httpx.post(server.url, content=json.dumps(modern), headers=modern_headers),
        ]
    assert [reply.status_code for reply in replies] == [200, 200]
    assert replies[0].json()["result"]["structuredContent"] == {"sum": 3}, replies[0].text
    assert any(tool["name"] == "demo_add" for tool in replies[1].json()["result"]["tools"])
    [warning] = _warnings(host_logs)
    assert "ServerRunner.on_request" in warning
