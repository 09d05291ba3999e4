"""``describe(wire=...)``: snake_case attributes with camelCase keys on the wire, in the advertised
schemas, the structured arguments, structuredContent and the argument errors an agent reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from attrs import field, frozen
from jsonschema import Draft202012Validator

from lorenz.authoring import (
    CallContext,
    InputRound,
    Pack,
    PackContext,
    camel_case,
    describe,
    elicit,
    input_schema,
    resource_template,
    tool,
)
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


@frozen(kw_only=True)
class IssueParams:
    issue_id: str = field(metadata=describe("Issue id.", wire="issueId"))


@resource_template("wire://issues/{issueId}", params=IssueParams, name="issue", description="One issue.")
async def issue_text(ctx: PackContext, params: IssueParams) -> str:
    return f"issue {params.issue_id}"


@frozen(kw_only=True)
class Choice:
    state_type: str = field(metadata=describe("The state type to move to.", wire="stateType"))


@tool(name="wire_pick", description="Ask which state type to use.", input=IssueParams, needs_client_input=True)
async def pick(ctx: CallContext, args: IssueParams) -> dict[str, str] | InputRound:
    answer = ctx.inputs.accepted("choice", Choice)
    if answer is None:
        return ctx.request_input({"choice": elicit("Which state type?", schema=Choice)})
    return {"issueId": args.issue_id, "picked": answer.state_type}


async def test_template_variables_and_elicited_answers_use_the_wire_keys(tmp_path: Path) -> None:
    """A resource template's {variables} are its params' wire keys; an elicitation form asks for the
    wire keys and the answer is read from them."""
    host = make_pack_host(Pack(name="wire", tools=[pick], resources=[issue_text]), base_dir=tmp_path)
    async with host.mcp_client() as client:
        (contents,) = (await client.read_resource("wire://issues/B-7")).contents
    assert getattr(contents, "text", None) == "issue B-7"
    answers = {"choice": {"action": "accept", "content": {"stateType": "started"}}}
    result = await host.call("wire_pick", {"issueId": "B-7"}, answers=answers)
    assert result.result == {"issueId": "B-7", "picked": "started"}
    asked = host.asked[0]["choice"]["params"]["requestedSchema"]
    assert list(asked["properties"]) == ["stateType"]


@camel_case
@frozen(kw_only=True)
class SearchArgs:
    issue_id: str = field(metadata=describe("Issue id."))
    state_type_name: str | None = field(default=None, metadata=describe("State type."))
    order_by: str = field(default="id", metadata=describe("Sort key.", wire="order_by"))
    label: Label | None = field(default=None, metadata=describe("A label."))


@camel_case
@frozen(kw_only=True)
class Found:
    issue_id: str = field(metadata=describe("Issue id."))
    total_count: int = field(metadata=describe("Matches."))


@tool(name="wire_search", description="Search issues.", input=SearchArgs, output=Found)
async def search(ctx: CallContext, args: SearchArgs) -> Found:
    return Found(issue_id=args.issue_id, total_count=len(args.order_by))


async def test_camel_case_classes_map_every_field(tmp_path: Path) -> None:
    """@camel_case camelCases each attribute on the wire (like pydantic's alias_generator=to_camel);
    describe(wire=...) still wins, and a nested class keeps its own names."""
    host = make_pack_host(Pack(name="wire", tools=[search]), base_dir=tmp_path)
    (listed,) = await host.list_tools()
    assert list(listed.input_schema["properties"]) == ["issueId", "stateTypeName", "order_by", "label"]
    assert list(listed.input_schema["properties"]["label"]["properties"]) == ["labelName"]
    result = await host.call_mcp("wire_search", {"issueId": "B-1", "order_by": "title"})
    assert result.structured_content == {"issueId": "B-1", "totalCount": 5}
    bad = await host.call_mcp("wire_search", {"issueId": "B-1", "stateTypeName": 1})
    assert "stateTypeName: must be a string or null" in bad.content[0].text


def test_camel_case_needs_an_attrs_class() -> None:
    with pytest.raises(TypeError, match="put @camel_case above @frozen"):
        camel_case(dict)


def test_the_documented_snippet() -> None:
    """The snippet in docs/writing-a-pack.md advertises the keys its comments name."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "writing-a-pack.md").read_text(encoding="utf-8")
    code = doc.split("Wire names are camelCase,", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    space: dict[str, Any] = {}
    exec(compile(code, "<writing-a-pack.md>", "exec"), space)
    assert list(input_schema(space["MoveArgs"])["properties"]) == ["issueId"]
    assert list(input_schema(space["SearchArgs"])["properties"]) == ["issueId", "order_by"]
