"""Issue 41: a tool behaves the same however it is called.

One tool refuses a bad argument, returns a result over ``server.max_result_bytes``, returns output
that breaks its ``outputSchema``, or hangs past ``server.tool_timeout_seconds``; called over HTTP
by the SDK's client, by ``lorenz call``, through ``lorenz.testing`` (its host and ``run_tool``) and through
``execute_mounted_tool``, each case gets the same answer (success, message, reason).
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import mcp
import pytest

from lorenz.cli import main
from lorenz.contracts import ToolContext
from lorenz.host import serve_in_thread
from lorenz.mounting.mount import execute_mounted_tool
from lorenz.results import ToolResult
from lorenz.testing import make_pack_host, run_tool

pytestmark = pytest.mark.anyio

PLUGIN = """
from typing import Any

import anyio

from lorenz import ToolSpec, hookimpl, tool_success

INPUT = {
    "type": "object",
    "properties": {"mode": {"enum": ["ok", "big", "bad_output", "hang"]}},
    "required": ["mode"],
    "additionalProperties": False,
}
OUTPUT = {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
RAN: list[str] = []


class EdgePack:
    name = "edge"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [ToolSpec(name="edge_do", description="Misbehave on request.", input_schema=INPUT, output_schema=OUTPUT)]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        RAN.append(input["mode"])
        if input["mode"] == "big":
            return tool_success({"count": 1, "blob": "x" * 5000})
        if input["mode"] == "bad_output":
            return tool_success({"count": "three"})
        if input["mode"] == "hang":
            await anyio.sleep_forever()
        return tool_success({"count": 1})


PACK = EdgePack()


@hookimpl
def lorenz_register_tool_packs(register: Any) -> None:
    register(PACK)
"""

SERVER = {"tool_timeout_seconds": 0.5, "max_result_bytes": 2000}
TOOL = "edge_do"

#: ``(arguments, (success, message, reason))`` as every caller must answer them.
CASES: list[tuple[dict[str, Any], tuple[bool, str | None, str | None]]] = [
    ({"mode": "ok"}, (True, None, None)),
    (
        {"mode": "nope"},
        (
            False,
            'invalid arguments for tool edge_do: mode: must be one of "ok", "big", "bad_output", "hang"',
            "invalid_arguments",
        ),
    ),
    (
        {"mode": "big"},
        (
            False,
            "edge_do returned more than 2,000 bytes of JSON (server.max_result_bytes): "
            "ask for less, e.g. a smaller limit",
            "result_too_large",
        ),
    ),
    (
        {"mode": "bad_output"},
        (
            False,
            "tool edge_do returned a result that does not match its outputSchema: "
            "$.count: 'three' is not of type 'integer'",
            None,
        ),
    ),
    ({"mode": "hang"}, (False, "tool edge_do did not finish within 0.5 s (server.tool_timeout_seconds)", None)),
]


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The plugin module, importable as ``lorenz_edge_plugin``, and a workflow mounting it."""
    (tmp_path / "lorenz_edge_plugin.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "lorenz-local")
    monkeypatch.chdir(tmp_path)
    server = "".join(f"  {key}: {value}\n" for key, value in SERVER.items())
    workflow = f"---\ntracker:\n  kind: local\nserver:\n{server}tools:\n  edge: {{}}\n---\nWork.\n"
    (tmp_path / "WORKFLOW.md").write_text(workflow, encoding="utf-8")
    import lorenz_edge_plugin  # type: ignore[import-not-found]

    yield lorenz_edge_plugin
    sys.modules.pop("lorenz_edge_plugin", None)


def _from_result(result: ToolResult | dict[str, Any]) -> tuple[bool, str | None, str | None]:
    data = result.to_dict() if isinstance(result, ToolResult) else result
    payload = data.get("result")
    error = payload.get("error") if isinstance(payload, dict) else None
    return data["success"], data.get("error"), error.get("reason") if isinstance(error, dict) else None


EXPECTED = [answer for _, answer in CASES]


async def test_over_http_with_the_sdk_client(plugin: Any, tmp_path: Path) -> None:
    env = {"LORENZ_LOAD_PLUGINS": "lorenz-local", "PATH": os.environ.get("PATH", "")}
    answers = []
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[plugin], reload=False) as server:
        async with mcp.Client(server.url) as client:
            for arguments, _ in CASES:
                result = await client.call_tool(TOOL, arguments)
                error = (result.structured_content or {}).get("error")
                message = error.get("message") if isinstance(error, dict) else None
                answers.append((not result.is_error, message, error.get("reason") if isinstance(error, dict) else None))
    assert answers == EXPECTED
    assert plugin.RAN == ["ok", "big", "bad_output", "hang"]  # the refused call never reached the pack


def test_by_lorenz_call(plugin: Any, capsys: pytest.CaptureFixture[str]) -> None:
    answers = []
    for arguments, (success, _, _) in CASES:
        assert main(["-p", "lorenz_edge_plugin", "call", TOOL, json.dumps(arguments)]) == (0 if success else 1)
        answers.append(_from_result(json.loads(capsys.readouterr().out)))
    assert answers == EXPECTED
    assert plugin.RAN == ["ok", "big", "bad_output", "hang"]


async def test_through_lorenz_testing(plugin: Any, tmp_path: Path) -> None:
    config = {"tracker": {"kind": "lorenz-testing"}, "tools": {"edge": {}}, "server": SERVER}
    host = make_pack_host(plugin.PACK, config=config, base_dir=tmp_path)
    assert [_from_result(await host.call(TOOL, arguments)) for arguments, _ in CASES] == EXPECTED
    assert plugin.RAN == ["ok", "big", "bad_output", "hang"]


async def test_through_execute_mounted_tool(plugin: Any, tmp_path: Path) -> None:
    config = {"tracker": {"kind": "lorenz-testing"}, "server": SERVER}
    host = make_pack_host(plugin.PACK, config=config, base_dir=tmp_path)
    async with httpx.AsyncClient() as http:
        context = ToolContext(settings=host.settings, http=http)
        answers = [_from_result(await execute_mounted_tool([plugin.PACK], TOOL, args, context)) for args, _ in CASES]
    assert answers == EXPECTED
    assert plugin.RAN == ["ok", "big", "bad_output", "hang"]


async def test_through_the_kits_run_tool(plugin: Any, tmp_path: Path) -> None:
    config = {"tracker": {"kind": "lorenz-testing"}, "server": SERVER}
    host = make_pack_host(plugin.PACK, config=config, base_dir=tmp_path)
    async with httpx.AsyncClient() as http:
        context = ToolContext(settings=host.settings, http=http)
        answers = [_from_result(await run_tool(plugin.PACK, TOOL, args, context)) for args, _ in CASES]
    assert answers == EXPECTED
    assert plugin.RAN == ["ok", "big", "bad_output", "hang"]
