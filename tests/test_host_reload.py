"""Hot reload of WORKFLOW.md under a running server, and the stateful (session) mode."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import mcp
import mcp_types
import pytest

from lorenz.host import serve_in_thread
from lorenz.workspace import open_workspace

pytestmark = pytest.mark.anyio

ENV = {"LORENZ_LOAD_PLUGINS": ""}
DEMO = ["demo_add", "demo_fail", "demo_boom", "demo_list"]


def write(path: Path, front_matter: str) -> None:
    """Write a workflow and move its mtime, so the change is seen even within one clock tick."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(f"---\n{front_matter}---\nprompt\n")
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


async def names(url: str) -> list[str]:
    async with mcp.Client(url, mode="legacy") as client:
        return [tool.name for tool in (await client.list_tools()).tools]


async def test_valid_change_changes_the_tools_at_once(tmp_path: Path, host_pack: ModuleType) -> None:
    """Editing WORKFLOW.md to mount another pack changes tools/list on the next request."""
    workflow = tmp_path / "WORKFLOW.md"
    write(workflow, "tracker:\n  kind: demo\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        assert await names(server.url) == DEMO
        write(workflow, "tracker:\n  kind: demo\ntools:\n  extra: {}\n")
        assert await names(server.url) == [*DEMO, "extra_ping"]
        async with mcp.Client(server.url) as client:
            result = await client.call_tool("extra_ping", {})
            assert result.structured_content == {"pong": True}


async def test_invalid_change_keeps_the_last_good_config(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, host_pack: ModuleType
) -> None:
    """A broken WORKFLOW.md is logged with its exact error; the last good config keeps serving."""
    workflow = tmp_path / "WORKFLOW.md"
    write(workflow, "tracker:\n  kind: demo\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        broken = "tracker:\n  kind: demo\ntools:\n  no_such_pack: {}\n"
        write(workflow, broken)
        with pytest.raises(ValueError, match=r".") as expected:
            open_workspace(workflow, cwd=tmp_path, env=ENV, plugins=[host_pack])
        with caplog.at_level(logging.ERROR, logger="lorenz.host"):
            assert await names(server.url) == DEMO
            async with httpx.AsyncClient() as http:
                health = (await http.get(server.base_url + "/healthz")).json()
        assert health["reloadFailed"] is True
        errors = [record.getMessage() for record in caplog.records if record.levelno == logging.ERROR]
        assert len(errors) == 1
        assert errors[0].endswith(str(expected.value))
        write(workflow, "tracker:\n  kind: demo\ntools:\n  extra: {}\n")  # fixed again: picked up
        assert await names(server.url) == [*DEMO, "extra_ping"]


async def test_deleted_workflow_keeps_serving(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, host_pack: ModuleType
) -> None:
    """Deleting the served WORKFLOW.md is an error to log, not a switch to the embedded default."""
    workflow = tmp_path / "WORKFLOW.md"
    write(workflow, "tracker:\n  kind: demo\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        workflow.unlink()
        with caplog.at_level(logging.ERROR, logger="lorenz.host"):
            assert await names(server.url) == DEMO
        assert any("still serving the last good config" in record.getMessage() for record in caplog.records)


async def test_stateful_sessions_get_list_changed(tmp_path: Path, host_pack: ModuleType) -> None:
    """With server.stateful, a reload sends notifications/tools/list_changed to open sessions."""
    workflow = tmp_path / "WORKFLOW.md"
    write(workflow, "tracker:\n  kind: demo\nserver:\n  stateful: true\n")
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ToolListChangedNotification):
            changed.set()

    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        async with mcp.Client(server.url, mode="legacy", message_handler=on_message) as client:
            assert client.session.protocol_version == "2025-11-25"
            before = await client.list_tools()
            assert [tool.name for tool in before.tools] == DEMO
            write(workflow, "tracker:\n  kind: demo\nserver:\n  stateful: true\ntools:\n  extra: {}\n")
            with anyio.fail_after(10):
                await changed.wait()
            after = await client.list_tools()
            assert [tool.name for tool in after.tools] == [*DEMO, "extra_ping"]


@pytest.mark.parametrize("json_response", ["true", "false"])
async def test_stateful_mode_serves_both_eras(tmp_path: Path, json_response: str, host_pack: ModuleType) -> None:
    """Stateful sessions (JSON or SSE responses) serve legacy and 2026-07-28 clients alike."""
    server_section = f"server:\n  stateful: true\n  json_response: {json_response}\n"
    write(tmp_path / "WORKFLOW.md", "tracker:\n  kind: demo\n" + server_section)
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        for mode in ("legacy", "auto"):
            async with mcp.Client(server.url, mode=mode) as client:
                result = await client.call_tool("demo_add", {"a": 2, "b": 3})
                assert result.structured_content == {"sum": 5}
                failed = await client.call_tool("demo_boom", {})
                assert failed.is_error is True


async def test_stateless_sse_responses(tmp_path: Path, host_pack: ModuleType) -> None:
    """server.json_response: false answers each POST with an SSE stream; both eras still work."""
    write(tmp_path / "WORKFLOW.md", "tracker:\n  kind: demo\nserver:\n  json_response: false\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        async with httpx.AsyncClient() as http:
            raw = await http.post(
                server.url,
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"},
            )
        assert raw.headers["content-type"].startswith("text/event-stream")
        for mode in ("legacy", "auto"):
            async with mcp.Client(server.url, mode=mode) as client:
                result = await client.call_tool("demo_add", {"a": 2, "b": 2})
                assert result.structured_content == {"sum": 4}


async def test_modern_listen_stream_gets_tools_changed(tmp_path: Path, host_pack: ModuleType) -> None:
    """2026-07-28 clients on a streaming server hear about reloads on a subscriptions/listen stream."""
    workflow = tmp_path / "WORKFLOW.md"
    write(workflow, "tracker:\n  kind: demo\nserver:\n  json_response: false\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        async with mcp.Client(server.url) as client:
            assert client.session.protocol_version == "2026-07-28"
            async with client.listen(tools_list_changed=True) as subscription:
                write(workflow, "tracker:\n  kind: demo\nserver:\n  json_response: false\ntools:\n  extra: {}\n")
                with anyio.fail_after(10):
                    event = await subscription.__aiter__().__anext__()
            assert type(event).__name__ == "ToolsListChanged"
            listed = await client.list_tools()
            assert [tool.name for tool in listed.tools] == [*DEMO, "extra_ping"]


async def test_requests_reload_off_the_event_loop(
    tmp_path: Path, host_pack: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No request path reloads inline on the server's event loop: the reload runs in a worker thread."""
    import threading

    from lorenz.host import LiveWorkspace

    def blocking(self: LiveWorkspace) -> None:
        raise AssertionError("the blocking current() ran on a request path")

    monkeypatch.setattr(LiveWorkspace, "current", blocking)
    workflow = tmp_path / "WORKFLOW.md"
    write(workflow, "tracker:\n  kind: demo\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        prepare = server.live.prepare
        assert prepare is not None
        threads: list[str] = []

        def recording(snapshot: Any) -> object:
            threads.append(threading.current_thread().name)
            return prepare(snapshot)

        server.live.prepare = recording
        async with httpx.AsyncClient() as http:
            for path in ("/healthz", "/", "/.well-known/mcp.json"):
                write(workflow, f"tracker:\n  kind: demo\n# {path}\n")
                assert (await http.get(server.base_url + path)).status_code == 200
        write(workflow, "tracker:\n  kind: demo\ntools:\n  extra: {}\n")
        assert await names(server.url) == [*DEMO, "extra_ping"]
    assert len(threads) >= 4  # one per change (the poller may catch a write before its utime)
    assert "lorenz-serve" not in threads


async def test_calling_an_installed_but_unmounted_tool_says_how_to_mount_it(
    tmp_path: Path, host_pack: ModuleType
) -> None:
    """An unknown tool that an installed pack declares gets the `tools:` line that mounts it."""
    workflow = tmp_path / "WORKFLOW.md"
    write(workflow, "tracker:\n  kind: demo\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        async with mcp.Client(server.url) as client:
            result = await client.call_tool("extra_ping", {})
            assert result.is_error is True
            assert result.structured_content is not None
            assert result.structured_content["error"]["message"] == (
                'Unsupported tool: "extra_ping". extra_ping is in the installed pack "extra" (in-process), which the '
                'workflow does not mount: run "lorenz mount extra" or add "tools: {extra: {}}" to WORKFLOW.md'
            )
            unknown = await client.call_tool("nowhere_at_all", {})
            assert unknown.structured_content is not None
            assert unknown.structured_content["error"]["message"] == 'Unsupported tool: "nowhere_at_all".'
            assert "demo_add" in unknown.structured_content["error"]["supportedTools"]


async def test_the_reload_log_line_counts_in_the_right_number(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, host_pack: ModuleType
) -> None:
    """One pack serving one tool is logged as such, not as "1 tools from 1 packs"."""
    workflow = tmp_path / "WORKFLOW.md"
    write(workflow, "tracker:\n  kind: demo\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        with caplog.at_level(logging.INFO, logger="lorenz.host"):
            write(workflow, "tools:\n  extra: {}\n")
            assert await names(server.url) == ["extra_ping"]
        reloads = [record.getMessage() for record in caplog.records if "reloaded" in record.getMessage()]
        assert reloads and reloads[-1].endswith(": 1 tool from 1 pack"), reloads


def test_a_setting_only_a_restart_applies_is_said_on_healthz_and_in_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, host_pack: ModuleType
) -> None:
    """A reload that changes a setting read once at start (here server.stateful and
    server.access_log) names it on /healthz and in the log; changed back, it is no longer named."""
    workflow = tmp_path / "WORKFLOW.md"
    write(workflow, "tracker:\n  kind: demo\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        healthz = server.base_url + "/healthz"
        assert "settingsNeedRestart" not in httpx.get(healthz).json()
        with caplog.at_level(logging.WARNING, logger="lorenz.host"):
            write(workflow, "tracker:\n  kind: demo\nserver:\n  stateful: true\n  access_log: true\n")
            pending = httpx.get(healthz).json()
        write(workflow, "tracker:\n  kind: demo\n")
        back = httpx.get(healthz).json()
    assert pending["settingsNeedRestart"] == ["server.stateful", "server.access_log"]
    warned = [record.getMessage() for record in caplog.records if "needs a restart" in record.getMessage()]
    assert warned and warned[-1].startswith("lorenz: server.stateful, server.access_log changed in ")
    assert "settingsNeedRestart" not in back
