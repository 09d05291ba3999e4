"""Fuzz targets for what clients send the host: JSON-RPC-shaped bodies (valid methods with random
ids, names and arguments, in both protocol eras) mixed with junk, over HTTP (JSON and SSE
responses) and over stdio (``lorenz serve --stdio``), against a local board.

Invariants: no HTTP 5xx; every reply is valid JSON-RPC, answering the id that was sent (or
``null``); no board file changes unless the reply is a successful ``tools/call``; the server
still answers afterwards.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lorenz.host import RunningServer, serve_in_thread
from lorenz.host.http.jsonrpc import parse_message
from lorenz_local.store import BoardStore

pytestmark = [pytest.mark.fuzz, pytest.mark.slow]

ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-local"}
MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}
TOOLS = ["local_update_status", "local_comment", "local_create_issue", "local_read_issue", "local_query"]
METHODS = ["tools/list", "tools/call", "initialize", "ping", "server/discover", "notifications/initialized"]
FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# -- what is sent ------------------------------------------------------------------------------

leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()  # NaN and infinities too: not JSON
    | st.text(max_size=12)
    | st.sampled_from(["BOARD-1", "BOARD-999", "../../etc/passwd", "Done", "\ud800", ""])
)
values = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)
ids = st.one_of(
    st.integers(),
    st.text(max_size=8),
    st.just("\udc00"),
    st.none(),
    st.booleans(),
    st.floats(),
    st.just({}),
    st.just([]),
)
arguments = st.fixed_dictionaries(
    {},
    optional={
        "issueId": st.sampled_from(["BOARD-1", "BOARD-2", "BOARD-0", "board-1", "../x"]) | values,
        "status": st.sampled_from(["Todo", "Done", " "]) | values,
        "title": values,
        "body": values,
        "select": st.just(["id", "comments"]) | values,
        "where": st.just({"field": "state", "op": "eq", "value": "Todo"}) | values,
        "limit": values,
        "offset": values,
    },
)


@st.composite
def messages(draw: st.DrawFn, modern: bool) -> dict[str, Any]:
    """A JSON-RPC-shaped message: a known method or random text, with random id and params."""
    method = draw(st.sampled_from(METHODS) | st.text(max_size=12))
    message: dict[str, Any] = {"jsonrpc": draw(st.just("2.0") | st.sampled_from(["1.0", "2", ""]))}
    if draw(st.integers(0, 9)):
        message["method"] = method
    if draw(st.integers(0, 4)):
        message["id"] = draw(ids)
    if method == "tools/call":
        params = draw(
            st.fixed_dictionaries(
                {"name": st.sampled_from([*TOOLS, "nope"]) | st.text(max_size=8)},
                optional={"arguments": arguments | values},
            )
            | values
        )
    elif method == "initialize":
        params = {
            "protocolVersion": draw(st.sampled_from(["2025-11-25", "2025-06-18", MODERN]) | values),
            "capabilities": draw(st.just({}) | values),
            "clientInfo": draw(st.just({"name": "fuzz", "version": "0"}) | values),
        }
    else:
        params = draw(st.none() | values)
    if modern and isinstance(params, dict) and draw(st.integers(0, 4)):
        params["_meta"] = META
    if params is not None or draw(st.booleans()):
        message["params"] = params
    if draw(st.integers(0, 9)) == 0:  # a response, as a client would send one
        message.pop("method", None)
        message[draw(st.sampled_from(["result", "error"]))] = draw(values)
    return message


def bodies(modern: bool) -> st.SearchStrategy[bytes]:
    """Mostly JSON-RPC-shaped messages; some other JSON values, truncated messages and junk bytes."""
    shaped = messages(modern).map(lambda message: json.dumps(message).encode())
    other = values.map(lambda value: json.dumps(value).encode())
    truncated = st.tuples(shaped, st.integers(0, 60)).map(lambda pair: pair[0][: pair[1]])
    return st.one_of(shaped, shaped, shaped, other, truncated, st.binary(max_size=40))


def decoded(body: bytes) -> Any:
    """The message a body holds, as far as it can be read (``None`` when it cannot)."""
    try:
        return json.loads(body)
    except ValueError:
        return None


# -- what must hold ----------------------------------------------------------------------------


def check_reply(reply: Any, sent: Any) -> dict[str, Any]:
    """``reply`` is a valid JSON-RPC response (or server notification) to ``sent``."""
    assert isinstance(reply, dict), reply
    assert reply.get("jsonrpc") == "2.0", reply
    if "method" in reply and "id" not in reply:  # a notification on an SSE stream
        return reply
    assert ("result" in reply) != ("error" in reply), reply
    if "error" in reply:
        error = reply["error"]
        assert type(error.get("code")) is int and isinstance(error.get("message"), str), reply
        assert "validation error" not in error["message"].lower(), reply
    else:
        assert isinstance(reply["result"], dict), reply
    sent_id = sent.get("id") if isinstance(sent, dict) else None
    assert reply["id"] is None or reply["id"] == sent_id, (reply, sent)
    return reply


def succeeded_call(reply: dict[str, Any], sent: Any) -> bool:
    return (
        isinstance(sent, dict)
        and sent.get("method") == "tools/call"
        and "result" in reply
        and reply["result"].get("isError") is not True
    )


def board_files(board: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(board.glob("*.md"))} if board.exists() else {}


def workflow(directory: Path, extra: str = "") -> Path:
    path = directory / "WORKFLOW.md"
    board = json.dumps(str(directory / "board"))
    path.write_text(f"---\ntracker:\n  kind: local\n  path: {board}\n{extra}---\n", encoding="utf-8")
    BoardStore(directory / "board").create("Seed", "A body")
    return path


# -- over HTTP ---------------------------------------------------------------------------------


class Board:
    """The served board, and what its files held after the last change a call was allowed to make."""

    def __init__(self, server: RunningServer, board: Path) -> None:
        self.server = server
        self.board = board
        self.files = board_files(board)


@pytest.fixture(scope="module", params=["json", "sse"])
def http_board(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Board]:
    directory = tmp_path_factory.mktemp(f"fuzz-{request.param}")
    extra = "server:\n  json_response: false\n" if request.param == "sse" else ""
    with serve_in_thread(workflow(directory, extra), cwd=directory, env=ENV) as server:
        yield Board(server, directory / "board")


def http_replies(response: httpx.Response) -> list[Any]:
    if not response.content:
        return []
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        lines = re.split(r"\r\n|\r|\n", response.text)  # SSE lines (str.splitlines also splits at U+0085)
        return [json.loads(line[5:]) for line in lines if line.startswith("data:") and line[5:].strip()]
    return [response.json()]


def http_headers(era: str | None, sent: Any) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if era is not None:
        headers["MCP-Protocol-Version"] = era
    if era == MODERN and isinstance(sent, dict) and sent.get("method") in METHODS:
        headers["Mcp-Method"] = sent["method"]
        name = sent.get("params", {}).get("name") if isinstance(sent.get("params"), dict) else None
        if isinstance(name, str) and name in TOOLS:
            headers["Mcp-Name"] = name
    return headers


@pytest.mark.parametrize("era", [None, "2025-11-25", MODERN], ids=["no-version", "handshake", "modern"])
def test_http_bodies(http_board: Board, era: str | None) -> None:
    """Random bodies to /mcp: no 5xx, valid JSON-RPC replies, the board untouched by rejected
    calls, and the server still answering afterwards."""
    http = httpx.Client(timeout=30)

    @FUZZ
    @given(bodies(modern=era == MODERN))
    def post(body: bytes) -> None:
        sent = decoded(body)
        response = http.post(http_board.server.url, content=body, headers=http_headers(era, sent))
        assert response.status_code < 500, (response.status_code, response.text)
        replies = [check_reply(reply, sent) for reply in http_replies(response)]
        after = board_files(http_board.board)
        if any(succeeded_call(reply, sent) for reply in replies):
            http_board.files = after
        assert after == http_board.files, (body, replies)

    with http:
        post()
        read = {"name": "local_read_issue", "arguments": {"issueId": "BOARD-1"}, "_meta": META}
        alive = http.post(
            http_board.server.url,
            json={"jsonrpc": "2.0", "id": "alive", "method": "tools/call", "params": read},
            headers=http_headers(era, {"method": "tools/call", "params": read}),
        )
    # Still answering, from the board these checks watched (the seed issue is there).
    assert http_replies(alive)[0]["result"]["structuredContent"]["issue"]["title"] == "Seed"


# -- over stdio --------------------------------------------------------------------------------


class StdioServer:
    """``lorenz serve --stdio`` in a subprocess, its stdout read line by line in a thread."""

    def __init__(self, directory: Path) -> None:
        env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
        self.stderr = (directory / "stderr.log").open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "lorenz", "serve", "--stdio"],
            cwd=directory,
            env={**env, **ENV},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.sentinels = 0

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def until(self, *ids: Any, timeout: float = 20) -> list[Any]:
        """Every message written until there is a reply to each of ``ids``."""
        seen: list[Any] = []
        waiting = list(ids)
        while waiting:
            try:
                line = self.lines.get(timeout=timeout)
            except queue.Empty:
                msg = f"no reply to {waiting!r} within {timeout}s; the server wrote {seen}"
                raise AssertionError(msg) from None
            seen.append(json.loads(line))
            if isinstance(seen[-1], dict) and "method" not in seen[-1] and seen[-1].get("id") in waiting:
                waiting.remove(seen[-1]["id"])
        return seen

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=15)
        self.stderr.close()


def handshake(server: StdioServer, modern: bool) -> None:
    if modern:  # no handshake: the first request's envelope sets the era
        server.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "tools/list", "params": {"_meta": META}}).encode())
    else:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}}
        server.send(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}).encode())
    assert "result" in server.until(0)[-1]
    if not modern:
        server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')


@pytest.fixture(scope="module", params=["handshake", "modern"])
def stdio_board(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[StdioServer, Path, bool]]:
    directory = tmp_path_factory.mktemp(f"fuzz-stdio-{request.param}")
    workflow(directory)
    server = StdioServer(directory)
    modern = request.param == "modern"
    try:
        handshake(server, modern)
        yield server, directory / "board", modern
    finally:
        server.close()


def expected_reply(line: bytes) -> list[Any]:
    """The id a line gets a reply with (none for a notification, a response or a blank line):
    a request's own, or ``null`` for one that is not a well-formed message."""
    text = line.decode("utf-8", "replace")  # as the server reads it
    if not text.strip():
        return []
    error = parse_message(text.encode("utf-8"), refuse_lone_surrogates=True)[1]
    if error is not None:
        return [error["id"]]
    message = json.loads(text)
    return [message["id"]] if "method" in message and "id" in message else []


def test_stdio_lines(stdio_board: tuple[StdioServer, Path, bool]) -> None:
    """Random lines on stdin: every request and every malformed line gets one reply, every line the
    server writes is valid JSON-RPC, the board is untouched by rejected calls, and a request sent
    after each line is still answered."""
    server, board, modern = stdio_board
    state = {"files": board_files(board)}
    sentinel_params = {"name": "local_read_issue", "arguments": {"issueId": "BOARD-1"}}
    if modern:
        sentinel_params["_meta"] = META

    @FUZZ
    @given(bodies(modern=modern))
    def feed(body: bytes) -> None:
        line = body.replace(b"\n", b" ").replace(b"\r", b" ")
        sent = decoded(line)
        server.send(line)
        server.sentinels += 1
        sentinel = f"sentinel-{server.sentinels}"
        call = {"jsonrpc": "2.0", "id": sentinel, "method": "tools/call", "params": sentinel_params}
        server.send(json.dumps(call).encode())
        written = server.until(sentinel, *expected_reply(line))
        sentinel_reply = next(message for message in written if message.get("id") == sentinel)
        assert sentinel_reply["result"]["isError"] is False, sentinel_reply
        replies = [check_reply(reply, sent) for reply in written if reply is not sentinel_reply]
        after = board_files(board)
        if any(succeeded_call(reply, sent) for reply in replies):
            state["files"] = after
        assert after == state["files"], (body, replies)

    feed()
    assert server.proc.poll() is None
