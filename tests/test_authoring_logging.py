"""Client logging (issue 30, item 5): ``ctx.log`` reaches an official SDK client's
``logging_callback`` as ``notifications/message`` when it opted in (``logging/setLevel`` in the
handshake era, the ``_meta`` log level from 2026-07-28), at or above its level, redacted, before
the result; never when it did not opt in; with the default JSON responses too (as SSE)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mcp
import pytest
from attrs import field, frozen
from mcp import StdioServerParameters

from lorenz import ToolProvider, hookimpl
from lorenz.authoring import CallContext, Pack, describe, tool
from lorenz.host import serve_in_thread
from lorenz.testing import FakeTracker, make_pack_host

pytestmark = pytest.mark.anyio

SECRET = "sekrit-value-42"


@frozen(kw_only=True)
class SyncArgs:
    board: str = field(metadata=describe("Board to sync."))
    fail: bool = field(default=False, metadata=describe("Fail after logging."))


@frozen(kw_only=True)
class Synced:
    board: str = field(metadata=describe("Board synced."))


@tool(name="boards_sync_board", description="Sync a board.", input=SyncArgs, output=Synced)
async def sync_board(ctx: CallContext, args: SyncArgs) -> Synced:
    ctx.log.debug("looking at %s", args.board)
    ctx.log.info("syncing %s", args.board)
    ctx.log.warning(f"token {SECRET} is about to expire")
    if args.fail:
        raise ctx.fail("not_found", f"No board {args.board}.")
    ctx.log.error("done with errors")
    return Synced(board=args.board)


PACK = Pack(name="boards", tools=[sync_board])


class Plugin:
    __name__ = "boards-plugin"

    @hookimpl
    def lorenz_register_tool_packs(self, register: Callable[[ToolProvider], None]) -> None:
        register(PACK)

    @hookimpl
    def lorenz_register_trackers(self, register: Callable[[Any], None]) -> None:
        register(FakeTracker(packs=["boards"]))


def _serve(tmp_path: Path, server: str) -> Any:
    front = f"tracker:\n  kind: lorenz-testing\n  api_key: $BOARD_TOKEN\nserver:\n{server}"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": "", "BOARD_TOKEN": SECRET, "PATH": os.environ.get("PATH", "")}
    return serve_in_thread(cwd=tmp_path, env=env, plugins=[Plugin()], reload=False)


class Seen:
    def __init__(self) -> None:
        self.messages: list[tuple[str, Any, str | None]] = []

    async def __call__(self, params: Any) -> None:
        self.messages.append((params.level, params.data, params.logger))


EXPECTED_INFO = [
    ("info", "syncing main", "boards_sync_board"),
    ("warning", "token [REDACTED] is about to expire", "boards_sync_board"),
    ("error", "done with errors", "boards_sync_board"),
]


async def test_handshake_era_after_set_level(tmp_path: Path) -> None:
    """Over stateful SSE: nothing before ``logging/setLevel``; at or above the level after it; the
    server advertises ``logging``."""
    with _serve(tmp_path, "  json_response: false\n  stateful: true\n") as running:
        seen = Seen()
        async with mcp.Client(running.url, mode="legacy", logging_callback=seen) as client:
            assert client.server_capabilities.logging is not None
            await client.call_tool("boards_sync_board", {"board": "main"})
            assert seen.messages == []  # not opted in yet
            await client.set_logging_level("info")
            result = await client.call_tool("boards_sync_board", {"board": "main"})
            assert result.is_error is False
            assert seen.messages == EXPECTED_INFO  # all before the result; debug left out
            seen.messages.clear()
            await client.set_logging_level("debug")
            failed = await client.call_tool("boards_sync_board", {"board": "main", "fail": True})
            assert failed.is_error is True
            assert [level for level, _, _ in seen.messages] == ["debug", "info", "warning"]
    assert SECRET not in repr(seen.messages)


@pytest.mark.parametrize("stateful", [False, True], ids=["stateless", "stateful"])
async def test_2026_era_meta_opt_in(tmp_path: Path, stateful: bool) -> None:
    """Over SSE responses: a request carrying the ``_meta`` log level gets the messages at or above it."""
    server = f"  json_response: false\n  stateful: {str(stateful).lower()}\n"
    with _serve(tmp_path, server) as running:
        quiet, loud = Seen(), Seen()
        async with mcp.Client(running.url, logging_callback=quiet) as client:
            assert client.protocol_version not in ("2025-11-25", "2025-06-18")
            await client.call_tool("boards_sync_board", {"board": "main"})
        assert quiet.messages == []  # a callback alone is no opt-in
        async with mcp.Client(running.url, logging_callback=loud, log_level="warning") as client:
            result = await client.call_tool("boards_sync_board", {"board": "main"})
        assert result.is_error is False
        assert loud.messages == EXPECTED_INFO[1:]


async def test_default_json_responses_stream_a_call_that_asks_for_messages(tmp_path: Path) -> None:
    """With JSON responses (the default), a call carrying the ``_meta`` log level is answered as an
    SSE stream so its messages arrive; one without it is a plain JSON answer with none."""
    with _serve(tmp_path, "  stateful: false\n") as running:
        quiet, loud = Seen(), Seen()
        async with mcp.Client(running.url, logging_callback=quiet) as client:
            result = await client.call_tool("boards_sync_board", {"board": "main"})
        assert result.structured_content == {"board": "main"} and quiet.messages == []
        async with mcp.Client(running.url, logging_callback=loud, log_level="info") as client:
            result = await client.call_tool("boards_sync_board", {"board": "main"})
        assert result.structured_content == {"board": "main"}
        assert loud.messages == EXPECTED_INFO


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_in_process_client(tmp_path: Path, mode: str) -> None:
    server = make_pack_host(PACK, base_dir=tmp_path).server()
    seen = Seen()
    try:
        async with mcp.Client(server, mode=mode, logging_callback=seen, log_level="warning") as client:
            if mode == "legacy":
                await client.set_logging_level("warning")
            await client.call_tool("boards_sync_board", {"board": "x"})
    finally:
        await server._lorenz_state.aclose()  # type: ignore[attr-defined]
    assert [level for level, _, _ in seen.messages] == ["warning", "error"]


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_over_stdio(tmp_path: Path, mode: str) -> None:
    (tmp_path / "lorenz_boardpack.py").write_text(STDIO_PACK, encoding="utf-8")
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: boardtracker\n---\n", encoding="utf-8")
    env: dict[str, Any] = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update(LORENZ_LOAD_PLUGINS="", PYTHONPATH=os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")]))
    args = ["-m", "lorenz", "-p", "lorenz_boardpack", "serve", "--stdio"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=tmp_path)
    seen = Seen()
    async with mcp.Client(params, mode=mode, logging_callback=seen, log_level="info") as client:
        if mode == "legacy":
            await client.set_logging_level("info")
        await client.call_tool("boards_sync_board", {"board": "main"})
    assert [(level, data) for level, data, _ in seen.messages] == [("info", "syncing main")]


STDIO_PACK = """
from attrs import frozen

from lorenz import hookimpl
from lorenz.authoring import CallContext, Pack, tool


@frozen
class SyncArgs:
    board: str


@tool(name="boards_sync_board", description="Sync a board.", input=SyncArgs)
async def sync_board(ctx: CallContext, args: SyncArgs) -> dict:
    ctx.log.debug("looking at %s", args.board)
    ctx.log.info("syncing %s", args.board)
    return {"board": args.board}


class Tracker:
    kind = "boardtracker"

    def create_client(self, settings, context):
        raise NotImplementedError

    def default_tool_packs(self, settings):
        return ["boards"]


@hookimpl
def lorenz_register_tool_packs(register):
    register(Pack(name="boards", tools=[sync_board]))


@hookimpl
def lorenz_register_trackers(register):
    register(Tracker())
"""


DOC = Path(__file__).resolve().parents[1] / "docs" / "writing-a-pack.md"


async def test_the_documented_snippet_logs_to_the_client(tmp_path: Path) -> None:
    section = DOC.read_text(encoding="utf-8").split("### Logging to the client: `ctx.log`\n", 1)[1]
    (code,) = [part.split("```", 1)[0] for part in section.split("\n## ", 1)[0].split("```python\n")[1:]]
    space: dict[str, Any] = {}
    exec(compile(code, "<writing-a-pack.md>", "exec"), space)
    server = make_pack_host(Pack(name="acme", tools=[space["sync_board"]]), base_dir=tmp_path).server()
    seen = Seen()
    try:
        async with mcp.Client(server, logging_callback=seen, log_level="info") as client:
            await client.call_tool("acme_sync_board", {"board": "main"})
    finally:
        await server._lorenz_state.aclose()  # type: ignore[attr-defined]
    assert seen.messages == [("info", "syncing main", "acme_sync_board")]
