"""Asking the client for input, the parts around the wire: the documented snippet runs against an
SDK client, an answer that does not fit its class, requests a form cannot carry, isolated packs,
``server.request_state_key`` and what ``lorenz check`` warns about."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import mcp
import mcp_types as types
import pytest
from attrs import frozen

from lorenz.authoring import Pack, elicit
from lorenz.client_input import ASK, ClientInput, serving_warnings
from lorenz.plugins.registry import TrackerRegistry
from lorenz.settings import ConfigError, Settings
from lorenz.settings import parse_config as parse
from lorenz.testing import make_pack_host

HERE = Path(__file__).parent
DOC = HERE.parent / "docs" / "writing-a-pack.md"
KEY = "k" * 40


def parse_config(config: dict[str, Any], env: dict[str, str] | None = None) -> Settings:
    return parse(config, env=env or {}, trackers=TrackerRegistry(), base_dir=Path())


@pytest.fixture
def pack() -> ModuleType:
    spec = importlib.util.spec_from_file_location("input_pack", HERE / "input_pack.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.BOARDS.update({"BOARD-3": "Q3 plans"})
    return module


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_documented_snippet_asks_and_deletes(tmp_path: Path, mode: str) -> None:
    section = DOC.read_text(encoding="utf-8").split("### Asking the client for input\n", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    space: dict[str, Any] = {}
    exec(compile(code, "<writing-a-pack.md>", "exec"), space)
    server = make_pack_host(Pack(name="acme", tools=[space["delete_board"]]), base_dir=tmp_path).server()
    asked: list[str] = []

    async def confirm(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"confirm": True})

    try:
        async with mcp.Client(server, mode=mode, elicitation_callback=confirm) as client:
            result = await client.call_tool("acme_delete_board", {"board": "BOARD-3"})
    finally:
        await server._lorenz_state.aclose()  # type: ignore[attr-defined]
    assert result.structured_content == {"board": "BOARD-3"}
    assert asked == ["Delete BOARD-3?"] and space["BOARDS"] == {}


@pytest.mark.anyio
async def test_an_answer_that_does_not_fit_is_a_validation_error(tmp_path: Path, pack: ModuleType) -> None:
    server = make_pack_host(pack.PACK, base_dir=tmp_path).server()

    async def wrong(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"confirm": "yes"})

    try:
        async with mcp.Client(server, elicitation_callback=wrong) as client:
            result = await client.call_tool("boards_delete_board", {"board": "BOARD-3"})
    finally:
        await server._lorenz_state.aclose()  # type: ignore[attr-defined]
    assert result.is_error is True
    assert "answer to 'confirm' does not fit: confirm: must be a boolean" in result.content[0].text
    error = result.structured_content["error"]
    assert error["reason"] == "validation_error"
    assert "the client's answer to 'confirm' was not" in error["recovery"]
    assert "Correct the arguments" not in error["recovery"]  # the arguments were fine
    assert "BOARD-3" in pack.BOARDS


@frozen
class Count:
    count: int


@pytest.mark.anyio
async def test_a_form_integer_past_the_safe_range_is_refused(tmp_path: Path) -> None:
    """An ``int`` field's answer is bounded like the form says (JavaScript's safe integers)."""
    from lorenz.authoring import CallContext, tool
    from lorenz.authoring.inputs import MAX_FORM_INTEGER

    form = elicit("How many?", schema=Count)
    assert form.params["requestedSchema"]["properties"]["count"] == {
        "type": "integer",
        "minimum": -MAX_FORM_INTEGER,
        "maximum": MAX_FORM_INTEGER,
    }

    @tool(name="count_it", description="Asks how many.", input=Inner)
    async def count_it(ctx: CallContext, args: Inner) -> Any:
        answer = ctx.inputs.accepted("count", Count)
        if answer is None:
            return ctx.request_input({"count": form})
        return {"count": answer.count}

    host = make_pack_host(Pack(name="count", tools=[count_it]), base_dir=tmp_path)
    fine = await host.call(
        "count_it", {"x": 1}, answers={"count": {"action": "accept", "content": {"count": 2**53 - 1}}}
    )
    assert fine.success is True and fine.result == {"count": 2**53 - 1}
    for huge in (10**30, -(2**53)):
        refused = await host.call(
            "count_it", {"x": 1}, answers={"count": {"action": "accept", "content": {"count": huge}}}
        )
        assert refused.success is False
        assert f"count: must be between -{MAX_FORM_INTEGER} and {MAX_FORM_INTEGER}" in refused.error


@frozen
class Inner:
    x: int


@frozen
class Nested:
    inner: Inner


def test_a_form_takes_flat_fields_only() -> None:
    with pytest.raises(ValueError, match="field 'inner' must be a string, number"):
        elicit("Fill it in", schema=Nested)


def test_request_state_key_is_a_secret_of_32_bytes() -> None:
    settings = parse_config({"server": {"request_state_key": "$STATE_KEY"}}, env={"STATE_KEY": KEY})
    assert settings.server.request_state_key == KEY
    assert KEY in settings.secrets  # redacted wherever it could appear
    assert KEY not in repr(settings.server)
    with pytest.raises(ConfigError, match="server.request_state_key must be at least 32 bytes"):
        parse_config({"server": {"request_state_key": "short"}})
    with pytest.raises(ConfigError, match=r"server.request_state_key: \$STATE_KEY is not set"):
        parse_config({"server": {"request_state_key": "$STATE_KEY"}}, env={})


def test_warnings_name_what_cannot_work() -> None:
    default = parse_config({}).server
    (workers,) = serving_warnings(default, workers=4)
    assert "4 workers and no server.request_state_key" in workers
    shared = parse_config({"server": {"request_state_key": KEY}}).server
    assert serving_warnings(shared, workers=4) == []
    (tool,) = serving_warnings(default, workers=1, asking_tools=["boards_delete_board"])
    assert tool.startswith("boards_delete_board needs input from the client")
    streaming = parse_config({"server": {"stateful": True, "json_response": False}}).server
    assert serving_warnings(streaming, workers=1, asking_tools=["boards_delete_board"]) == []


def test_lorenz_check_warns_about_a_tool_no_client_could_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from lorenz.cli import main

    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: boardtracker\n---\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "")
    monkeypatch.syspath_prepend(str(HERE))
    assert main(["-p", "input_pack", "check", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "boards_delete_board" in json.loads(out)["tools"]  # the JSON stays as it was
    assert "warning:" in err and "boards_delete_board needs input from the client" in err
    assert "boards_nag" not in err  # only the tools that declare it


ASKER = """
from attrs import frozen

from lorenz import hookimpl
from lorenz.authoring import Pack, elicit, tool


@frozen
class Confirm:
    confirm: bool


@frozen
class NoArgs:
    pass


@tool(name="asker_confirm", description="Asks the user to confirm.", input=NoArgs)
async def confirm(ctx, args):
    if ctx.inputs.view("confirm").asked:
        return {"confirmed": True}
    return ctx.request_input({"confirm": elicit("Sure?", schema=Confirm)})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Pack(name="asker", tools=[confirm]))
"""


@pytest.mark.slow
def test_an_isolated_pack_in_its_own_process_asks_through_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import anyio

    from lorenz.workspace import open_workspace

    site = tmp_path / "site"
    info = site / "iso_asker-1.0.dist-info"
    info.mkdir(parents=True)
    (site / "iso_asker.py").write_text(ASKER, encoding="utf-8")
    metadata = "Metadata-Version: 2.1\nName: iso-asker\nVersion: 1.0\nRequires-Dist: lorenz-core>=0.1\n"
    (info / "METADATA").write_text(metadata, encoding="utf-8")
    (info / "entry_points.txt").write_text("[lorenz.tool_packs]\nasker = iso_asker\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)
    front = "tracker:\n  kind: local\n  path: ./board\ntools:\n  asker: {}\nserver:\n  isolated_packs: ['*']\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-local,iso-asker"
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    workspace = open_workspace(cwd=tmp_path, env=env)

    asked: list[Any] = []

    async def ask(requests: Any) -> dict[str, Any]:
        asked.append(requests)
        return {"confirm": {"action": "accept", "content": {"confirm": True}}}

    async def call(client: ClientInput | None) -> Any:
        async with httpx.AsyncClient() as http:
            return await workspace.call("asker_confirm", {}, http, client_input=client)

    try:
        answered = anyio.run(call, ClientInput(mode=ASK, ask=ask))
        alone = anyio.run(call, None)
    finally:
        workspace.close()
        sys.modules.pop("iso_asker", None)
    assert answered.success is True and answered.result == {"confirmed": True}
    assert [list(requests) for requests in asked] == [["confirm"]]
    assert asked[0]["confirm"]["params"]["message"] == "Sure?"
    assert alone.success is False
    assert (
        alone.result["error"]["message"]
        == "asker_confirm needs input from the client, but this call has no client to ask"
    )


@pytest.mark.anyio
async def test_pack_host_plays_the_client(tmp_path: Path, pack: ModuleType) -> None:
    host = make_pack_host(pack.PACK, base_dir=tmp_path)
    refused = await host.call("boards_delete_board", {"board": "BOARD-3"})
    assert refused.success is False and "this call has no client to ask" in refused.error
    yes = {"confirm": {"action": "accept", "content": {"confirm": True}}}
    declined = await host.call("boards_delete_board", {"board": "BOARD-3"}, answers={})
    assert declined.success is False and "(cancel)" in declined.error  # a name left out is cancelled
    assert "BOARD-3" in pack.BOARDS
    done = await host.call("boards_delete_board", {"board": "BOARD-3"}, answers=yes)
    assert done.success is True and done.result == {"board": "BOARD-3"}
    assert [list(round) for round in host.asked] == [["confirm"], ["confirm"]]
    assert host.asked[1]["confirm"]["params"]["message"] == "Delete BOARD-3?"
    assert "BOARD-3" not in pack.BOARDS


def test_a_spent_state_is_forgotten_once_it_would_have_expired(monkeypatch: pytest.MonkeyPatch) -> None:
    """The record of used states holds each for the state's lifetime only (it cannot grow past
    what ten minutes of calls mint)."""
    from lorenz.host.mcp import asking

    now = [1000.0]
    monkeypatch.setattr(asking.time, "monotonic", lambda: now[0])
    spent = asking._Spent()
    assert spent.spend("v1.a") and spent.spend("v1.b")
    assert not spent.spend("v1.a")
    now[0] += asking.STATE_TTL_SECONDS + 1
    assert spent.spend("v1.c")  # drops a and b on the way
    assert spent.spend("v1.a")  # expired by now anyway: the SDK's boundary refuses it first
