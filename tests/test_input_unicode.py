"""Unicode at the edge (issue 12): a lone surrogate sent as a JSON escape is refused naming the
field and nothing is written; one already on the board (or returned by a pack) goes out as U+FFFD,
never as a 500, in both protocol eras, both response modes, and through `lorenz call`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from lorenz.cli import main
from lorenz.host import RunningServer, serve_in_thread

ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-local"}
ERAS = {
    "2025-11-25": {"MCP-Protocol-Version": "2025-11-25"},
    "2026-07-28": {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _workflow(directory: Path, *, json_response: bool) -> Path:
    path = directory / "WORKFLOW.md"
    board = json.dumps(str(directory / "board"))  # relative board paths are the process cwd's
    front = f"tracker:\n  kind: local\n  path: {board}\nserver:\n  json_response: {str(json_response).lower()}\n"
    path.write_text(f"---\n{front}---\n", encoding="utf-8")
    return path


@pytest.fixture(params=[True, False], ids=["json", "sse"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RunningServer]:
    with serve_in_thread(_workflow(tmp_path, json_response=request.param), cwd=tmp_path, env=ENV) as running:
        yield running


def _call(server: RunningServer, era: str, tool: str, raw_arguments: str) -> dict[str, Any]:
    """POST a tools/call whose arguments are given as raw JSON text (so escapes reach the server)."""
    meta = ""
    headers = {**ACCEPT, **ERAS[era]}
    if era == "2026-07-28":
        envelope = (
            '"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}'
        )
        meta = f', "_meta": {{{envelope}}}'
        headers["Mcp-Name"] = tool
    params = f'{{"name": "{tool}", "arguments": {raw_arguments}{meta}}}'
    body = f'{{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {params}}}'
    response = httpx.post(server.url, content=body.encode(), headers=headers, timeout=30)
    if response.status_code == 400:  # refused by the protocol layer itself
        refused: dict[str, Any] = response.json()
        return refused
    assert response.status_code == 200, response.text
    text = response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:") and line[5:].strip())
    reply: dict[str, Any] = json.loads(text)
    return reply


@pytest.mark.parametrize("era", list(ERAS))
def test_lone_surrogate_argument_is_refused_and_nothing_written(
    server: RunningServer, era: str, tmp_path: Path
) -> None:
    created = _call(server, era, "local_create_issue", '{"title": "t"}')["result"]
    assert created["isError"] is False
    issue = created["structuredContent"]["issue"]["id"]
    board = tmp_path / "board"
    before = {path.name: path.read_bytes() for path in board.glob("*.md")}
    reply = _call(server, era, "local_update_status", f'{{"issueId": "{issue}", "status": "\\ud800"}}')
    if "error" in reply:  # refused as it is parsed (the SDK's JSON parser refuses the escape in some eras)
        assert reply["error"]["code"] == -32700 and reply["error"]["message"].startswith("Parse error")
    else:
        assert reply["result"]["isError"] is True
        assert (
            "invalid arguments for tool local_update_status: status: contains a lone surrogate"
            in (reply["result"]["content"][0]["text"])
        )
    assert {path.name: path.read_bytes() for path in board.glob("*.md")} == before
    # A valid pair (one astral character, escaped) is fine.
    paired = _call(server, era, "local_comment", f'{{"issueId": "{issue}", "body": "\\ud83d\\ude00"}}')
    assert paired["result"]["isError"] is False


@pytest.mark.parametrize("era", list(ERAS))
def test_a_surrogate_already_on_the_board_reads_as_replacement(server: RunningServer, era: str, tmp_path: Path) -> None:
    created = _call(server, era, "local_create_issue", '{"title": "t"}')["result"]
    issue_id = created["structuredContent"]["issue"]["id"]
    issue = tmp_path / "board" / f"{issue_id}.md"
    text = issue.read_text(encoding="utf-8")
    issue.write_text(text.replace("status: Todo", 'status: "\\uD800"', 1), encoding="utf-8")  # a hand edit
    for tool, arguments in (("local_read_issue", f'{{"issueId": "{issue_id}"}}'), ("local_query", "{}")):
        reply = _call(server, era, tool, arguments)
        assert "error" not in reply, reply
        assert "\ufffd" in json.dumps(reply["result"], ensure_ascii=False)


def test_lorenz_call_prints_a_board_holding_a_surrogate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "lorenz-local")
    _workflow(tmp_path, json_response=True)
    assert main(["call", "local_create_issue", '{"title": "t"}']) == 0
    issue_id = json.loads(capsys.readouterr().out)["result"]["issue"]["id"]
    issue = tmp_path / "board" / f"{issue_id}.md"
    hand_edit = issue.read_text(encoding="utf-8").replace("status: Todo", 'status: "a\\uDC00b"', 1)
    issue.write_text(hand_edit, encoding="utf-8")
    capsys.readouterr()
    assert main(["call", "local_query", "{}"]) == 0
    out = capsys.readouterr().out
    out.encode("utf-8")
    assert "a\ufffdb" in out


def test_huge_arguments_are_refused_before_the_schema_walks_them() -> None:
    """More values than any tool needs is one cheap refusal, not seconds of schema checking."""
    from lorenz.toolcall.wire import MAX_ARGUMENT_VALUES, refuse_unsafe_arguments

    refused = refuse_unsafe_arguments("local_query", {"select": ["title"] * 100_000})
    assert refused is not None
    assert refused.error == (
        f"invalid arguments for tool local_query: select: 100,000 values; one call may hold at most "
        f"{MAX_ARGUMENT_VALUES:,} in all"
    )
    fine = {"where": {"field": "t", "op": "in", "value": list(range(1000))}}
    assert refuse_unsafe_arguments("local_query", fine) is None
