"""The lean path for stateless JSON requests answers exactly as the SDK's transport does.

Every request below is sent twice to one server: once answered by the lean path
(:mod:`lorenz.host.mcp.stateless`), once with the lean path switched off so the SDK's Streamable HTTP
transport answers it. Status and JSON-RPC reply must be the same, in both protocol eras, for
results, tool errors, JSON-RPC errors and the 2026-07-28 header ladder.
"""

from __future__ import annotations

import contextlib
import gc
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest
import uvicorn

from lorenz import ToolSpec, hookimpl, tool_success
from lorenz.host import LiveWorkspace, RunningServer, serve_in_thread
from lorenz.host.app import build_app
from lorenz.host.http.loopback import serve_app_in_thread
from lorenz.host.http.protocol import HostConfig
from lorenz.host.mcp import inbound, stateless

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "lean-test", "version": "1"},
}
JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, host_pack: ModuleType) -> Iterator[RunningServer]:
    directory: Path = tmp_path_factory.mktemp("lean")
    (directory / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\n---\nBe brief.\n")
    with serve_in_thread(cwd=directory, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[host_pack]) as running:
        yield running


Case = tuple[dict[str, Any], dict[str, str] | list[tuple[str, str]]]


def legacy(
    method: str, params: dict[str, Any] | None = None, *, id: Any = 7, version: str | None = "2025-11-25"
) -> Case:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    headers = dict(JSON) if version is None else {**JSON, "MCP-Protocol-Version": version}
    return message, headers


def modern(method: str, params: dict[str, Any] | None = None, *, name: str | None = None, **extra: str) -> Case:
    message = {"jsonrpc": "2.0", "id": "m-1", "method": method, "params": {**(params or {}), "_meta": MODERN_META}}
    headers = {**JSON, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, **extra}
    if name is not None:
        headers["Mcp-Name"] = name
    return message, headers


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def deep_call(depth: int) -> Case:
    return legacy("tools/call", {"name": "demo_add", "arguments": {"a": 1, "b": 2, "c": nested(depth)}})


CALL = modern("tools/call", {"name": "demo_add", "arguments": {"a": 1, "b": 2}}, name="demo_add")
CASES: dict[str, Case] = {
    "legacy tools/call": legacy("tools/call", {"name": "demo_add", "arguments": {"a": 1, "b": 2}}),
    "legacy no version header": legacy("tools/call", {"name": "demo_add", "arguments": {"a": 2, "b": 2}}, version=None),
    "legacy 2025-06-18": legacy("tools/list", version="2025-06-18"),
    "legacy string id": legacy("tools/call", {"name": "demo_add", "arguments": {"a": 1, "b": 2}}, id="abc"),
    "legacy tool failure": legacy("tools/call", {"name": "demo_fail", "arguments": {}}),
    "legacy tool raises": legacy("tools/call", {"name": "demo_boom", "arguments": {}}),
    "legacy bad arguments": legacy("tools/call", {"name": "demo_add", "arguments": {"a": "one"}}),
    "legacy unknown tool": legacy("tools/call", {"name": "nope", "arguments": {}}),
    "legacy no tool name": legacy("tools/call", {"arguments": {}}),
    "legacy tools/list": legacy("tools/list"),
    "legacy initialize": legacy(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    ),
    "legacy ping": legacy("ping"),
    "legacy unknown method": legacy("resources/list"),
    "legacy custom method": legacy("acme/frobnicate", {"x": 1}),
    "legacy Accept application/*": (
        legacy("tools/list")[0],
        {**legacy("tools/list")[1], "Accept": "application/*;q=0.9, text/event-stream"},
    ),
    "legacy Accept */*": (legacy("tools/list")[0], {**legacy("tools/list")[1], "Accept": "*/*"}),
    "modern tools/call": modern("tools/call", {"name": "demo_add", "arguments": {"a": 1, "b": 2}}, name="demo_add"),
    "modern tools/list": modern("tools/list"),
    "modern discover": modern("server/discover"),
    "modern tool failure": modern("tools/call", {"name": "demo_fail", "arguments": {}}, name="demo_fail"),
    "modern bad arguments": modern("tools/call", {"name": "demo_add", "arguments": {"b": "x"}}, name="demo_add"),
    "modern unknown method": modern("resources/list"),
    "modern missing Mcp-Name": modern("tools/call", {"name": "demo_add", "arguments": {"a": 1, "b": 2}}),
    "modern Mcp-Name mismatch": modern("tools/call", {"name": "demo_add", "arguments": {"a": 1, "b": 2}}, name="x"),
    "modern Mcp-Method mismatch": modern("tools/list", **{"Mcp-Method": "tools/call"}),
    "modern stray Mcp-Param": modern(
        "tools/call", {"name": "demo_add", "arguments": {"a": 1, "b": 2}}, name="demo_add", **{"Mcp-Param-A": "9"}
    ),
    "modern unsupported version": (
        modern("tools/list")[0],
        {**modern("tools/list")[1], "MCP-Protocol-Version": "2099-01-01"},
    ),
    # The SDK's transport compares the media type case and all, and its parser stops at a depth.
    "legacy Content-Type Application/JSON": (
        legacy("tools/list")[0],
        {**legacy("tools/list")[1], "Content-Type": "Application/JSON"},
    ),
    "modern Content-Type with parameters": (CALL[0], {**CALL[1], "Content-Type": "application/json; charset=utf-8"}),
    "legacy arguments as deep as the SDK parses": deep_call(198),
    "legacy arguments deeper than the SDK parses": deep_call(199),
    "legacy many shallow brackets": legacy(
        "tools/call", {"name": "demo_add", "arguments": {"a": 1, "b": 2, "c": [{} for _ in range(300)]}}
    ),
    # A routing header sent twice, even with one value, is the SDK's to refuse.
    "modern repeated Mcp-Method": (CALL[0], [*CALL[1].items(), ("Mcp-Method", "tools/call")]),
    "modern repeated Mcp-Name": (CALL[0], [*CALL[1].items(), ("mcp-name", "demo_fail")]),
    "modern repeated version": (CALL[0], [*CALL[1].items(), ("MCP-Protocol-Version", "2026-07-28")]),
}


def answer(
    server: RunningServer, message: dict[str, Any], headers: dict[str, str] | list[tuple[str, str]]
) -> tuple[int, Any]:
    response = httpx.post(server.url, content=json.dumps(message), headers=headers, timeout=30)
    assert response.headers["content-type"].startswith("application/json"), response.text
    return response.status_code, response.json()


@pytest.mark.parametrize("case", CASES)
def test_the_lean_path_answers_as_the_sdk_transport(
    server: RunningServer, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    message, headers = CASES[case]
    lean = answer(server, message, headers)
    with monkeypatch.context() as patch:
        patch.setattr(stateless, "plain_json_request", lambda scope: None)  # everything to the SDK
        sdk = answer(server, message, headers)
    assert lean == sdk


@pytest.mark.parametrize(
    "accept",
    [None, b"", b"application/json", b"Application/JSON; q=1", b"text/event-stream", b"application/*", b"*/*", b"x"],
)
def test_the_accept_verdict_is_the_sdks(accept: bytes | None) -> None:
    """Remembered per value, the verdict is what the SDK's check says of a request with that header."""
    from mcp.server.streamable_http import check_accept_headers
    from starlette.requests import Request

    headers = [] if accept is None else [(b"accept", accept)]
    expected, _ = check_accept_headers(Request({"type": "http", "headers": headers}))
    assert inbound.reads_json(accept) is expected
    assert inbound.reads_json(accept) is expected  # remembered


def test_the_lean_path_serves_the_common_requests(server: RunningServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cases above do go through the lean path (else the comparison proves nothing)."""
    routed: list[bool] = []
    original = stateless.StatelessEndpoint._route

    def spy(self: stateless.StatelessEndpoint, scope: Any, request: Any, message: dict[str, Any]) -> Any:
        route = original(self, scope, request, message)
        routed.append(route is not None)
        return route

    monkeypatch.setattr(stateless.StatelessEndpoint, "_route", spy)
    cases = ("legacy tools/call", "legacy unknown method", "modern tools/call", "modern Mcp-Name mismatch")
    for case in (*cases, "modern repeated Mcp-Method"):
        answer(server, *CASES[case])
    assert routed == [True, True, True, False, False]  # a ladder rejection is the SDK's to word
    status, reply = answer(server, *CASES["modern repeated Mcp-Name"])
    assert status == 400 and "mcp-name" in reply["error"]["message"].lower(), reply


class WaitingPack:
    """``lean_wait`` waits until cancelled, and says so in ``events``."""

    name = "lean"

    def __init__(self) -> None:
        self.events: list[str] = []

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [ToolSpec(name="lean_wait", description="Wait until cancelled.")]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        self.events.append("started")
        try:
            await anyio.sleep(60)
        except BaseException:
            self.events.append("cancelled")
            raise
        return tool_success({})


class WaitingPlugin:
    def __init__(self) -> None:
        self.pack = WaitingPack()

    @hookimpl
    def lorenz_register_tool_packs(self, register: Any) -> None:
        register(self.pack)


@pytest.mark.parametrize("protocol", ["lorenz", "uvicorn"])
def test_a_dropped_connection_cancels_the_call_on_the_lean_path(
    tmp_path: Path, protocol: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Stateless JSON clients cancel by going away: under the host's own HTTP protocol (which says
    so) and under plain uvicorn (a watch on ``receive``) alike; the server logs no error for it."""
    plugin = WaitingPlugin()
    (tmp_path / "WORKFLOW.md").write_text("---\ntools:\n  lean: {}\n---\n")
    message, headers = legacy("tools/call", {"name": "lean_wait", "arguments": {}})
    live = LiveWorkspace.open(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[plugin], reload=False)
    app = build_app(live, bind_host="127.0.0.1")
    options: dict[str, Any] = {"config": uvicorn.Config}
    if protocol == "lorenz":
        options = {"config": HostConfig, "read_timeout": lambda: 30.0}
    with contextlib.ExitStack() as cleanup, serve_app_in_thread(app, lifespan="on", **options) as server:
        uvicorn_log = logging.getLogger("uvicorn.error")  # configured at start; not propagated to caplog
        uvicorn_log.addHandler(caplog.handler)
        cleanup.callback(uvicorn_log.removeHandler, caplog.handler)
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(server.base_url + "/mcp", content=json.dumps(message), headers=headers, timeout=1.0)
        deadline = time.monotonic() + 10
        while plugin.pack.events != ["started", "cancelled"] and time.monotonic() < deadline:
            time.sleep(0.02)
    assert plugin.pack.events == ["started", "cancelled"]
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR] == []


class HeaderPack:
    """``lean_route`` mirrors its ``region`` argument into an ``Mcp-Param-Region`` header."""

    name = "lean_headers"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        schema = {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
            "required": ["region"],
            "additionalProperties": False,
        }
        return [ToolSpec(name="lean_route", description="Route by region.", input_schema=schema)]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        return tool_success({"region": input["region"]})


class HeaderPlugin:
    @hookimpl
    def lorenz_register_tool_packs(self, register: Any) -> None:
        register(HeaderPack())


@pytest.mark.parametrize(
    ("header", "served"),
    [({"Mcp-Param-Region": "eu"}, True), ({"Mcp-Param-Region": "us"}, False), ({}, False)],
    ids=["agrees", "disagrees", "missing"],
)
def test_mcp_param_headers_are_checked_on_the_lean_path_as_by_the_sdk(
    tmp_path: Path, header: dict[str, str], served: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool whose schema declares ``x-mcp-header``: its header must agree with the argument."""
    (tmp_path / "WORKFLOW.md").write_text("---\ntools:\n  lean_headers: {}\n---\n")
    message, headers = modern("tools/call", {"name": "lean_route", "arguments": {"region": "eu"}}, name="lean_route")
    with serve_in_thread(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[HeaderPlugin()]) as running:
        lean = answer(running, message, {**headers, **header})
        with monkeypatch.context() as patch:
            patch.setattr(stateless, "plain_json_request", lambda scope: None)
            sdk = answer(running, message, {**headers, **header})
    assert lean == sdk
    assert ("result" in lean[1]) is served, lean
    if not served:
        assert lean[0] == 400 and "Mcp-Param-Region" in lean[1]["error"]["message"], lean


@pytest.mark.anyio
async def test_a_connection_teardown_a_handler_registered_still_runs() -> None:
    """The lean path skips the SDK's shielded teardown only when nothing was registered on the
    connection's exit stack: what was registered (by a handler or a middleware) still runs."""
    import mcp_types as types
    from mcp.server import Server
    from mcp.shared.message import ServerMessageMetadata

    closed: list[str] = []

    async def on_ping(ctx: Any, params: Any) -> types.EmptyResult:
        assert closed == []
        return types.EmptyResult()

    server: Server[Any] = Server("teardown", on_ping=on_ping)
    exchange = stateless._Exchange(1, ServerMessageMetadata())
    connection = inbound.born_ready("2025-11-25")
    connection.exit_stack.callback(closed.append, "closed")
    result = await stateless._serve_one(server, exchange, "ping", None, connection=connection, lifespan_state=None)
    assert result == {}
    assert closed == ["closed"]


def test_the_born_ready_connection_is_the_sdks_envelope_connection() -> None:
    from mcp.server.connection import Connection

    ours, sdks = inbound.born_ready("2025-06-18"), Connection.from_envelope("2025-06-18", None, None)
    for attribute in ("protocol_version", "session_id", "client_params", "client_capabilities", "outbound", "state"):
        assert getattr(ours, attribute) == getattr(sdks, attribute), attribute
    assert ours.initialized.is_set() and sdks.initialized.is_set()
    assert ours.has_standalone_channel is sdks.has_standalone_channel is False


@pytest.mark.parametrize(
    ("info", "capabilities"),
    [
        ({"name": "agent", "version": "1"}, {"roots": {"listChanged": True}}),
        (None, {}),
        ({"name": 3}, "not capabilities"),
    ],
)
def test_a_connection_from_a_remembered_envelope_is_the_sdks(info: Any, capabilities: Any) -> None:
    """The connection of an envelope seen before is the one ``Connection.from_envelope`` makes of
    the raw values, well-formed or not."""
    from mcp.server.connection import Connection

    meta = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": capabilities}
    del meta["io.modelcontextprotocol/clientInfo"]
    if info is not None:
        meta["io.modelcontextprotocol/clientInfo"] = info
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    routing = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
    expected = Connection.from_envelope("2026-07-28", info, capabilities)
    for _ in range(2):  # made by the SDK, then born ready from what it made
        ours = inbound.envelope_route(message, routing)
        assert ours is not None
        for attribute in ("protocol_version", "session_id", "client_params", "client_capabilities", "outbound"):
            assert getattr(ours, attribute) == getattr(expected, attribute), attribute
        assert ours.initialized.is_set()


@pytest.mark.parametrize(
    ("routing", "params", "admitted"),
    [
        ({"mcp-name": "demo_add"}, {"name": "demo_add"}, True),
        ({"mcp-name": "demo_fail"}, {"name": "demo_add"}, False),
        ({"mcp-name": "demo_add"}, {"name": "demo_fail"}, False),
        ({"mcp-name": "demo_add", "mcp-protocol-version": "2025-11-25"}, {"name": "demo_add"}, False),
        ({"mcp-name": "demo_add", "mcp-method": "tools/list"}, {"name": "demo_add"}, False),
        ({}, {"name": "demo_add"}, False),
    ],
)
def test_the_remembered_ladder_verdict_is_the_sdks(routing: dict[str, str], params: Any, admitted: bool) -> None:
    """Each combination of what the inbound ladder reads gets the SDK's own verdict, the first time
    and every time after (a remembered verdict is never another combination's)."""
    from mcp.shared.inbound import InboundModernRoute, classify_inbound_request

    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", **routing}
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {**params, "_meta": MODERN_META}}
    assert isinstance(classify_inbound_request(message, headers=headers), InboundModernRoute) is admitted
    for _ in range(3):
        assert (inbound.envelope_route(message, headers) is not None) is admitted


def demo_app(directory: Path, host_pack: ModuleType) -> Any:
    """The host's app on the demo tracker, to call in-process."""
    (directory / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\n---\n")
    live = LiveWorkspace.open(cwd=directory, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[host_pack], reload=False)
    return build_app(live, bind_host="127.0.0.1")


def asgi_request(era: str) -> tuple[dict[str, Any], bytes]:
    """The ASGI scope and body of one ``demo_add`` call in ``era``."""
    params = {"name": "demo_add", "arguments": {"a": 1, "b": 2}}
    message, headers = (
        modern("tools/call", params, name="demo_add") if era == "modern" else legacy("tools/call", params)
    )
    body = json.dumps(message).encode()
    raw = [(b"host", b"127.0.0.1:8000"), *((k.lower().encode(), v.encode()) for k, v in headers.items())]
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
        "path": "/mcp", "raw_path": b"/mcp", "query_string": b"", "root_path": "",
        "headers": [*raw, (b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8000),
    }  # fmt: skip
    return scope, body


async def call_in_process(app: Any, era: str, on_send: Any = None) -> bytes:
    """One ``demo_add`` call through ``app``; its answer's body."""
    scope, body = asgi_request(era)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(event: dict[str, Any]) -> None:
        sent.append(event)
        if on_send is not None:
            on_send(event)

    await app(scope, receive, send)
    return b"".join(event.get("body", b"") for event in sent[1:])


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_call_is_recorded_after_its_answer_is_written(
    tmp_path: Path, host_pack: ModuleType, era: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client does not wait for the host's bookkeeping: the lean path writes the answer, then
    records the call (before the request ends, so the next request sees it). A record that fails
    there is logged, and the request still ends well."""
    app = demo_app(tmp_path, host_pack)
    recorder = app.state.host.recorder
    counted_at_body: list[int] = []

    def on_send(event: dict[str, Any]) -> None:
        if event["type"] == "http.response.body":
            counted_at_body.append(len(recorder.stats.snapshot()[0]))

    assert b'"isError":false' in await call_in_process(app, era, on_send)
    assert counted_at_body == [0]  # not recorded yet when the answer went out
    [record], _ = recorder.stats.snapshot()
    assert record.tool == "demo_add" and record.outcome == "success"
    assert record.duration_ms >= 0

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the counters are gone")

    monkeypatch.setattr(recorder.stats, "count", broken)
    with caplog.at_level(logging.ERROR, logger="lorenz.host"):
        assert b'"isError":false' in await call_in_process(app, era)
    assert "work after a reply failed" in caplog.text and "the counters are gone" in caplog.text


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_call_leaves_no_garbage_cycle(tmp_path: Path, host_pack: ModuleType, era: str) -> None:
    """What a lean-path call builds (the SDK's runner, its connection, the work after the reply)
    is freed when the call ends, not left in a cycle for the garbage collector."""
    app = demo_app(tmp_path, host_pack)
    for _ in range(3):  # warm: first calls fill caches
        await call_in_process(app, era)
    gc.collect()
    gc.disable()
    try:
        for _ in range(20):
            assert b'"isError":false' in await call_in_process(app, era)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = sorted({type(item).__name__ for item in gc.garbage})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert left == []
