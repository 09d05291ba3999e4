"""The ``local`` pack on the authoring kit: what it advertises (annotations, outputSchema), that every
success validates against its outputSchema over the official MCP SDK client, and that a declared
failure arrives with its reason, retryable flag and recovery."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp
import pytest
from jsonschema import Draft202012Validator

from lorenz import Settings
from lorenz.host import RunningServer, serve_in_thread
from lorenz.testing import lint_pack
from lorenz_local.kit import TypedLocalPack, local_tools
from lorenz_local.pack import SPECS_FILE, LocalToolPack, generated_specs, local_tool_specs

pytestmark = pytest.mark.anyio

ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-local"}
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def test_listed_specs_are_the_kit_specs() -> None:
    """What the pack lists is what its typed tools generate, in their fixed order."""
    assert [spec.to_wire() for spec in local_tool_specs()] == [t.spec().to_wire() for t in local_tools()]
    assert local_tool_specs() == [t.spec() for t in local_tools()]  # auth, which the wire omits, too


def test_the_specs_file_is_what_the_kit_generates() -> None:
    """``lorenz tools`` lists from specs.json without importing the kit: it must not drift."""
    assert SPECS_FILE.read_text(encoding="utf-8") == generated_specs(), "run: python -m lorenz_local.pack"


def test_every_tool_is_annotated_closed_world_with_an_output_schema() -> None:
    for spec in LocalToolPack().tool_specs(Settings()):
        assert spec.annotations is not None and spec.output_schema is not None, spec.name
        assert spec.annotations["openWorldHint"] is False
        read_only = spec.annotations["readOnlyHint"]
        assert read_only == (spec.name in {"local_read_issue", "local_query"})
        assert all(key in spec.annotations for key in HINTS if not (read_only and key == "destructiveHint"))


def test_the_typed_pack_lints_clean() -> None:
    assert [d for d in lint_pack(TypedLocalPack()) if d.severity in {"error", "warning"}] == []


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RunningServer]:
    board = tmp_path / "board"
    path = tmp_path / "WORKFLOW.md"
    path.write_text(f"---\ntracker:\n  kind: local\n  path: {json.dumps(str(board))}\n---\nWork the board.\n")
    with serve_in_thread(path, cwd=tmp_path, env=ENV) as running:
        yield running


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("local_create_issue", {"title": "Typed", "body": "check the schema"}),
    ("local_update_status", {"issueId": "BOARD-1", "status": "In Progress"}),
    ("local_comment", {"issueId": "BOARD-1", "body": "noted"}),
    ("local_read_issue", {"issueId": "BOARD-1"}),
    ("local_read_issue", {"issueId": "BOARD-1"}),  # the cached fast path answers the same shape
    ("local_query", {"select": ["id", "title", "comments"]}),
    ("local_query", {"where": {"field": "state", "op": "eq", "value": "Nope"}}),
]


@pytest.mark.slow
async def test_every_success_validates_against_its_output_schema(server: RunningServer) -> None:
    async with mcp.Client(server.url) as client:
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        assert all(schemas.values())
        for name, args in CALLS:
            result = await client.call_tool(name, args)
            assert not result.is_error, result
            Draft202012Validator(schemas[name]).validate(result.structured_content)
            # the text is still the pretty JSON of the payload, as before the kit (a query's echo and
            # notice are structured only)
            before = {k: v for k, v in result.structured_content.items() if k not in ("echo", "notice")}
            assert json.loads(result.content[0].text) == before


@pytest.mark.slow
async def test_a_query_echoes_what_it_read_and_says_why_it_is_empty(server: RunningServer) -> None:
    """local_query carries the query as parsed and, on an empty page, what to try; its text stays
    byte for byte what the tool always answered."""
    where = {"field": "state", "op": "eq", "value": "Nope"}
    async with mcp.Client(server.url) as client:
        empty_board = await client.call_tool("local_query", {})
        await client.call_tool("local_create_issue", {"title": "One"})
        filtered = await client.call_tool("local_query", {"where": where, "order_by": [{"field": "title"}]})
        paged = await client.call_tool("local_query", {"offset": 5, "select": ["id"]})
        found = await client.call_tool("local_query", {"limit": 1})
    assert empty_board.content[0].text == '{\n  "rows": [],\n  "total": 0,\n  "skipped": []\n}'
    assert empty_board.structured_content["notice"] == ("The board has no issues; create one with local_create_issue.")
    assert filtered.structured_content["echo"] == {
        "where": where,
        "order_by": [{"field": "title", "dir": "asc"}],
        "limit": 100,
        "offset": 0,
        "select": ["id", "title", "state", "stateType", "labels"],
    }
    assert filtered.structured_content["notice"].startswith("No issue matched where;")
    assert paged.structured_content["notice"] == (
        "offset 5 is past the 1 matching issues; call again with a smaller offset."
    )
    assert paged.structured_content["echo"]["select"] == ["id"]
    assert "notice" not in found.structured_content
    assert list(found.structured_content) == ["rows", "total", "skipped", "echo"]
    assert json.loads(found.content[0].text) == {k: found.structured_content[k] for k in ("rows", "total", "skipped")}


@pytest.mark.slow
async def test_a_missing_issue_is_a_declared_not_found(server: RunningServer) -> None:
    async with mcp.Client(server.url) as client:
        result = await client.call_tool("local_read_issue", {"issueId": "BOARD-404"})
    assert result.is_error
    assert result.structured_content is not None
    error = result.structured_content["error"]
    assert error["message"] == "local board issue not found: BOARD-404"
    assert (error["reason"], error["retryable"]) == ("not_found", False)
    assert "local_query" in error["recovery"]
