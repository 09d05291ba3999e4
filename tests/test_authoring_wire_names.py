"""``describe(wire=...)``: snake_case attributes with camelCase keys on the wire, in the advertised
schemas, the structured arguments, structuredContent and the argument errors an agent reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from attrs import field, frozen
from jsonschema import Draft202012Validator

from lorenz.authoring import CallContext, Pack, describe, tool
from lorenz.testing import PackHost, make_pack_host

pytestmark = pytest.mark.anyio


@frozen(kw_only=True)
class Label:
    label_name: str = field(metadata=describe("Label name.", wire="labelName"))


@frozen(kw_only=True)
class MoveArgs:
    issue_id: str = field(metadata=describe("Issue id.", wire="issueId"))
    state_type: str | None = field(default=None, metadata=describe("State type.", wire="stateType"))
    labels: list[Label] = field(factory=list, metadata=describe("Labels to add."))


@frozen(kw_only=True)
class Moved:
    issue_id: str = field(metadata=describe("Issue id.", wire="issueId"))
    state_type: str | None = field(default=None, metadata=describe("State type.", wire="stateType", omit_none=True))
    label_names: list[str] = field(metadata=describe("Labels added.", wire="labelNames"))


@tool(name="wire_move", description="Move an issue.", input=MoveArgs, output=Moved)
async def move(ctx: CallContext, args: MoveArgs) -> Moved:
    names = [label.label_name for label in args.labels]
    return Moved(issue_id=args.issue_id, state_type=args.state_type, label_names=names)


@pytest.fixture
def host(tmp_path: Path) -> PackHost:
    return make_pack_host(Pack(name="wire", tools=[move]), base_dir=tmp_path)


async def test_schemas_name_the_wire_keys(host: PackHost) -> None:
    """inputSchema and outputSchema carry the camelCase keys, nested classes included."""
    (listed,) = await host.list_tools()
    props = listed.input_schema["properties"]
    assert sorted(props) == ["issueId", "labels", "stateType"]
    assert listed.input_schema["required"] == ["issueId"]
    assert list(props["labels"]["items"]["properties"]) == ["labelName"]
    assert listed.output_schema is not None
    assert {"issueId", "labelNames", "stateType"} <= set(listed.output_schema["properties"])


async def test_arguments_and_results_use_the_wire_keys(host: PackHost) -> None:
    """camelCase arguments reach the handler as snake_case attributes; the result goes back camelCase
    (omit_none keyed by the wire name too) and validates against the advertised outputSchema."""
    (listed,) = await host.list_tools()
    result = await host.call_mcp("wire_move", {"issueId": "B-1", "labels": [{"labelName": "bug"}]})
    assert result.is_error is False
    assert result.structured_content == {"issueId": "B-1", "labelNames": ["bug"]}
    Draft202012Validator(listed.output_schema).validate(result.structured_content)


async def test_argument_errors_name_the_wire_key(host: PackHost) -> None:
    """A missing, mistyped or nested-bad field is named by its wire key; the attribute name is refused."""
    missing = await host.call_mcp("wire_move", {})
    assert "issueId: required" in missing.content[0].text
    mistyped = await host.call_mcp("wire_move", {"issueId": 5})
    assert "issueId: must be a string" in mistyped.content[0].text
    nested = await host.call_mcp("wire_move", {"issueId": "B-1", "labels": [{"labelName": 3}]})
    assert "labels.0.labelName: must be a string" in nested.content[0].text
    python_name = await host.call_mcp("wire_move", {"issue_id": "B-1"})
    assert python_name.is_error is True
    assert 'Unrecognized key: "issue_id"' in python_name.content[0].text
    assert "issue_id" not in missing.content[0].text
