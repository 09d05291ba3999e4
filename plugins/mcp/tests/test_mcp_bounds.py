"""An upstream that sends too much, too often or too slowly: each message bounded by
``server.max_result_bytes`` (stdio and HTTP), progress coalesced, the mount's wait shared by every
upstream, and a stdio upstream's stderr named by its instance."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import Context, MCPServer

import lorenz_mcp.pack
from lorenz.testing import loopback_server, open_workspace
from lorenz_mcp.errors import UpstreamError
from lorenz_mcp.options import parse_options
from lorenz_mcp.pack import McpPack
from lorenz_mcp.upstream import Upstream

pytestmark = pytest.mark.slow

#: A stdio upstream: ``ok``, ``big(size)``, ``chatty(count)``; its stderr greets with ``$WHICH``;
#: ``$PAD`` bytes of description make its listing that big; ``$LIST_GATE`` holds its listing until
#: that file exists.
UPSTREAM = """
import os, sys
import anyio
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("lorenz-mcp-test-bounds")
print("hello from", os.environ.get("WHICH", "?"), file=sys.stderr, flush=True)

@server.tool(description="d" * int(os.environ.get("PAD", "1")))
def ok() -> str:
    return "ok"

@server.tool()
def big(size: int) -> str:
    return "x" * size

@server.tool()
async def chatty(count: int, ctx: Context) -> str:
    for done in range(1, count + 1):
        await ctx.report_progress(done, count)
    return "done"

gate = os.environ.get("LIST_GATE")
if gate:
    listing = server.list_tools

    async def gated():
        while not os.path.exists(gate):
            await anyio.sleep(0.05)
        return await listing()

    server.list_tools = gated
server.run("stdio")
"""

LIMIT = 100_000


@pytest.fixture
def script(tmp_path: Path) -> list[str]:
    path = tmp_path / "upstream.py"
    path.write_text(UPSTREAM, encoding="utf-8")
    return [sys.executable, str(path)]


@pytest.fixture
def upstream(script: list[str]) -> Iterator[Callable[..., Upstream]]:
    started: list[Upstream] = []

    def start(env: dict[str, str] | None = None, limit: int = LIMIT) -> Upstream:
        options = parse_options({"command": script, "env": env or {}, "start_timeout_seconds": 60})
        one = Upstream(options, "bounded", (), os.environ, limit)
        started.append(one)
        return one

    yield start
    for one in started:
        one.close()


def _http_upstream() -> Any:
    server = MCPServer("lorenz-mcp-test-bounds-http")

    @server.tool()
    def big(size: int) -> str:
        return "x" * size

    return server.streamable_http_app()


@pytest.fixture
def http_upstream() -> Iterator[str]:
    with loopback_server(_http_upstream()) as server:
        yield f"{server.base_url}/mcp"


def _text(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize("where", ["stdio", "http"])
def test_an_answer_over_the_cap_fails_at_once_with_the_caps_error(
    where: str, upstream: Callable[..., Upstream], http_upstream: str
) -> None:
    if where == "stdio":
        bounded = upstream()
    else:
        options = parse_options({"url": http_upstream, "start_timeout_seconds": 60})
        bounded = Upstream(options, "bounded", (), os.environ, LIMIT)
    try:
        assert {tool["name"] for tool in bounded.tools()} >= {"big"}
        small = anyio.run(bounded.call, "big", {"size": 1000}, None)
        assert _text(small) == "x" * 1000
        with pytest.raises(UpstreamError) as caught:
            anyio.run(bounded.call, "big", {"size": 4 * LIMIT}, None)
        assert caught.value.too_large, str(caught.value)
        assert "more than 100,000 bytes (server.max_result_bytes)" in str(caught.value)
        # The connection serves on: the oversized answer was skipped, not the upstream.
        assert _text(anyio.run(bounded.call, "big", {"size": 10}, None)) == "x" * 10
        assert bounded.restarts == 0
    finally:
        bounded.close()


def test_a_listing_over_the_cap_names_the_upstream_as_failed(upstream: Callable[..., Upstream]) -> None:
    bounded = upstream({"PAD": str(2 * LIMIT)})
    with pytest.raises(UpstreamError, match=r"more than 100,000 bytes \(server.max_result_bytes\)"):
        bounded.tools()
    problem = bounded.health()
    assert problem is not None and "server.max_result_bytes" in problem and "being restarted" in problem


def test_progress_is_coalesced_and_its_last_report_arrives(upstream: Callable[..., Upstream]) -> None:
    bounded = upstream()
    bounded.tools()
    relayed: list[float] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        relayed.append(done)

    began = time.monotonic()
    result = anyio.run(bounded.call, "chatty", {"count": 3000}, progress)
    elapsed = time.monotonic() - began
    assert _text(result) == "done"
    assert relayed[-1] == 3000
    # At most 20 a second (one per 50 ms interval, and the last), not one per notification.
    assert len(relayed) <= 20 * elapsed + 2, (len(relayed), elapsed)


def _workflow(tmp_path: Path, script: list[str], entries: dict[str, dict[str, Any]]) -> Path:
    tools = {key: {"provider": "mcp", "command": script, **entry} for key, entry in entries.items()}
    path = tmp_path / "WORKFLOW.md"
    path.write_text(f"---\ntools: {json.dumps(tools)}\n---\n", encoding="utf-8")
    return path


def _pack(workspace: Any) -> McpPack:
    pack = workspace.discovery.tools.get("mcp").load()  # the plugin registers it lazily
    assert isinstance(pack, McpPack)
    return pack


def test_mounting_waits_once_for_every_slow_upstream(
    tmp_path: Path, script: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lorenz_mcp.pack, "MOUNT_WAIT_SECONDS", 1.0)
    gate = str(tmp_path / "never")
    entries = {
        "one": {"env": {"LIST_GATE": gate}, "prefix": "one_", "start_timeout_seconds": 120},
        "two": {"env": {"LIST_GATE": gate, "WHICH": "two"}, "prefix": "two_", "start_timeout_seconds": 120},
    }
    path = _workflow(tmp_path, script, entries)
    began = time.monotonic()
    workspace = open_workspace(path, env={"LORENZ_LOAD_PLUGINS": "lorenz-mcp"})
    elapsed = time.monotonic() - began
    try:
        assert workspace.mounted.specs == ()
        # Each hook a mount asks (tools, own names, resources, prompts) once waited its own
        # 1 s, per upstream: 8 s here. Now the two upstreams start together and share one wait.
        assert elapsed < 3.0, elapsed
    finally:
        began = time.monotonic()
        _pack(workspace).close()
    # Stopped while their starts hang on the listing: not at the starts' 120 s deadlines (nor at
    # the 10 s a stop waits for each).
    assert time.monotonic() - began < 10.0


def test_an_upstream_still_starting_asks_the_host_for_no_remount(
    tmp_path: Path, script: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mounted before its first listing, an upstream has nothing new for the host until that listing
    comes; it once said its tools had changed at every mount, so the host remounted it again and
    again (hundreds of reloads a minute) for as long as it was starting, or forever if it never did."""
    from lorenz.host import LiveWorkspace

    monkeypatch.setattr(lorenz_mcp.pack, "MOUNT_WAIT_SECONDS", 0.5)
    gate = tmp_path / "gate"
    path = _workflow(tmp_path, script, {"slow": {"env": {"LIST_GATE": str(gate)}}})
    live = LiveWorkspace.open(path, cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": "lorenz-mcp"})
    try:
        assert live.snapshot().specs == ()
        assert live.changed() is False
        gate.touch()
        deadline = time.monotonic() + 60  # a bound on waiting for the listing, not a timing assertion
        while not live.changed() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert live.check() is True
        assert [spec.name for spec in live.snapshot().specs] == ["ok", "big", "chatty"]
        assert live.changed() is False
    finally:
        anyio.run(live.aclose)


def test_stderr_lines_name_the_instance(
    tmp_path: Path, script: list[str], stderr_log: pytest.LogCaptureFixture
) -> None:
    caplog = stderr_log
    path = _workflow(
        tmp_path, script, {"first": {"env": {"WHICH": "w1"}, "prefix": "a_"}, "second": {"env": {"WHICH": "w2"}}}
    )
    workspace = open_workspace(path, env={"LORENZ_LOAD_PLUGINS": "lorenz-mcp"})
    try:
        deadline = time.monotonic() + 30  # a bound on waiting, not a timing assertion
        lines: set[str] = set()
        while time.monotonic() < deadline and len(lines) < 2:
            lines = {record.getMessage() for record in caplog.records if "hello from" in record.getMessage()}
            time.sleep(0.05)
        assert lines == {"pack first: hello from w1", "pack second: hello from w2"}  # env values of 3+ are redacted
    finally:
        _pack(workspace).close()


def test_an_unservable_upstream_tool_is_dropped_not_a_mount_error(tmp_path: Path, script: list[str]) -> None:
    # `second` renames `ok` onto a name `first` serves: that one tool is left out, the rest serve.
    entries = {"first": {"prefix": "a_"}, "second": {"prefix": "b_", "rename": {"ok": "a_ok"}}}
    workspace = open_workspace(_workflow(tmp_path, script, entries), env={"LORENZ_LOAD_PLUGINS": "lorenz-mcp"})
    try:
        names = {spec.name for spec in workspace.mounted.specs}
        assert names == {"a_ok", "a_big", "a_chatty", "b_big", "b_chatty"}
        assert workspace.tool_owners()["a_ok"] == "first"
        dropped = {(drop.pack, drop.tool) for drop in workspace.mounted.dropped}
        assert dropped == {("second", "a_ok")}
    finally:
        _pack(workspace).close()


def _http_upstream_growing_a_huge_listing() -> Any:
    server = MCPServer("lorenz-mcp-test-huge-listing")

    @server.tool()
    async def grow(ctx: Context) -> str:  # type: ignore[type-arg]
        """Add a tool whose description makes the listing too big, and say so."""
        server.add_tool(lambda: "huge", name="huge", description="d" * (2 * LIMIT))
        await ctx.session.send_tool_list_changed()
        return "grown"

    return server.streamable_http_app()


def test_a_relisting_over_the_cap_is_named_while_the_last_listing_serves() -> None:
    with loopback_server(_http_upstream_growing_a_huge_listing()) as server:
        options = parse_options({"url": f"{server.base_url}/mcp", "start_timeout_seconds": 60})
        bounded = Upstream(options, "bounded", (), os.environ, LIMIT)
        try:
            assert [tool["name"] for tool in bounded.tools()] == ["grow"]
            assert bounded.health() is None
            anyio.run(bounded.call, "grow", {}, None)
            deadline = time.monotonic() + 30  # a bound on waiting, not a timing assertion
            while bounded.health() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            problem = bounded.health()
            assert problem is not None and "listing its tools failed" in problem, problem
            assert "more than 100,000 bytes (server.max_result_bytes)" in problem
            assert [tool["name"] for tool in bounded.tools()] == ["grow"]
        finally:
            bounded.close()


def test_a_long_stderr_line_is_cut_and_the_next_one_logged(stderr_log: pytest.LogCaptureFixture) -> None:
    import subprocess
    import threading

    from lorenz_mcp.stderr import StderrPipe

    caplog = stderr_log
    ended = threading.Event()
    pipe = StderrPipe(lambda: "noisy", (), lambda last: ended.set())
    write = "import sys; sys.stderr.write('x' * 100000 + '\\nafter\\n')"
    child = subprocess.Popen([sys.executable, "-c", write], stderr=pipe.writer)
    pipe.start()
    child.wait(30)
    assert ended.wait(30)
    lines = [record.getMessage() for record in caplog.records]
    assert lines == ["pack noisy: " + "x" * 2000, "pack noisy: after"]


def test_a_flooding_upstreams_stderr_is_bounded_and_its_drops_counted(stderr_log: pytest.LogCaptureFixture) -> None:
    import re
    import subprocess
    import threading

    from lorenz_mcp.stderr import StderrPipe

    caplog = stderr_log
    ended = threading.Event()
    pipe = StderrPipe(lambda: "flood", (), lambda last: ended.set())
    write = "import sys; sys.stderr.write('line\\n' * 5000)"
    child = subprocess.Popen([sys.executable, "-c", write], stderr=pipe.writer)
    pipe.start()
    child.wait(30)
    assert ended.wait(30)
    messages = [record.getMessage() for record in caplog.records]
    notes = [re.fullmatch(r"pack flood: (\d+) lines of its stderr dropped \(.*\)", line) for line in messages]
    logged = [line for line, note in zip(messages, notes, strict=True) if note is None]
    assert set(logged) == {"pack flood: line"} and len(logged) < 5000
    assert len(logged) + sum(int(note[1]) for note in notes if note is not None) == 5000


def test_lorenz_check_warns_of_a_dropped_upstream_tool_and_passes(tmp_path: Path) -> None:
    import subprocess

    # Written by hand, it starts at once (the SDK's import alone takes seconds on a loaded machine,
    # which the check would wait for).
    by_hand = [sys.executable, str(Path(__file__).parent / "by_hand_upstream.py")]
    entries = {"first": {"prefix": "a_"}, "second": {"prefix": "b_", "rename": {"sum": "a_sum"}}}
    _workflow(tmp_path, by_hand, entries)
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    checked = subprocess.run(
        [sys.executable, "-m", "lorenz", "check"],
        cwd=tmp_path,
        env={**env, "LORENZ_LOAD_PLUGINS": "lorenz-mcp"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr
    assert 'pack second: tool a_sum is also declared by the "first" pack' in checked.stderr
    assert "hello from" not in checked.stderr  # a server's ordinary stderr is not echoed by the CLI


def test_an_upstream_that_exits_says_what_it_wrote_last(stderr_log: pytest.LogCaptureFixture) -> None:
    import threading

    from lorenz_mcp.stderr import StderrPipe

    caplog = stderr_log
    ended: list[tuple[str, ...]] = []
    done = threading.Event()
    pipe = StderrPipe(lambda: "dying", ("s3cret-value",), lambda last: (ended.append(tuple(last)), done.set()))
    lines = "".join(f"step {n}\\n" for n in range(8)) + "token s3cret-value refused\\n"
    child = subprocess.Popen(
        [sys.executable, "-c", f"import sys; sys.stderr.write('{lines}'); sys.exit(3)"], stderr=pipe.writer
    )
    pipe.start()
    child.wait(30)
    assert done.wait(30)
    assert ended == [("step 4", "step 5", "step 6", "step 7", "token [REDACTED] refused")]
    assert {record.levelno for record in caplog.records} == {logging.INFO}


def test_a_server_failing_the_same_way_warns_once(tmp_path: Path) -> None:
    """A server that cannot start is restarted with back-off; the first failure and restart are
    warnings, their repeats (the same error) information only, so a command's stderr or a log at
    warning level says it once."""
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("lorenz_mcp")
    logger.addHandler(handler)
    level, logger.level = logger.level, logging.INFO
    path = _workflow(tmp_path, [str(tmp_path / "missing-server")], {"gone": {}})
    workspace = open_workspace(path, env={"LORENZ_LOAD_PLUGINS": "lorenz-mcp"})
    try:
        pack = _pack(workspace)
        assert workspace.mounted.specs == ()
        deadline = time.monotonic() + 60  # a bound on the back-off, not a timing assertion
        while max((up.restarts for up in pack._running.values()), default=0) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        workspace.close()
        _pack(workspace).close()
        logger.removeHandler(handler)
        logger.setLevel(level)
    said = [(record.levelno, record.getMessage()) for record in records if "pack gone" in record.getMessage()]
    warned = [message for level_, message in said if level_ == logging.WARNING]
    assert len(warned) == 2 and "cannot start" in warned[0] and "restarting" in warned[1], said
    repeats = [message for level_, message in said if level_ == logging.INFO]
    assert sum("cannot start" in message for message in repeats) >= 2, said
