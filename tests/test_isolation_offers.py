"""An isolated pack's questions for the client, resources and prompts cross its pipe: under
``lorenz serve`` (HTTP and stdio), through the official ``mcp`` client, a typed tool of a pack in
``server.isolated_packs`` asks before it writes (the host asks the client, or seals the round for
a 2026-07-28 client, and sends the call again with the answers), and the pack's own resource and
prompt are read and rendered in its process, and the prompt's argument completes there (sandboxed
too)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import mcp
import mcp_types as types
import pytest
from mcp.client.stdio import StdioServerParameters

from lorenz.sandbox import landlock
from lorenz.testing import ServedWorkflow

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

_HANDSHAKE = "  stateful: true\n  json_response: false\n"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, isolation_packs: ModuleType) -> Path:
    root: Path = isolation_packs.write_site(tmp_path_factory.mktemp("isolation-offers-site"))
    return root


def _env(site: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-local,iso-notes"
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


@pytest.fixture
def served(site: Path, tmp_path: Path, isolation_packs: ModuleType) -> Iterator[Any]:
    isolation_packs.workflow(tmp_path, tools="  notes: {}\n", server=_HANDSHAKE)
    server = ServedWorkflow(tmp_path, _env(site))
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait()


def _isolated(server: Any) -> list[dict[str, Any]]:
    statuses: list[dict[str, Any]] = httpx.get(server.base + "/healthz").json().get("isolatedPacks", [])
    return statuses


def _notes_pid(server: Any) -> int:
    pids = {status["pack"]: status["pids"] for status in _isolated(server)}
    assert len(pids["notes"]) == 1
    pid: int = pids["notes"][0]
    return pid


class _User:
    """The client's elicitation callback: answers ``confirm`` with ``action``, and remembers what
    it was asked."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.asked: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.asked.append(params.message)
        content = {"confirm": True} if self.action == "accept" else None
        return types.ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_isolated_tool_asks_before_it_writes(served: Any, tmp_path: Path, mode: str) -> None:
    pid = _notes_pid(served)
    note = tmp_path / "note.txt"
    declining = _User("decline")
    async with mcp.Client(served.url, mode=mode, elicitation_callback=declining) as client:
        declined = await client.call_tool("notes_save", {"text": "no"})
    assert declined.is_error is False, declined.content
    assert declined.structured_content == {"saved": False, "pid": pid}
    assert declining.asked == ["Write 'no'?"] and not note.exists()

    accepting = _User("accept")
    async with mcp.Client(served.url, mode=mode, elicitation_callback=accepting) as client:
        accepted = await client.call_tool("notes_save", {"text": "yes"})
    assert accepted.is_error is False, accepted.content
    assert accepted.structured_content == {"saved": True, "pid": pid}  # written by the pack's process
    assert accepting.asked == ["Write 'yes'?"]
    assert note.read_text(encoding="utf-8") == "yes"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_isolated_packs_resource_and_prompt_are_served_from_its_process(served: Any, mode: str) -> None:
    pid = _notes_pid(served)
    async with mcp.Client(served.url, mode=mode) as client:
        listed = (await client.list_resources()).resources
        assert [str(resource.uri) for resource in listed] == ["notes://status"]
        read = await client.read_resource("notes://status")
        prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
        got = await client.get_prompt("notes_brief", {"topic": "pipes"})
        with pytest.raises(mcp.MCPError, match="topic"):
            await client.get_prompt("notes_brief", {})
    assert [content.text for content in read.contents] == [f"notes in pid {pid}"]  # type: ignore[union-attr]
    assert "notes_brief" in prompts
    assert [message.content.text for message in got.messages] == [f"Take notes on pipes (pid {pid})."]  # type: ignore[union-attr]


async def test_an_isolated_tool_asks_over_stdio(site: Path, tmp_path: Path, isolation_packs: ModuleType) -> None:
    isolation_packs.workflow(tmp_path, tools="  notes: {}\n")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lorenz", "serve", "--stdio"], env=_env(site), cwd=tmp_path
    )
    user = _User("accept")
    async with mcp.Client(params, mode="legacy", elicitation_callback=user) as client:
        result = await client.call_tool("notes_save", {"text": "over stdio"})
        read = await client.read_resource("notes://status")
    assert result.is_error is False, result.content
    assert result.structured_content is not None and result.structured_content["saved"] is True
    assert result.structured_content["pid"] != os.getpid()
    assert read.contents[0].text == f"notes in pid {result.structured_content['pid']}"  # type: ignore[union-attr]
    assert (tmp_path / "note.txt").read_text(encoding="utf-8") == "over stdio"


_BRIEF = types.PromptReference(type="ref/prompt", name="notes_brief")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_isolated_packs_prompt_argument_completes_in_its_process(served: Any, mode: str) -> None:
    """Issue 45: ``complete=`` of a pack in ``server.isolated_packs`` runs in the pack's process;
    what it raises is an error for the client, and the process serves on."""
    pid = _notes_pid(served)
    async with mcp.Client(served.url, mode=mode) as client:
        found = await client.complete(_BRIEF, {"name": "topic", "value": "pipe"})
        with pytest.raises(mcp.MCPError, match="the topic index is down") as raised:
            await client.complete(_BRIEF, {"name": "topic", "value": "boom"})
        with pytest.raises(mcp.MCPError, match="prompt notes_brief has no argument 'topics'") as unknown:
            await client.complete(_BRIEF, {"name": "topics", "value": ""})
        again = await client.complete(_BRIEF, {"name": "topic", "value": "frame"})
    assert found.completion.values == [f"pipes in pid {pid}"]
    assert (raised.value.error.code, unknown.value.error.code) == (-32603, -32602)
    assert again.completion.values == [f"frames in pid {pid}"] and _notes_pid(served) == pid


@pytest.mark.skipif(landlock.missing_feature(landlock.abi_version(), network=True) is not None, reason="no Landlock")
async def test_a_sandboxed_packs_completer_is_confined(site: Path, tmp_path: Path, isolation_packs: ModuleType) -> None:
    """A sandboxed pack's completer runs confined: what it may not read is an error naming the
    permission to add."""
    (tmp_path / "secret.txt").write_text("the workflow's secret", encoding="utf-8")
    isolation_packs.workflow(tmp_path, tools="  notes: {}\n", server="  sandboxed_packs: [notes]\n")
    server = ServedWorkflow(tmp_path, _env(site))
    try:
        (status,) = _isolated(server)
        assert status["pack"] == "notes" and status["sandboxed"] is True
        async with mcp.Client(server.url) as client:
            found = await client.complete(_BRIEF, {"name": "topic", "value": "pipe"})
            with pytest.raises(mcp.MCPError, match=r"tools\.notes\.permissions\.read") as denied:
                await client.complete(_BRIEF, {"name": "topic", "value": "files"})
        assert found.completion.values == [f"pipes in pid {status['pids'][0]}"]
        assert "secret.txt" not in denied.value.error.message
    finally:
        server.stop()
