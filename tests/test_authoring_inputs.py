"""Asking the client for input (issue 30, item 2): ``ctx.request_input`` rounds reach an official SDK
client's elicitation, sampling and roots callbacks over stdio and stateful HTTP (handshake era) and
as ``InputRequiredResult`` retries (2026-07-28, stateless or not); a decline stops the call with
nothing deleted; a stateless handshake-era HTTP client is told what would work; a tampered
``requestState`` never reaches the handler; rounds and answer sizes are bounded."""

from __future__ import annotations

import importlib.util
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
from mcp import StdioServerParameters

from lorenz.host import serve_in_thread

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
MODERN = "2026-07-28"
#: What a client that can answer every request declares.
CAN = {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}}


@pytest.fixture
def pack() -> ModuleType:
    spec = importlib.util.spec_from_file_location("input_pack", HERE / "input_pack.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.BOARDS.update({"BOARD-3": "Q3 plans", "BOARD-4": "Q4 plans"})
    return module


def _serve(tmp_path: Path, pack: ModuleType, server: str = "") -> Any:
    front = "tracker:\n  kind: boardtracker\n" + (f"server:\n{server}" if server else "")
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", "")}
    return serve_in_thread(cwd=tmp_path, env=env, plugins=[pack], reload=False)


class Answers:
    """The client's callbacks: confirm (or not), a sampled text, two roots; what each was asked."""

    def __init__(self, action: str = "accept", confirm: bool = True) -> None:
        self.action, self.confirm = action, confirm
        self.elicited: list[str] = []
        self.sampled: list[Any] = []
        self.rooted = 0

    async def elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.elicited.append(params.message)
        if self.action != "accept":
            return types.ElicitResult(action=self.action)  # type: ignore[arg-type]
        return types.ElicitResult(action="accept", content={"confirm": self.confirm})

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        self.sampled.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="All on track."), model="tiny-1"
        )

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.rooted += 1
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/a"), types.Root(uri="file:///work/b")])

    def client(self, server: Any, **kwargs: Any) -> mcp.Client:
        return mcp.Client(
            server,
            elicitation_callback=self.elicit,
            sampling_callback=self.sample,
            list_roots_callback=self.roots,
            **kwargs,
        )


#: (id, WORKFLOW server section, mcp.Client mode): every path a client can answer on.
ANSWERING = [
    ("handshake-stateful-sse", "  stateful: true\n  json_response: false\n", "legacy"),
    ("2026-stateless", "", "auto"),
    ("2026-stateful", "  stateful: true\n  json_response: false\n", "auto"),
]


@pytest.mark.parametrize(("server", "mode"), [(s, m) for _, s, m in ANSWERING], ids=[i for i, _, _ in ANSWERING])
async def test_every_round_reaches_the_client_over_http(
    tmp_path: Path, pack: ModuleType, server: str, mode: str
) -> None:
    answers = Answers()
    with _serve(tmp_path, pack, server) as running:
        async with answers.client(running.url, mode=mode) as client:
            assert (client.protocol_version == MODERN) == (mode == "auto")
            deleted = await client.call_tool("boards_delete_board", {"board": "BOARD-3"})
            summary = await client.call_tool("boards_summarize_board", {"board": "BOARD-4"})
            roots = await client.call_tool("boards_list_roots", {})
    assert deleted.is_error is False, deleted
    assert deleted.structured_content == {"board": "BOARD-3"}
    assert answers.elicited == ["Delete BOARD-3?"]
    assert "BOARD-3" not in pack.BOARDS and "BOARD-4" in pack.BOARDS
    assert summary.structured_content == {"summary": "All on track.", "model": "tiny-1"}
    (sampled,) = answers.sampled
    assert sampled.max_tokens == 50 and sampled.system_prompt == "Be brief."
    assert sampled.messages[0].content.text == "Summarize BOARD-4."
    assert roots.structured_content == {"roots": ["file:///work/a", "file:///work/b"]}
    assert answers.rooted == 1


@pytest.mark.parametrize("action", ["decline", "cancel"])
@pytest.mark.parametrize(("server", "mode"), [(s, m) for _, s, m in ANSWERING[:2]], ids=["handshake", "2026"])
async def test_a_decline_stops_the_call_and_deletes_nothing(
    tmp_path: Path, pack: ModuleType, server: str, mode: str, action: str
) -> None:
    answers = Answers(action=action)
    with _serve(tmp_path, pack, server) as running:
        async with answers.client(running.url, mode=mode) as client:
            result = await client.call_tool("boards_delete_board", {"board": "BOARD-3"})
    assert result.is_error is True
    assert f"did not confirm deleting BOARD-3 ({action})" in result.content[0].text
    assert answers.elicited == ["Delete BOARD-3?"]  # asked once: a decline is final
    assert "BOARD-3" in pack.BOARDS


@pytest.mark.parametrize(("server", "mode"), [(s, m) for _, s, m in ANSWERING[:2]], ids=["handshake", "2026"])
async def test_a_malformed_request_is_the_packs_error_named_the_same_in_both_eras(
    tmp_path: Path, pack: ModuleType, server: str, mode: str
) -> None:
    answers = Answers()
    with _serve(tmp_path, pack, server) as running:
        async with answers.client(running.url, mode=mode) as client:
            result = await client.call_tool("boards_ask_badly", {})
    assert result.is_error is True
    assert answers.sampled == []  # nothing reached the client
    text = result.content[0].text
    assert text.startswith("Error: boards_ask_badly asked the client for input with a request it cannot be sent: ")
    assert "input request 'draft' (sampling/createMessage) is not valid MCP: params.messages.1.role" in text
    assert result.structured_content is not None
    assert result.structured_content["error"]["reason"] == "invalid_input_request"


async def test_accepting_no_deletes_nothing(tmp_path: Path, pack: ModuleType) -> None:
    answers = Answers(confirm=False)
    with _serve(tmp_path, pack) as running:
        async with answers.client(running.url) as client:
            result = await client.call_tool("boards_delete_board", {"board": "BOARD-3"})
    assert result.is_error is True and "chose not to delete BOARD-3" in result.content[0].text
    assert "BOARD-3" in pack.BOARDS


@pytest.mark.parametrize(
    ("server", "advice"),
    [
        ("", "server.stateful: true"),
        ("  fast_path: false\n", "server.stateful: true"),
        ("  stateful: true\n", "server.json_response: false"),
    ],
    ids=["stateless-lean-path", "stateless-sdk-transport", "stateful-json"],
)
async def test_a_handshake_client_that_cannot_answer_is_told_what_would_work(
    tmp_path: Path, pack: ModuleType, server: str, advice: str
) -> None:
    answers = Answers()
    with _serve(tmp_path, pack, server) as running:
        async with answers.client(running.url, mode="legacy") as client:
            result = await client.call_tool("boards_delete_board", {"board": "BOARD-3"})
    assert result.is_error is True
    text = result.content[0].text
    assert "boards_delete_board needs input from the client" in text
    assert "protocol version 2026-07-28" in text and advice in text
    assert result.structured_content["error"]["reason"] == "client_input_unavailable"
    assert answers.elicited == [] and "BOARD-3" in pack.BOARDS


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_over_stdio(tmp_path: Path, mode: str) -> None:
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: boardtracker\n---\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update(LORENZ_LOAD_PLUGINS="", PYTHONPATH=os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]))
    args = ["-m", "lorenz", "-p", "input_pack", "serve", "--stdio"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=tmp_path)
    answers = Answers()
    async with answers.client(params, mode=mode) as client:
        deleted = await client.call_tool("boards_delete_board", {"board": "BOARD-3"})
        summary = await client.call_tool("boards_summarize_board", {"board": "BOARD-4"})
        roots = await client.call_tool("boards_list_roots", {})
    assert deleted.structured_content == {"board": "BOARD-3"}
    assert answers.elicited == ["Delete BOARD-3?"]
    assert summary.structured_content == {"summary": "All on track.", "model": "tiny-1"}
    assert roots.structured_content == {"roots": ["file:///work/a", "file:///work/b"]}


# -- the 2026-07-28 retry, driven by hand as a client would --------------------------------------


def _post(url: str, body: dict[str, Any], auth: dict[str, str] | None = None) -> dict[str, Any]:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": MODERN, **(auth or {})}
    headers.update({"Mcp-Method": body["method"], "Mcp-Name": body["params"]["name"]})
    response = httpx.post(url, json=body, headers=headers, timeout=30)
    assert response.status_code == 200, response.text
    reply: dict[str, Any] = response.json()
    return reply


def _call(n: int, name: str, arguments: dict[str, Any], **extra: Any) -> dict[str, Any]:
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": CAN}
    params = {"name": name, "arguments": arguments, "_meta": meta, **extra}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


@pytest.fixture
def modern(tmp_path: Path, pack: ModuleType) -> Iterator[str]:
    with _serve(tmp_path, pack) as running:
        yield running.url


def test_the_first_round_is_an_input_required_result(modern: str, pack: ModuleType) -> None:
    first = _post(modern, _call(1, "boards_delete_board", {"board": "BOARD-3"}))["result"]
    assert first["resultType"] == "input_required"
    (name,) = first["inputRequests"]
    request = first["inputRequests"][name]
    assert name == "confirm" and request["method"] == "elicitation/create"
    assert request["params"]["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"
    assert first["requestState"].startswith("v1.")  # sealed by the SDK's boundary, not readable
    assert "BOARD" not in first["requestState"]
    answers = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    done = _post(
        modern,
        _call(
            2, "boards_delete_board", {"board": "BOARD-3"}, inputResponses=answers, requestState=first["requestState"]
        ),
    )["result"]
    assert done["isError"] is False and done["structuredContent"] == {"board": "BOARD-3"}
    assert "BOARD-3" not in pack.BOARDS


def test_a_client_that_did_not_declare_the_capability_is_never_asked(modern: str, pack: ModuleType) -> None:
    # Its SDK would fail the whole call on a request it cannot answer: the call says why instead.
    call = _call(1, "boards_delete_board", {"board": "BOARD-3"})
    call["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {"roots": {}}
    result = _post(modern, call)["result"]
    assert result.get("resultType", "complete") == "complete" and result["isError"] is True
    text = result["content"][0]["text"]
    assert "'confirm' (elicitation/create) needs the client's elicitation capability" in text, text
    assert "BOARD-3" in pack.BOARDS


@pytest.mark.parametrize(
    "tamper",
    [
        lambda state, args: (state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB"), args),
        lambda state, args: ("v1.bm90LW1pbnRlZC1oZXJl", args),
        lambda state, args: (state, {"board": "BOARD-4"}),  # state minted for other arguments
    ],
    ids=["altered", "foreign", "other-arguments"],
)
def test_a_tampered_request_state_is_refused(modern: str, pack: ModuleType, tamper: Any) -> None:
    first = _post(modern, _call(1, "boards_delete_board", {"board": "BOARD-3"}))["result"]
    state, args = tamper(first["requestState"], {"board": "BOARD-3"})
    answers = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    reply = _post(modern, _call(2, "boards_delete_board", args, inputResponses=answers, requestState=state))
    result = reply["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["reason"] == "invalid_request_state"
    assert "was not minted by this server" in result["content"][0]["text"]
    assert "BOARD-3" in pack.BOARDS and "BOARD-4" in pack.BOARDS  # the handler never ran on it


def test_answers_without_state_are_refused(modern: str, pack: ModuleType) -> None:
    answers = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    result = _post(modern, _call(1, "boards_delete_board", {"board": "BOARD-3"}, inputResponses=answers))["result"]
    assert result["isError"] is True and "without the requestState" in result["content"][0]["text"]
    assert "BOARD-3" in pack.BOARDS


def test_an_answer_over_the_size_limit_is_refused(modern: str, pack: ModuleType) -> None:
    first = _post(modern, _call(1, "boards_summarize_board", {"board": "BOARD-3"}))["result"]
    huge = {"role": "assistant", "model": "m", "content": {"type": "text", "text": "x" * (70 * 1024)}}
    reply = _post(
        modern,
        _call(
            2,
            "boards_summarize_board",
            {"board": "BOARD-3"},
            inputResponses={"draft": huge},
            requestState=first["requestState"],
        ),
    )["result"]
    assert reply["isError"] is True
    assert reply["structuredContent"]["error"]["reason"] == "input_too_large"
    assert "65536-byte limit" in reply["content"][0]["text"]


async def test_rounds_are_bounded(tmp_path: Path, pack: ModuleType) -> None:
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"note": "ok"})

    with _serve(tmp_path, pack, "  stateful: true\n  json_response: false\n") as running:
        async with mcp.Client(running.url, mode="legacy", elicitation_callback=elicit) as client:
            handshake = await client.call_tool("boards_interview", {})
        legacy_asked = list(asked)
        asked.clear()
        async with mcp.Client(running.url, elicitation_callback=elicit) as client:
            modern_result = await client.call_tool("boards_interview", {})
    for result in (handshake, modern_result):
        assert result.is_error is True
        assert "asked the client for input more than 8 times" in result.content[0].text
    assert legacy_asked == [f"Question {n}?" for n in range(8)]
    assert asked == legacy_asked


async def test_asking_the_same_name_again_is_refused(tmp_path: Path, pack: ModuleType) -> None:
    answers = Answers(action="decline")
    with _serve(tmp_path, pack, "  stateful: true\n  json_response: false\n") as running:
        async with answers.client(running.url, mode="legacy") as client:
            result = await client.call_tool("boards_nag", {})
    assert result.is_error is True
    assert "asked for 'confirm' again" in result.content[0].text
    assert answers.elicited == ["Sure?"]


def test_state_minted_for_one_token_is_refused_for_another(tmp_path: Path, pack: ModuleType) -> None:
    tokens = "  tokens:\n    - {token: alice-secret-token, name: alice}\n    - {token: bob-secret-token, name: bob}\n"
    with _serve(tmp_path, pack, tokens) as running:
        alice = {"Authorization": "Bearer alice-secret-token"}
        first = _post(running.url, _call(1, "boards_delete_board", {"board": "BOARD-3"}), alice)["result"]
        answers = {"confirm": {"action": "accept", "content": {"confirm": True}}}
        retry = _call(
            2, "boards_delete_board", {"board": "BOARD-3"}, inputResponses=answers, requestState=first["requestState"]
        )
        bob = _post(running.url, retry, {"Authorization": "Bearer bob-secret-token"})["result"]
        assert bob["isError"] is True and bob["structuredContent"]["error"]["reason"] == "invalid_request_state"
        assert "BOARD-3" in pack.BOARDS
        done = _post(running.url, retry, alice)["result"]
    assert done["isError"] is False and "BOARD-3" not in pack.BOARDS


# -- a sealed state's reuse, and its key across a reload ------------------------------------------

YES = {"confirm": {"action": "accept", "content": {"confirm": True}}}


def _retry(n: int, state: str) -> dict[str, Any]:
    return _call(n, "boards_delete_board", {"board": "BOARD-3"}, inputResponses=YES, requestState=state)


def test_a_state_for_a_tool_that_changes_things_is_good_for_one_retry(modern: str, pack: ModuleType) -> None:
    """A captured state and its answers cannot be replayed: the second retry is refused and the
    tool does not run again (BOARD-3, put back, stays)."""
    state = _post(modern, _call(1, "boards_delete_board", {"board": "BOARD-3"}))["result"]["requestState"]
    done = _post(modern, _retry(2, state))["result"]
    assert done["isError"] is False and "BOARD-3" not in pack.BOARDS
    pack.BOARDS["BOARD-3"] = "Q3 plans, again"
    replayed = _post(modern, _retry(3, state))["result"]
    assert replayed["isError"] is True
    assert replayed["structuredContent"]["error"]["reason"] == "invalid_request_state"
    assert "already used" in replayed["content"][0]["text"]
    assert pack.BOARDS["BOARD-3"] == "Q3 plans, again"


def test_a_state_for_a_read_only_tool_may_be_retried_again(modern: str) -> None:
    state = _post(modern, _call(1, "boards_list_roots", {}))["result"]["requestState"]
    answers = {"roots": {"roots": [{"uri": "file:///work/a"}]}}
    for n in (2, 3):
        reply = _post(modern, _call(n, "boards_list_roots", {}, inputResponses=answers, requestState=state))["result"]
        assert reply["isError"] is False and reply["structuredContent"] == {"roots": ["file:///work/a"]}


def test_a_request_state_key_set_by_a_reload_holds_in_every_process(tmp_path: Path, pack: ModuleType) -> None:
    """Two servers on one workflow stand for two workers: each seals with a key of its own until
    a reload sets server.request_state_key, which both take up at once (no restart)."""
    front = "---\ntracker:\n  kind: boardtracker\n"
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_text(front + "---\n", encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", "")}
    with (
        serve_in_thread(cwd=tmp_path, env=env, plugins=[pack]) as one,
        serve_in_thread(cwd=tmp_path, env=env, plugins=[pack]) as two,
    ):
        state = _post(one.url, _call(1, "boards_delete_board", {"board": "BOARD-3"}))["result"]["requestState"]
        split = _post(two.url, _retry(2, state))["result"]
        assert split["structuredContent"]["error"]["reason"] == "invalid_request_state"
        workflow.write_text(front + "server:\n  request_state_key: " + "k" * 40 + "\n---\n", encoding="utf-8")
        state = _post(one.url, _call(3, "boards_delete_board", {"board": "BOARD-3"}))["result"]["requestState"]
        shared = _post(two.url, _retry(4, state))["result"]
    assert shared["isError"] is False, shared
    assert "BOARD-3" not in pack.BOARDS
