"""The `local` tool pack: specs, execution, results and error texts."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from lorenz import ConfigError, Settings, ToolContext, ToolResult, TrackerSettings, discover, hookimpl
from lorenz.testing import open_workspace, parse_config, validate_dispatch_config
from lorenz_local import tools as tools_module
from lorenz_local.pack import LocalToolPack
from lorenz_local.store import BoardStore

pytestmark = pytest.mark.anyio

NAMES = ["local_update_status", "local_comment", "local_create_issue", "local_read_issue", "local_query"]
PACK = LocalToolPack()


def board_settings(board: Path, **options: str) -> Settings:
    return Settings(tracker=TrackerSettings(kind="local", options={"path": str(board), **options}))


async def call(http: httpx.AsyncClient, board: Path, name: str, args: Any, **options: str) -> ToolResult:
    return await PACK.execute_tool(name, args, ToolContext(settings=board_settings(board, **options), http=http))


def test_spec_names_order_and_schemas() -> None:
    """Five tools in the fixed order, strict object schemas with the documented required keys."""
    specs = PACK.tool_specs(Settings())
    assert [spec.name for spec in specs] == NAMES
    assert PACK.name == "local"
    required = {spec.name: spec.input_schema.get("required") for spec in specs}
    assert required == {
        "local_update_status": ["issueId", "status"],
        "local_comment": ["issueId", "body"],
        "local_create_issue": ["title"],
        "local_read_issue": ["issueId"],
        "local_query": None,
    }
    for spec in specs:
        assert spec.input_schema["type"] == "object"
        assert spec.input_schema["additionalProperties"] is False
        for key, prop in spec.input_schema["properties"].items():
            assert prop.get("description"), f"{spec.name}.{key} has no description"
    query = specs[-1].input_schema["properties"]
    assert {k: v for k, v in query["select"].items() if k != "description"} == {
        "type": "array",
        "items": {"type": "string"},
    }
    assert set(query) == {"where", "select", "order_by", "limit", "offset"}


async def test_create_issue_writes_the_file(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """local_create_issue succeeds and BOARD-1.md exists."""
    result = await call(http, tmp_path, "local_create_issue", {"title": "Via pack", "status": "Todo"})
    assert result.success
    assert result.result["issue"]["id"] == "BOARD-1"
    assert (tmp_path / "BOARD-1.md").exists()


async def test_create_update_comment_flow(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """Create, move to In Progress and comment: the file shows both."""
    await call(http, tmp_path, "local_create_issue", {"title": "Fix it"})
    moved = await call(http, tmp_path, "local_update_status", {"issueId": "BOARD-1", "status": "In Progress"})
    assert moved.result["issue"]["state"] == "In Progress"
    assert moved.result["issue"]["stateType"] == "started"
    commented = await call(http, tmp_path, "local_comment", {"issueId": "BOARD-1", "body": "opened PR"})
    assert commented.to_dict() == {"success": True, "result": {"ok": True}}
    text = (tmp_path / "BOARD-1.md").read_text()
    assert "status: In Progress" in text
    assert "agent: opened PR" in text


async def test_create_keeps_a_multiline_body(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """A multi-line body is the description, also for a fresh store."""
    body = "Steps to reproduce:\n1. open the app\n2. it crashes"
    result = await call(http, tmp_path, "local_create_issue", {"title": "Crash", "body": body})
    assert result.result["issue"]["description"] == body
    assert BoardStore(tmp_path).read("BOARD-1").description == body


async def test_blank_optional_status_defaults_to_todo(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """A whitespace-only status on create is treated as absent."""
    result = await call(http, tmp_path, "local_create_issue", {"title": "Blank", "status": "   "})
    assert result.result["issue"]["state"] == "Todo"


async def test_read_issue_returns_raw_status_and_comments(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """local_read_issue gives {issue: {id, status, title, description}, comments}."""
    await call(http, tmp_path, "local_create_issue", {"title": "Read it", "body": "the details"})
    await call(http, tmp_path, "local_update_status", {"issueId": "BOARD-1", "status": "In Progress"})
    await call(http, tmp_path, "local_comment", {"issueId": "BOARD-1", "body": "opened PR"})
    await call(http, tmp_path, "local_comment", {"issueId": "BOARD-1", "body": "checks green"})
    result = await call(http, tmp_path, "local_read_issue", {"issueId": "BOARD-1"})
    assert result.result["issue"] == {
        "id": "BOARD-1",
        "status": "In Progress",
        "title": "Read it",
        "description": "the details",
    }
    comments = result.result["comments"]
    assert len(comments) == 2
    assert re.search("agent: opened PR", comments[0])
    assert re.search("agent: checks green", comments[1])


async def test_read_issue_failures(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """A missing issue and a malformed id are failures, not exceptions."""
    missing = await call(http, tmp_path, "local_read_issue", {"issueId": "BOARD-404"})
    bad = await call(http, tmp_path, "local_read_issue", {"issueId": "nope"})
    assert not missing.success
    assert not bad.success
    assert bad.error == 'invalid board issue id: "nope" (expected BOARD-<n>)'
    assert bad.result == {"error": {"message": bad.error}}


@pytest.mark.parametrize(
    ("name", "args", "message"),
    [
        ("local_update_status", {"status": "Done"}, "'issueId' is required"),
        ("local_update_status", {"issueId": "BOARD-1"}, "'status' is required"),
        ("local_update_status", {"issueId": "BOARD-1", "status": "  "}, "'status' is required"),
        ("local_comment", {"issueId": 7, "body": "x"}, "'issueId' is required"),
        ("local_comment", {"issueId": "BOARD-1"}, "'body' is required"),
        ("local_create_issue", {"title": " "}, "'title' is required"),
        ("local_create_issue", ["not", "a", "map"], "'title' is required"),
        ("local_read_issue", None, "'issueId' is required"),
    ],
)
async def test_required_arguments(tmp_path: Path, http: httpx.AsyncClient, name: str, args: Any, message: str) -> None:
    """Missing, blank or non-string required arguments fail with `'<key>' is required`."""
    result = await call(http, tmp_path, name, args)
    assert (result.success, result.error) == (False, message)


async def _three(http: httpx.AsyncClient, board: Path) -> None:
    for title, status in (("Alpha", "Todo"), ("Beta", "In Progress"), ("Gamma", "Todo")):
        await call(http, board, "local_create_issue", {"title": title, "status": status})


async def test_query_filters_sorts_and_projects(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """where + select + order_by desc: total 2, titles Gamma then Alpha, only selected keys."""
    await _three(http, tmp_path)
    result = await call(
        http,
        tmp_path,
        "local_query",
        {
            "where": {"field": "state", "op": "eq", "value": "Todo"},
            "select": ["id", "title"],
            "order_by": [{"field": "title", "dir": "desc"}],
        },
    )
    assert result.success
    assert result.result["total"] == 2
    assert [row["title"] for row in result.result["rows"]] == ["Gamma", "Alpha"]
    assert all(set(row) == {"id", "title"} for row in result.result["rows"])
    assert result.result["skipped"] == []


async def test_query_pages(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """limit and offset page after the total is counted."""
    await _three(http, tmp_path)
    result = await call(
        http,
        tmp_path,
        "local_query",
        {"select": ["id"], "order_by": [{"field": "id", "dir": "asc"}], "limit": 1, "offset": 1},
    )
    echo = result.result.pop("echo")  # the query as read, beside the answer (structuredContent only)
    assert result.result == {"rows": [{"id": "BOARD-2"}], "total": 3, "skipped": []}
    assert echo == {"order_by": [{"field": "id", "dir": "asc"}], "limit": 1, "offset": 1, "select": ["id"]}


async def test_query_default_select(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """Without select a row has id, title, state, stateType and labels."""
    (tmp_path / "BOARD-1.md").write_text("---\nstatus: Todo\nlabels: [Backend]\n---\n# One\n")
    result = await call(http, tmp_path, "local_query", {})
    assert result.result["rows"] == [
        {"id": "BOARD-1", "title": "One", "state": "Todo", "stateType": "unstarted", "labels": ["backend"]}
    ]


async def test_query_rows_do_not_alias_the_cache(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """Mutating a returned row does not change what the next query returns."""
    (tmp_path / "BOARD-1.md").write_text("---\nstatus: Todo\nlabels: [a]\n---\n# One\n")
    first = await call(http, tmp_path, "local_query", {})
    first.result["rows"][0]["labels"].append("mutated")
    first.result["rows"][0]["title"] = "mutated"
    again = await call(http, tmp_path, "local_query", {})
    assert again.result["rows"][0]["labels"] == ["a"]
    assert again.result["rows"][0]["title"] == "One"


async def test_query_comments_only_when_selected(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """`comments` appears only when selected, with the issue's comment lines."""
    await call(http, tmp_path, "local_create_issue", {"title": "Noted"})
    await call(http, tmp_path, "local_comment", {"issueId": "BOARD-1", "body": "first note"})
    plain = await call(http, tmp_path, "local_query", {"select": ["id", "title"]})
    assert "comments" not in plain.result["rows"][0]
    with_comments = await call(http, tmp_path, "local_query", {"select": ["id", "comments"]})
    comments = with_comments.result["rows"][0]["comments"]
    assert len(comments) == 1
    assert "agent: first note" in comments[0]


async def test_query_reports_malformed_files_as_skipped(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """A malformed file lands in `skipped` and the query still succeeds."""
    await call(http, tmp_path, "local_create_issue", {"title": "Good"})
    (tmp_path / "BOARD-9.md").write_text("---\nlabels: []\n---\n# no status\n")
    result = await call(http, tmp_path, "local_query", {"select": ["id"]})
    assert result.success
    assert result.result["rows"] == [{"id": "BOARD-1"}]
    assert [item["id"] for item in result.result["skipped"]] == ["BOARD-9"]
    assert "status" in result.result["skipped"][0]["error"]


async def test_query_bad_filter_is_a_failure(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """An unknown op fails the call with the DSL's message."""
    result = await call(http, tmp_path, "local_query", {"where": {"field": "state", "op": "bogus", "value": "x"}})
    assert not result.success
    assert result.error is not None
    assert "unknown op" in result.error


async def test_query_sorts_on_unselected_fields_and_sees_new_writes(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """order_by works on a field not selected, and a write is visible to the next (cached) query."""
    await _three(http, tmp_path)
    first = await call(
        http, tmp_path, "local_query", {"select": ["id"], "order_by": [{"field": "title", "dir": "desc"}]}
    )
    assert [row["id"] for row in first.result["rows"]] == ["BOARD-3", "BOARD-2", "BOARD-1"]
    await call(http, tmp_path, "local_update_status", {"issueId": "BOARD-2", "status": "Done"})
    done = await call(http, tmp_path, "local_query", {"where": {"field": "state", "op": "eq", "value": "Done"}})
    assert [row["id"] for row in done.result["rows"]] == ["BOARD-2"]


async def test_unknown_tool_lists_the_five_tools(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """An unknown name gives the exact unsupported-tool failure."""
    result = await call(http, tmp_path, "local_bogus", {})
    assert result.to_dict() == {
        "success": False,
        "error": 'Unsupported tool: "local_bogus".',
        "result": {"error": {"message": 'Unsupported tool: "local_bogus".', "supportedTools": NAMES}},
    }


async def test_tilde_path_uses_process_home(
    tmp_path: Path, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`path: ~/board` writes under $HOME, not under `<cwd>/~`."""
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(cwd)
    settings = Settings(tracker=TrackerSettings(kind="local", options={"path": "~/board"}))
    result = await PACK.execute_tool(
        "local_create_issue", {"title": "FromTilde"}, ToolContext(settings=settings, http=http)
    )
    assert result.success
    assert (home / "board" / "BOARD-1.md").exists()
    assert not (cwd / "~").exists()


async def test_pack_board_falls_back_by_dispatch_kind(
    tmp_path: Path, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tools.local wins; the tracker's board is used only when `local` dispatches; else .lorenz/local."""
    monkeypatch.chdir(tmp_path)
    explicit = Settings(
        tracker=TrackerSettings(kind="local", options={"path": "tracker-board"}),
        tool_options={"local": {"path": "pack-board", "id_prefix": "PK-"}},
    )
    other = Settings(tracker=TrackerSettings(kind="linear", options={"path": "ignored"}), tool_options={"local": {}})
    for settings in (explicit, other):
        result = await PACK.execute_tool(
            "local_create_issue", {"title": "x"}, ToolContext(settings=settings, http=http)
        )
        assert result.success
    assert (tmp_path / "pack-board" / "PK-1.md").exists()
    assert (tmp_path / ".lorenz" / "local" / "BOARD-1.md").exists()
    assert not (tmp_path / "tracker-board").exists()
    assert not (tmp_path / "ignored").exists()


async def test_tools_run_off_the_event_loop(
    tmp_path: Path, http: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Blocking board I/O runs in a worker thread, not on the event loop's thread."""
    threads: list[threading.Thread] = []
    real = tools_module.run_local_tool

    def spy(name: str, args: Any, settings: Settings) -> ToolResult:
        threads.append(threading.current_thread())
        return real(name, args, settings)

    monkeypatch.setattr(tools_module, "run_local_tool", spy)
    assert (await call(http, tmp_path, "local_query", {})).success
    assert threads
    assert threads[0] is not threading.current_thread()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"surprise": 1}, "tools.local.surprise is not supported (known keys: path, idPrefix, id_prefix)"),
        ({"pth": "./b"}, 'tools.local.pth is not supported (did you mean "path"?)'),
        ({"path": 3}, "tools.local.path must be a string"),
        ({"path": "  "}, "tools.local.path must not be empty"),
        ({"idPrefix": 5}, "tools.local.idPrefix must be a string"),
        (
            {"id_prefix": "bad/prefix"},
            'tools.local.id_prefix "bad/prefix" is invalid: '
            'must start alphanumeric, then only letters, digits, "_" or "-"',
        ),
    ],
)
def test_validate_options_messages(options: dict[str, Any], message: str) -> None:
    """tools.local is validated with the exact messages."""
    with pytest.raises(ValueError, match=r"^tools\.local\.") as info:
        PACK.validate_options(options)
    assert str(info.value) == message


def test_validate_options_accepts_known_keys_and_nulls() -> None:
    """Known keys with strings, and null values, pass."""
    PACK.validate_options({"path": "./board", "idPrefix": "OPS-", "id_prefix": None})


def test_tools_local_is_validated_at_startup(tmp_path: Path) -> None:
    """validate_dispatch_config runs the pack's validator on the workflow's tools.local."""
    discovery = discover(env={"LORENZ_LOAD_PLUGINS": "lorenz-local"})
    config = {"tracker": {"kind": "local", "path": "b"}, "tools": {"local": {"path": "b", "oops": "x"}}}
    settings = parse_config(config, env={}, trackers=discovery.trackers, base_dir=tmp_path)
    with pytest.raises((ConfigError, ValueError), match=r"tools.local.oops is not supported"):
        validate_dispatch_config(settings, discovery.trackers, discovery.tools)


class _OtherTracker:
    """A dispatch tracker that mounts no pack of its own."""

    kind = "other"

    def create_client(self, settings: Settings, context: object) -> object:
        raise NotImplementedError

    def default_tool_packs(self, settings: Settings) -> list[str]:
        return []


class _OtherPlugin:
    @staticmethod
    @hookimpl
    def lorenz_register_trackers(register: Any) -> None:
        register(_OtherTracker())


async def test_pack_mounts_beside_another_tracker(tmp_path: Path, http: httpx.AsyncClient) -> None:
    """`tools: {local: {path}}` under another dispatch tracker mounts the five tools on that board."""
    board = tmp_path / "side-board"
    (tmp_path / "WORKFLOW.md").write_text(
        f"---\ntracker:\n  kind: other\ntools:\n  local:\n    path: {str(board)!r}\n    id_prefix: SIDE-\n---\n"
    )
    workspace = open_workspace(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": "lorenz-local"}, plugins=[_OtherPlugin()])
    assert [spec.name for spec in workspace.tool_specs()] == NAMES
    result = await workspace.call("local_create_issue", {"title": "beside"}, http)
    assert result.result["issue"]["id"] == "SIDE-1"
    assert (board / "SIDE-1.md").exists()


def test_a_misspelt_argument_key_names_the_closest_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 44: ``titel`` is refused with the key the tool takes, as a misspelt tool name is."""
    from lorenz.testing import run_cli as main

    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "lorenz-local")
    monkeypatch.delenv("LORENZ_WORKFLOW", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["call", "local_create_issue", '{"titel": "Fix it"}']) == 1
    error = json.loads(capsys.readouterr().out)["result"]["error"]
    assert error["problems"][0] == {"path": "$", "message": 'Unrecognized key: "titel" (did you mean "title"?)'}


def test_lorenz_call_refuses_the_misspelled_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 12's example: ``lorenz call local_create_issue {"title":"t","staus":"Done"}`` used to
    create a Todo issue and report success; now it is refused by name and no board is written."""
    from lorenz.testing import run_cli as main

    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "lorenz-local")
    monkeypatch.delenv("LORENZ_WORKFLOW", raising=False)
    monkeypatch.chdir(tmp_path)  # no WORKFLOW.md: the embedded default board under .lorenz/local
    assert main(["call", "local_create_issue", '{"title": "t", "staus": "Done"}']) == 1
    out = capsys.readouterr().out
    assert (
        json.loads(out)["error"]
        == 'invalid arguments for tool local_create_issue: Unrecognized key: "staus" (did you mean "status"?)'
    )
    assert list(tmp_path.rglob("*.md")) == []
    assert main(["call", "local_create_issue", '{"title": "t", "status": "Done"}']) == 0
    assert json.loads(capsys.readouterr().out)["result"]["issue"]["state"] == "Done"


HOST_CAP = "values; one call may hold at most 20,000 in all"
OVERSIZED_QUERIES = [
    (
        {"where": {"field": "t", "op": "nin", "value": [0] * 150_000}},
        "filter: 'nin' value has more than 1000 items",
        f"invalid arguments for tool local_query: where.value: 150,000 {HOST_CAP}",
    ),
    (
        {"order_by": [{"field": "title"}] * 10_000},
        "order_by has more than 8 keys",
        f"invalid arguments for tool local_query: order_by: 10,000 {HOST_CAP}",
    ),
    (
        {"select": ["title"] * 100_000},
        "select has more than 64 fields",
        f"invalid arguments for tool local_query: select: 100,000 {HOST_CAP}",
    ),
    (
        {"where": {"field": "title", "op": "contains", "value": "x" * (1 << 20)}},
        "filter: 'contains' value is longer than 4096 characters",
        None,
    ),
]


@pytest.mark.parametrize(("args", "message", "host_message"), OVERSIZED_QUERIES)
async def test_query_refuses_oversized_queries(
    tmp_path: Path, http: httpx.AsyncClient, args: dict[str, Any], message: str, host_message: str | None
) -> None:
    """The issue's reproductions (seconds of CPU each on a 1,000-issue board) fail with the DSL
    bound's message in the pack; over MCP the host's cap on values per call refuses the largest
    first (before its schema check would walk them), and the DSL's message reaches the rest."""
    from lorenz.testing import make_pack_host

    await _three(http, tmp_path)
    assert (await call(http, tmp_path, "local_query", args)).error == message
    host = make_pack_host(PACK, options={"local": {"path": str(tmp_path)}}, base_dir=tmp_path)
    reply = await host.call_mcp("local_query", args)
    assert reply.is_error
    assert reply.structured_content is not None
    assert reply.structured_content["error"]["message"] == (host_message or message)
