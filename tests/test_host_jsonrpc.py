"""JSON-RPC hygiene at ``/mcp``: a body that is not one well-formed message gets one plain JSON-RPC
error (never a 202 that drops it, never a validation dump), in both protocol eras and both
response modes; well-formed messages are untouched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from lorenz.host import RunningServer, serve_in_thread
from lorenz.host.http.jsonrpc import parse_message

pytestmark = pytest.mark.anyio

ENV = {"LORENZ_LOAD_PLUGINS": ""}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
#: (MCP-Protocol-Version header or None, the envelope a call carries in that era)
ERAS = {"absent": (None, {}), "2025-11-25": ("2025-11-25", {}), "2026-07-28": ("2026-07-28", {"_meta": MODERN_META})}


@pytest.fixture(scope="module", params=["json", "sse"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, host_pack: ModuleType
) -> Iterator[RunningServer]:
    directory = tmp_path_factory.mktemp(request.param)
    extra = "server:\n  json_response: false\n" if request.param == "sse" else ""
    (directory / "WORKFLOW.md").write_text(f"---\ntracker:\n  kind: demo\n{extra}---\n")
    with serve_in_thread(cwd=directory, env=ENV, plugins=[host_pack]) as running:
        yield running


def headers(era: str) -> dict[str, str]:
    version = ERAS[era][0]
    sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    return sent if version is None else {**sent, "MCP-Protocol-Version": version}


def call(era: str, id: Any) -> dict[str, Any]:
    params = {"name": "demo_add", "arguments": {"a": 1, "b": 2}, **ERAS[era][1]}
    return {"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}


def reply_of(response: httpx.Response) -> Any:
    """The JSON-RPC reply in a JSON or an SSE response."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        assert len(data) == 1, response.text
        return json.loads(data[0])
    return response.json()


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("bad_id", [1.5, True, {}, [], None], ids=["float", "true", "object", "array", "null"])
async def test_invalid_id_is_invalid_request_and_runs_nothing(
    server: RunningServer, host_pack: ModuleType, era: str, bad_id: Any
) -> None:
    """A tools/call whose id is 1.5, true, {}, [] or null gets -32600 with id null (before, a 202 and
    the call silently dropped) and the tool does not run."""
    host_pack.CALLS.clear()
    async with httpx.AsyncClient() as http:
        response = await http.post(server.url, content=json.dumps(call(era, bad_id)), headers=headers(era))
    assert response.status_code == 400
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request: 'id' must be a string or an integer"},
    }
    assert host_pack.CALLS == []


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("body", ["[]", "[{}]", "BATCH"], ids=["empty", "junk", "calls"])
async def test_batch_is_one_invalid_request_error(server: RunningServer, era: str, body: str) -> None:
    """A JSON array body gets a single -32600 error object, not a validation dump."""
    if body == "BATCH":
        body = json.dumps([call(era, 1), call(era, 2)])
    async with httpx.AsyncClient() as http:
        response = await http.post(server.url, content=body, headers=headers(era))
    assert response.status_code == 400
    reply = response.json()
    assert reply["id"] is None
    assert reply["error"]["code"] == -32600
    assert reply["error"]["message"].startswith("Invalid Request: batch requests are not supported")


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    "body", [b"{bad", b"", b"\xff\xfe{}", b'{"id": NaN}', b'{"id": 1e400}', b"[" * 100_000], ids=repr
)
async def test_parse_errors_say_parse_error(server: RunningServer, era: str, body: bytes) -> None:
    """Not JSON (bad syntax, not UTF-8, NaN, a number out of range, nesting too deep): -32700."""
    async with httpx.AsyncClient() as http:
        response = await http.post(server.url, content=body, headers=headers(era))
    assert response.status_code == 400
    reply = response.json()
    assert (reply["id"], reply["error"]["code"], reply["error"]["message"]) == (None, -32700, "Parse error")


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("body", "code", "id"),
    [
        ('"just a string"', -32600, None),
        ('{"jsonrpc": "1.0", "id": 7, "method": "tools/list"}', -32600, 7),
        ('{"id": 7, "method": "tools/list"}', -32600, 7),
        ('{"jsonrpc": "2.0", "id": 7, "method": 5}', -32600, 7),
        ('{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": [1]}', -32602, 7),
        ('{"jsonrpc": "2.0", "id": 7}', -32600, None),
        ('{"jsonrpc": "2.0", "id": 7, "result": 5}', -32600, 7),
        ('{"jsonrpc": "2.0", "id": 7, "error": {"code": "x"}}', -32600, 7),
    ],
)
async def test_malformed_messages_get_plain_errors(
    server: RunningServer, era: str, body: str, code: int, id: int | None
) -> None:
    """JSON that is not a well-formed message gets one error naming what is wrong, never pydantic's."""
    async with httpx.AsyncClient() as http:
        response = await http.post(server.url, content=body, headers=headers(era))
    assert response.status_code == 400
    reply = response.json()
    assert (reply["jsonrpc"], reply["id"], reply["error"]["code"]) == ("2.0", id, code)
    assert "validation error" not in response.text.lower()


@pytest.mark.parametrize("era", ERAS)
async def test_well_formed_messages_pass(server: RunningServer, era: str) -> None:
    """A call with a string or integer id is answered with that id; a notification gets 202."""
    sent = headers(era)
    if era == "2026-07-28":  # the method and tool name go in headers too
        sent.update({"Mcp-Method": "tools/call", "Mcp-Name": "demo_add"})
    async with httpx.AsyncClient() as http:
        by_int = await http.post(server.url, json=call(era, 41), headers=sent)
        by_str = await http.post(server.url, json=call(era, "x-1"), headers=sent)
        note = await http.post(
            server.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers(era)
        )
    assert (by_int.status_code, by_str.status_code, note.status_code) == (200, 200, 202)
    assert reply_of(by_int)["id"] == 41
    assert reply_of(by_int)["result"]["structuredContent"] == {"sum": 3}
    assert reply_of(by_str)["id"] == "x-1"


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "x"}},
        {"jsonrpc": "2.0", "id": 10**30, "method": "ping", "params": None},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 3, "result": {}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -1, "message": "no"}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {"x": 1.5, "y": "\u00e9"}}},
    ],
)
def test_rejection_passes_well_formed_messages(message: dict[str, Any]) -> None:
    """Requests, notifications and the responses a client may send pass unchanged."""
    assert parse_message(json.dumps(message).encode())[1] is None


def test_rejection_names_what_is_wrong() -> None:
    """The error message names the field at fault; a parse error's data says where."""
    assert parse_message(b'{"jsonrpc": "2.0", "id": 1}')[1] == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Invalid Request: a message needs a 'method' (a request or notification)"
            " or a 'result' or 'error' (a response)",
        },
    }
    parse = parse_message(b'{"a": }')[1]
    assert parse is not None
    assert parse["error"]["data"] == "Expecting value: line 1 column 7 (char 6)"


def test_lone_surrogates_are_refused_only_when_asked() -> None:
    """For stdio a lone surrogate escape is a parse error naming where it is; over HTTP the body
    passes (the host names the field in its isError result); a paired escape is text either way."""
    lone = json.dumps(call("2025-11-25", 1) | {"params": {"name": "x", "arguments": {"a": ["ok", "\ud800"]}}})
    paired = json.dumps(call("2025-11-25", 1) | {"params": {"name": "x", "arguments": {"a": "\U0001f600"}}})
    refused = parse_message(lone.encode(), refuse_lone_surrogates=True)[1]
    assert refused is not None
    assert refused["error"] == {
        "code": -32700,
        "message": "Parse error",
        "data": "params.arguments.a[1]: a lone surrogate escape is not text",
    }
    assert parse_message(lone.encode())[1] is None
    assert parse_message(paired.encode(), refuse_lone_surrogates=True)[1] is None


@pytest.mark.slow
def test_stdio_answers_what_is_not_one_message(tmp_path: Path) -> None:
    """Over stdio, an invalid id, a batch, a parse error and a lone surrogate each get their JSON-RPC
    error (before, no reply at all); a well-formed request after them is answered as usual."""
    board = json.dumps(str(tmp_path / "board"))
    (tmp_path / "WORKFLOW.md").write_text(f"---\ntracker:\n  kind: local\n  path: {board}\n---\n")
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}),
        json.dumps([{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]),
        "{bad",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "local_query", "arguments": {"where": "\ud800"}},
            }
        ),
        json.dumps({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
    ]
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    done = subprocess.run(
        [sys.executable, "-m", "lorenz", "serve", "--stdio"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**env, "LORENZ_LOAD_PLUGINS": "lorenz-local"},
        timeout=60,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(reply["id"], reply.get("error", {}).get("code")) for reply in replies] == [
        (0, None),
        (None, -32600),
        (None, -32600),
        (None, -32700),
        (None, -32700),  # the SDK's stdio parser refuses a lone surrogate: said, not dropped
        (4, None),
    ]
    assert done.returncode == 0


@pytest.mark.slow
@pytest.mark.parametrize("wiring", ["pipes, CRLF", "regular files", "stdout and stderr one pipe"])
def test_stdio_serves_the_same_over_any_wiring(tmp_path: Path, wiring: str) -> None:
    """Pipes are read and written by the event loop; a regular file, or a stdout shared with
    stderr, by the SDK's threads: the replies are the same, and nothing but replies is on stdout."""
    board = json.dumps(str(tmp_path / "board"))
    (tmp_path / "WORKFLOW.md").write_text(f"---\ntracker:\n  kind: local\n  path: {board}\n---\n")
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    lines = [
        json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "{bad",
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "local_query"}}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
        # A line far longer than what the loop reads ahead (64 KiB) is read whole.
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "local_create_issue", "arguments": {"title": "long", "body": "é" * 200_000}},
            }
        ),
    ]
    text = ("\r\n" if "CRLF" in wiring else "\n").join(lines) + "\n"
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    command = [sys.executable, "-m", "lorenz", "serve", "--stdio"]
    run_env = {**env, "LORENZ_LOAD_PLUGINS": "lorenz-local"}
    if wiring == "regular files":
        (tmp_path / "in.jsonl").write_text(text, encoding="utf-8")
        with (tmp_path / "in.jsonl").open("rb") as stdin, (tmp_path / "out.jsonl").open("wb") as stdout:
            code = subprocess.run(command, stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL, cwd=tmp_path,
                                  env=run_env, timeout=60).returncode  # fmt: skip
        out = (tmp_path / "out.jsonl").read_text(encoding="utf-8")
    else:
        stderr = subprocess.STDOUT if wiring == "stdout and stderr one pipe" else subprocess.DEVNULL
        done = subprocess.run(command, input=text.encode(), stdout=subprocess.PIPE, stderr=stderr, cwd=tmp_path,
                              env=run_env, timeout=60)  # fmt: skip
        code, out = done.returncode, done.stdout.decode()
    replies = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    # Requests run concurrently: the ping may be answered before the call.
    assert sorted(
        (reply["id"] if reply["id"] is not None else -1, reply.get("error", {}).get("code")) for reply in replies
    ) == [
        (-1, -32700),
        (0, None),
        (1, None),
        (2, None),
        (3, None),
    ]
    assert next(reply for reply in replies if reply["id"] == 1)["result"]["isError"] is False
    created = next(reply for reply in replies if reply["id"] == 3)["result"]
    assert created["isError"] is False, created
    assert (tmp_path / "board" / "BOARD-1.md").read_text(encoding="utf-8").count("é") == 200_000
    assert code == 0


def test_the_loop_reads_a_pipe_line_by_line_however_long_the_line() -> None:
    """On a pipe the event loop reads the protocol: CRLF ends a line as LF does, a line past the
    read-ahead comes whole, the last line needs no newline, and the end reads as ``""``."""
    import asyncio
    import threading

    from lorenz.host.mcp.checked_input import _loop_reader

    read_end, write_end = os.pipe()
    data = b'{"a": 1}\r\n' + "é".encode() * 150_000 + b"\n" + b"tail"

    def write() -> None:  # more than a pipe holds: written while the loop reads
        with os.fdopen(write_end, "wb") as out:
            out.write(data)

    async def read() -> list[str]:
        with open(read_end, encoding="utf-8") as file:  # noqa: ASYNC230 - its descriptor, read by the loop
            async with _loop_reader(file) as readline:
                assert readline is not None  # a pipe: the loop's reader, not the thread's
                writer = threading.Thread(target=write)
                writer.start()
                lines = [await readline() for _ in range(4)]
                writer.join()
                return lines

    assert asyncio.run(read()) == ['{"a": 1}\n', "é" * 150_000 + "\n", "tail", ""]


SLOW_PACK = """
import asyncio

from lorenz import ToolSpec, hookimpl, tool_success


class Slow:
    name = "slow"

    def tool_specs(self, settings):
        return [ToolSpec(name="slow_answer", description="Answer after a while.")]

    async def execute_tool(self, name, input, context):
        await asyncio.sleep(0.5)
        return tool_success({"late": True})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Slow())
"""


@pytest.mark.slow
def test_stdio_answers_what_was_asked_before_its_input_ended(tmp_path: Path) -> None:
    """A client that writes its requests and closes stdin still gets every answer (the SDK alone
    would cancel the calls still running at the end of its input)."""
    (tmp_path / "lorenz_slow_answer.py").write_text(SLOW_PACK)
    (tmp_path / "WORKFLOW.md").write_text("---\ntools:\n  slow: {}\n---\n")
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow_answer", "arguments": {}}},
        {"jsonrpc": "2.0", "id": "two", "method": "ping"},
    ]
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update(LORENZ_LOAD_PLUGINS="", PYTHONPATH=os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")]))
    done = subprocess.run(
        [sys.executable, "-m", "lorenz", "-p", "lorenz_slow_answer", "serve", "--stdio"],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    assert sorted(map(str, replies)) == ["0", "1", "two"], done.stdout + done.stderr
    assert replies[1]["result"]["structuredContent"] == {"late": True}
