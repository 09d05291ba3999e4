"""The host's pieces without a server: result mapping, argument validation, URLs, the live
workspace's reload bookkeeping."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lorenz import ToolSpec, tool_failure, tool_success
from lorenz.host import LiveWorkspace
from lorenz.host.http.listening import display_url
from lorenz.results import ToolResult
from lorenz.toolcall.replies import call_result
from lorenz.toolcall.schemas import compile_schema, validate_arguments

ENV = {"LORENZ_LOAD_PLUGINS": ""}
OUTPUT = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
SPEC = ToolSpec(name="t", description="d", output_schema=OUTPUT)


def test_success_maps_to_text_and_structured_content() -> None:
    """A success is one pretty-JSON text item plus the same object as structuredContent."""
    result = call_result(tool_success({"b": 1, "a": [1, 2]}))
    assert result.is_error is False
    assert [item["type"] for item in result.wire()["content"]] == ["text"]
    assert result.text == json.dumps({"b": 1, "a": [1, 2]}, indent=2)
    assert result.structured_content == {"b": 1, "a": [1, 2]}


@pytest.mark.parametrize(
    "result",
    [
        tool_success({"b": 1, "a": [1, 2]}),
        tool_success(),
        ToolResult(success=False, error="broke"),
        tool_success([1, "two"]),
        tool_success({"v": float("nan"), "s": "lone \udc80"}),
    ],
)
def test_the_wire_reply_is_the_sdks_dump_of_its_model(result: ToolResult) -> None:
    """What ``tools/call`` hands the SDK is what the SDK's own dump of the same result would be."""
    import mcp_types as types

    reply = call_result(result)
    model = types.CallToolResult(
        content=[types.TextContent(text=reply.text)],
        structured_content=reply.structured_content,
        is_error=reply.is_error,
    )
    assert reply.wire() == model.model_dump(by_alias=True, mode="json", exclude_none=True)


def test_empty_success_is_empty_object() -> None:
    """A success without a result is `{}`."""
    result = call_result(tool_success())
    assert result.text == "{}"
    assert result.structured_content == {}


def test_failure_without_result_uses_error_message() -> None:
    """A bare failure becomes `{"error": {"message": ...}}` with isError."""
    result = call_result(ToolResult(success=False, error="broke"))
    assert result.is_error is True
    assert json.loads(result.text) == {"error": {"message": "broke"}}


def test_non_ascii_is_kept_and_unserialisable_values_become_strings() -> None:
    """Text keeps non-ASCII characters; a datetime in a payload is shown as its string."""
    moment = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    result = call_result(tool_success({"title": "Grüße", "at": moment}))
    assert '"Grüße"' in result.text
    assert result.structured_content == {"title": "Grüße", "at": str(moment)}


def test_output_schema_mismatch_becomes_an_error_result() -> None:
    """A success that does not match the advertised outputSchema is reported as a tool error."""
    validator = compile_schema(OUTPUT)
    good = call_result(tool_success({"sum": 3}), SPEC, validator)
    assert good.is_error is False
    bad = call_result(tool_success({"sum": "three"}), SPEC, validator)
    assert bad.is_error is True
    message = json.loads(bad.text)["error"]["message"]
    assert (
        message
        == "tool t returned a result that does not match its outputSchema: $.sum: 'three' is not of type 'integer'"
    )
    not_object = call_result(tool_success([1]), SPEC, validator)
    assert not_object.is_error is True


def test_error_results_skip_output_validation() -> None:
    """Failures keep their own payload even when the tool advertises an outputSchema."""
    result = call_result(tool_failure("nope"), SPEC, compile_schema(OUTPUT))
    assert result.is_error is True
    assert result.structured_content == {"error": {"message": "nope"}}


def test_validate_arguments_names_the_field(host_pack: ModuleType) -> None:
    """The failure names the offending argument and carries its JSON path."""
    validator = compile_schema(host_pack.ADD_SCHEMA)
    assert validate_arguments("add", {"a": 1, "b": 2}, validator) is None
    extra = validate_arguments("add", {"a": 1, "b": 2, "c": 3}, validator)
    assert extra is not None and extra.error is not None
    assert extra.error == 'invalid arguments for tool add: Unrecognized key: "c"'
    wrong = validate_arguments("add", {"a": 1, "b": None}, validator)
    assert wrong is not None
    assert wrong.error == "invalid arguments for tool add: b: must be an integer"
    assert wrong.result["error"]["path"] == "$.b"


def test_invalid_schema_is_not_enforced() -> None:
    """A pack's schema that is not valid JSON Schema is ignored rather than failing every call."""
    assert compile_schema({"type": "no-such-type"}) is None
    assert compile_schema(None) is None


@pytest.mark.parametrize(
    ("host", "url"),
    [
        ("127.0.0.1", "http://127.0.0.1:8/mcp"),
        ("0.0.0.0", "http://127.0.0.1:8/mcp"),
        ("", "http://127.0.0.1:8/mcp"),
        ("::", "http://[::1]:8/mcp"),
        ("::1", "http://[::1]:8/mcp"),
        ("example.internal", "http://example.internal:8/mcp"),
    ],
)
def test_display_url(host: str, url: str) -> None:
    """The printed URL reaches a wildcard bind through loopback and brackets IPv6."""
    assert display_url(host, 8) == url


def _touch(path: Path, text: str) -> None:
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_live_workspace_reloads_once_per_change(tmp_path: Path, host_pack: ModuleType) -> None:
    """check() swaps in a new snapshot once per file change and bumps the generation."""
    workflow = tmp_path / "WORKFLOW.md"
    _touch(workflow, "---\ntracker:\n  kind: demo\n---\n")
    live = LiveWorkspace.open(None, cwd=tmp_path, env=ENV, plugins=[host_pack])
    assert live.watched_path == workflow
    assert live.check() is False
    _touch(workflow, "---\ntracker:\n  kind: demo\ntools:\n  extra: {}\n---\n")
    assert live.check() is True
    assert live.check() is False
    snapshot = live.current()
    assert snapshot.generation == 1
    assert snapshot.pack_of("extra_ping") == "extra"


def test_live_workspace_without_reload_pins_the_config(tmp_path: Path, host_pack: ModuleType) -> None:
    """reload=False serves the first config whatever happens on disk."""
    workflow = tmp_path / "WORKFLOW.md"
    _touch(workflow, "---\ntracker:\n  kind: demo\n---\n")
    live = LiveWorkspace.open(None, cwd=tmp_path, env=ENV, plugins=[host_pack], reload=False)
    _touch(workflow, "---\ntracker:\n  kind: demo\ntools:\n  extra: {}\n---\n")
    assert "extra_ping" not in live.current().by_name


def test_embedded_default_picks_up_a_new_workflow(tmp_path: Path, host_pack: ModuleType) -> None:
    """A server started without WORKFLOW.md loads one created later in its directory."""
    import lorenz

    class Local:
        kind = "local"

        def create_client(self, settings: object, context: object) -> object:
            raise NotImplementedError

        def default_tool_packs(self, settings: object) -> list[str]:
            return []

    local = ModuleType("fake_local")

    @lorenz.hookimpl
    def lorenz_register_trackers(register: object) -> None:
        register(Local())  # type: ignore[operator]

    local.lorenz_register_trackers = lorenz_register_trackers  # type: ignore[attr-defined]
    live = LiveWorkspace.open(None, cwd=tmp_path, env=ENV, plugins=[host_pack, local])
    assert live.snapshot().workspace.embedded_default is True
    assert live.snapshot().specs == ()
    _touch(tmp_path / "WORKFLOW.md", "---\ntracker:\n  kind: demo\n---\n")
    assert next(spec.name for spec in live.current().specs) == "demo_add"


def test_portability_problems_flag_what_clients_reject() -> None:
    """Tool names outside MCP's pattern, empty descriptions and non-object schemas are flagged."""
    from lorenz.host.mcp.server import portability_problems

    assert portability_problems(ToolSpec(name="ok_name.v1", description="Fine.")) == []
    problems = portability_problems(
        ToolSpec(name="bad name", description=" ", input_schema={"type": "array"}, output_schema={"type": "string"})
    )
    assert len(problems) == 4


@pytest.mark.anyio
async def test_hung_tool_times_out_as_error_result() -> None:
    """A pack that never returns is abandoned after the call timeout with an isError result."""
    import anyio

    class Hangs:
        name = "hangs"

        async def execute_tool(self, name: str, input: object, context: object) -> ToolResult:
            await anyio.sleep_forever()
            raise AssertionError

    result = await _run(Hangs(), "wait", None, time_limit=0.05)
    assert result.success is False
    assert result.error == "tool wait did not finish within 0.05 s (server.tool_timeout_seconds)"


class _Raises:
    name = "raises"

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def execute_tool(self, name: str, input: object, context: object) -> ToolResult:
        raise self.error


async def _run(pack: object, name: str, context: object, *, time_limit: float = 5.0) -> ToolResult:
    from lorenz.toolcall.execution import ToolRunner

    outcome = await ToolRunner().run(pack, name, {}, context, time_limit=time_limit, concurrency=4)  # type: ignore[arg-type]
    return outcome.result


def _context(secrets: frozenset[str] = frozenset()) -> object:
    import httpx

    from lorenz import Settings, ToolContext

    return ToolContext(settings=Settings(secrets=secrets), http=httpx.AsyncClient())


@pytest.mark.anyio
async def test_owned_tool_exception_is_redacted() -> None:
    """A pack's exception message reaches the agent with the workflow's secrets redacted."""
    pack = _Raises(RuntimeError("boom Authorization: Bearer tok-123456 key=tok-123456"))
    result = await _run(pack, "t", _context(frozenset({"tok-123456"})))
    assert result.success is False
    assert "tok-123456" not in str(result.error)
    assert result.error == "boom Authorization: Bearer [REDACTED] key=[REDACTED]"


@pytest.mark.anyio
async def test_pack_timeout_error_is_not_the_host_timeout() -> None:
    """A TimeoutError raised by the pack itself is reported with its own message, not as the call timeout."""
    result = await _run(_Raises(TimeoutError("socket read timed out")), "t", _context())
    assert result.error == "socket read timed out"


def test_non_finite_numbers_are_null_in_text_and_structured_content() -> None:
    """NaN/Infinity become null in both the (strictly valid JSON) text and structuredContent."""

    def strict(constant: str) -> None:
        raise ValueError(constant)

    result = call_result(tool_success({"v": float("nan"), "w": [float("inf"), 1.5], "d": datetime(2020, 1, 1)}))
    text = json.loads(result.text, parse_constant=strict)
    assert text == {"v": None, "w": [None, 1.5], "d": "2020-01-01 00:00:00"}
    assert result.structured_content == text


def test_same_size_edit_and_atomic_replace_are_seen(tmp_path: Path, host_pack: ModuleType) -> None:
    """An edit keeping size and mtime, and an atomic replace, are both picked up by check()."""
    workflow = tmp_path / "WORKFLOW.md"
    _touch(workflow, "---\ntracker:\n  kind: demo\ntools:\n  extra: {}\n---\n")
    stat = workflow.stat()
    live = LiveWorkspace.open(None, cwd=tmp_path, env=ENV, plugins=[host_pack])
    workflow.write_text("---\ntracker:\n  kind: demo\ntools:\n  extr_: {}\n---\n")  # same size
    assert workflow.stat().st_size == stat.st_size
    os.utime(workflow, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert live.check() is False  # seen (an unknown pack), so not served
    assert live.last_error is not None
    replacement = tmp_path / "new.md"
    replacement.write_text("---\ntracker:\n  kind: demo\ntools:\n  extra: {}\n---\n")
    os.utime(replacement, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    os.replace(replacement, workflow)
    assert live.check() is True
    assert live.last_error is None


def test_file_changing_while_loading_is_read_again_without_error(
    tmp_path: Path, host_pack: ModuleType, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A half-written file that changes again during the load is re-read; no failure is logged."""
    import logging

    from lorenz.host.reload import live as live_module

    workflow = tmp_path / "WORKFLOW.md"
    _touch(workflow, "---\ntracker:\n  kind: demo\n---\n")
    live = LiveWorkspace.open(None, cwd=tmp_path, env=ENV, plugins=[host_pack])
    _touch(workflow, "---\ntracker:\n  ki")  # a save caught halfway
    real_open = live_module.open_workspace
    loads = []

    def open_while_the_writer_finishes(*args: object, **kwargs: object) -> object:
        loads.append(args)
        try:
            return real_open(*args, **kwargs)  # type: ignore[arg-type]
        finally:
            if len(loads) == 1:
                _touch(workflow, "---\ntracker:\n  kind: demo\ntools:\n  extra: {}\n---\n")

    monkeypatch.setattr(live_module, "open_workspace", open_while_the_writer_finishes)
    with caplog.at_level(logging.ERROR, logger="lorenz.host"):
        assert live.check() is True
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert len(loads) == 2
    assert live.snapshot().pack_of("extra_ping") == "extra"


def test_reload_failure_log_is_redacted(
    tmp_path: Path, host_pack: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    """The reload-failure log line redacts the last good config's secrets."""
    import logging

    workflow = tmp_path / "WORKFLOW.md"
    _touch(workflow, "---\ntracker:\n  kind: demo\nserver:\n  token: $MY_TOKEN\n---\n")
    live = LiveWorkspace.open(None, cwd=tmp_path, env={**ENV, "MY_TOKEN": "tok-SECRET-42"}, plugins=[host_pack])

    def refuse(snapshot: object) -> None:
        raise RuntimeError("cannot use tok-SECRET-42")

    live.prepare = refuse
    _touch(workflow, "---\ntracker:\n  kind: demo\nserver:\n  token: $MY_TOKEN\ntools:\n  extra: {}\n---\n")
    with caplog.at_level(logging.ERROR, logger="lorenz.host"):
        assert live.check() is False
    logged = " ".join(record.getMessage() for record in caplog.records)
    assert "cannot use [REDACTED]" in logged
    assert "tok-SECRET-42" not in logged + str(live.last_error)


@pytest.mark.anyio
async def test_async_reload_runs_once_off_the_event_loop(tmp_path: Path, host_pack: ModuleType) -> None:
    """current_async() reloads in a worker thread, once for concurrent callers, without blocking the loop."""
    import time

    import anyio

    workflow = tmp_path / "WORKFLOW.md"
    _touch(workflow, "---\ntracker:\n  kind: demo\n---\n")
    live = LiveWorkspace.open(None, cwd=tmp_path, env=ENV, plugins=[host_pack])
    reloads = []

    def slow(snapshot: object) -> None:  # like `op read` resolving a secret
        reloads.append(snapshot)
        time.sleep(0.5)

    live.prepare = slow
    _touch(workflow, "---\ntracker:\n  kind: demo\ntools:\n  extra: {}\n---\n")
    ticks = 0
    generations: list[int] = []

    async def tick() -> None:
        nonlocal ticks
        while True:
            await anyio.sleep(0.02)
            ticks += 1

    async def request() -> None:
        generations.append((await live.current_async()).generation)

    async with anyio.create_task_group() as tg:
        tg.start_soon(tick)
        async with anyio.create_task_group() as requests:
            for _ in range(5):
                requests.start_soon(request)
        tg.cancel_scope.cancel()
    assert len(reloads) == 1
    assert generations == [1] * 5
    assert ticks >= 10  # the loop kept running during the 0.5 s reload


@pytest.mark.anyio
async def test_slow_reload_serves_the_last_good_snapshot_meanwhile(
    tmp_path: Path, host_pack: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reload slower than the wait bound serves the old snapshot promptly, and the new one once done."""
    import threading

    import anyio

    from lorenz.host.reload import background

    monkeypatch.setattr(background, "RELOAD_WAIT_SECONDS", 0.1)
    workflow = tmp_path / "WORKFLOW.md"
    _touch(workflow, "---\ntracker:\n  kind: demo\n---\n")
    live = LiveWorkspace.open(None, cwd=tmp_path, env=ENV, plugins=[host_pack])
    vault = threading.Event()  # like `op read` with a slow vault: answers once the test lets it
    live.prepare = lambda snapshot: vault.wait(30)
    _touch(workflow, "---\ntracker:\n  kind: demo\ntools:\n  extra: {}\n---\n")
    with anyio.fail_after(10):  # served while the reload still waits on the vault
        assert (await live.current_async()).generation == 0
        assert (await live.current_async()).generation == 0
    vault.set()
    with anyio.fail_after(5):
        while live.snapshot().generation == 0:  # noqa: ASYNC110 (the reload thread sets no event)
            await anyio.sleep(0.02)
    assert (await live.current_async()).pack_of("extra_ping") == "extra"


@pytest.mark.anyio
async def test_a_responses_writes_leave_as_one_send() -> None:
    """uvicorn writes a response's head and body apart; while other requests are in flight or other
    work is due in the loop's turn, the host's protocol sends them as one write (one packet, one
    wake-up of the client), flushed at the end of the loop turn or before a close; a request served
    alone is written as it comes."""
    import asyncio

    from lorenz.host.http.protocol import ConnectionPool, _JoinedWrites

    class Recorder:
        def __init__(self) -> None:
            self.calls: list[tuple[str, bytes]] = []

        def write(self, data: bytes) -> None:
            self.calls.append(("write", data))

        def close(self) -> None:
            self.calls.append(("close", b""))

        def abort(self) -> None:
            self.calls.append(("abort", b""))

        def is_closing(self) -> bool:
            return False

        def get_extra_info(self, name: str) -> str:
            return f"info:{name}"

    loop = asyncio.get_running_loop()
    pool = ConnectionPool(10)
    pool.open = 1  # this connection alone, busy with its request
    alone = Recorder()
    assert not loop._ready  # type: ignore[attr-defined]  # nothing else due in this turn
    _JoinedWrites(alone, loop, pool).write(b"HTTP/1.1 200 OK\r\n\r\n")  # type: ignore[arg-type]
    assert alone.calls == [("write", b"HTTP/1.1 200 OK\r\n\r\n")]

    # The other connections' reads are due in this turn (under load, each request is answered inside
    # its own data_received, so the others still look idle): joined too.
    loop.call_soon(lambda: None)
    busy = Recorder()
    under_load = _JoinedWrites(busy, loop, pool)  # type: ignore[arg-type]
    under_load.write(b"HTTP/1.1 200 OK\r\n\r\n")
    under_load.write(b"{}")
    assert busy.calls == []
    under_load.flush()  # as the protocol does when the response is complete
    assert busy.calls == [("write", b"HTTP/1.1 200 OK\r\n\r\n{}")]
    await asyncio.sleep(0)

    pool.open = 2  # another request in flight
    real = Recorder()
    joined = _JoinedWrites(real, asyncio.get_running_loop(), pool)  # type: ignore[arg-type]
    joined.write(b"HTTP/1.1 200 OK\r\n\r\n")
    joined.write(b"")
    joined.write(b"{}")
    assert real.calls == []
    other = Recorder()
    _JoinedWrites(other, asyncio.get_running_loop(), pool).write(b"too")  # type: ignore[arg-type]
    assert other.calls == []
    await asyncio.sleep(0)  # the end of the turn: every connection that wrote in it is flushed
    assert real.calls == [("write", b"HTTP/1.1 200 OK\r\n\r\n{}")]
    assert other.calls == [("write", b"too")]
    joined.write(b"bye")
    joined.close()  # what is pending goes before the close
    assert real.calls[1:] == [("write", b"bye"), ("close", b"")]
    joined.write(b"lost")
    joined.abort()
    await asyncio.sleep(0)
    assert real.calls[3:] == [("abort", b"")]
    assert joined.get_extra_info("peername") == "info:peername"


@pytest.mark.anyio
async def test_a_request_that_arrives_whole_is_answered_before_the_loop_turns() -> None:
    """The host's protocol runs a new request's task at once, inside ``data_received``: an app that
    answers without waiting has written its response by the time the bytes are taken in."""
    import asyncio

    from uvicorn.server import ServerState

    from lorenz.host.http.protocol import HostConfig, ReadDeadlineProtocol

    seen: list[object] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(asyncio.current_task())
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    class Transport(asyncio.Transport):
        def __init__(self) -> None:
            super().__init__()
            self.sent = b""

        def write(self, data: Any) -> None:
            self.sent += bytes(data)

        def is_closing(self) -> bool:
            return False

        def close(self) -> None:
            pass

        def get_extra_info(self, name: str, default: Any = None) -> Any:
            return {"peername": ("127.0.0.1", 5000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    config = HostConfig(app, read_timeout=lambda: 30.0, log_level="warning", lifespan="off")
    config.load()
    protocol = ReadDeadlineProtocol(config, ServerState(), {})
    transport = Transport()
    protocol.connection_made(transport)
    protocol.data_received(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")
    assert transport.sent.startswith(b"HTTP/1.1 200 ") and transport.sent.endswith(b"ok")
    assert len(seen) == 1 and seen[0] is not asyncio.current_task()  # the request's own task
    assert asyncio.current_task() is not None  # the caller's task is current again
    protocol.data_received(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")  # keep-alive
    assert transport.sent.count(b"HTTP/1.1 200 ") == 2
    protocol.connection_lost(None)


def test_a_port_in_use_names_a_free_one(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 44: ``Address already in use`` says what to serve with instead, a port free right now."""
    import re
    import socket

    from lorenz.host.http.listening import listen

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert listen("127.0.0.1", port) is None
    err = capsys.readouterr().err
    found = re.fullmatch(
        rf"lorenz: cannot listen on 127\.0\.0\.1:{port}: Address already in use; "
        r"serve with --port 0 to take a free port, or --port (\d+) \(free now\)\n",
        err,
    )
    assert found is not None, err
    assert int(found.group(1)) not in (0, port)
