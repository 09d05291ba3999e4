"""Issue 12, input boundary: one wording for refused arguments, whoever checks them.

``invalid arguments for tool <tool>: <key.path>: <message>``: the host's JSON Schema check (MCP
and ``lorenz call``) and the typed authoring kit's structuring say the same thing for the same
mistake, and an unknown key is ``Unrecognized key: "x"``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lorenz.arguments import ArgumentProblem, invalid_arguments
from lorenz.cli import main
from lorenz.toolcall.schemas import compile_schema, validate_arguments

pytestmark = pytest.mark.anyio

#: A plugin module with the same tool twice: typed (``typed_make_shape``, lorenz.authoring) and
#: plain (``plain_make_shape``, advertising the typed tool's very inputSchema, checked by the host).
PLUGIN = """
from typing import Any, Literal

from attrs import field, frozen

from lorenz import ToolSpec, hookimpl, tool_success
from lorenz.authoring import Pack, describe, tool


@frozen
class Point:
    x: float = field(metadata=describe("X."))
    y: float = field(metadata=describe("Y."))


@frozen
class ShapeArgs:
    name: str = field(metadata=describe("Name.", minLength=1))
    sides: int = field(default=4, metadata=describe("Sides.", minimum=3, maximum=12))
    color: Literal["red", "blue"] = field(default="red", metadata=describe("Color."))
    tags: tuple[str, ...] = field(default=(), metadata=describe("Tags."))
    points: tuple[Point, ...] = field(default=(), metadata=describe("Points."))
    origin: Point | None = field(default=None, metadata=describe("Origin."))


WRITES: list[str] = []


@tool(name="typed_make_shape", description="Make a shape.", input=ShapeArgs)
async def make_shape(ctx: Any, args: ShapeArgs) -> dict[str, Any]:
    WRITES.append("typed")
    return {"name": args.name}


class PlainPack:
    name = "plain"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        schema = dict(make_shape.input_schema)
        return [ToolSpec(name="plain_make_shape", description="Make a shape.", input_schema=schema)]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        WRITES.append("plain")
        return tool_success({"name": input["name"]})


TYPED = Pack(name="typed", tools=[make_shape])
PLAIN = PlainPack()


@hookimpl
def lorenz_register_tool_packs(register: Any) -> None:
    register(TYPED)
    register(PLAIN)
"""

BAD = [
    ({"name": "box", "staus": 1}, 'Unrecognized key: "staus" (did you mean "tags"?)'),
    ({}, "name: required"),
    ({"nmae": "box"}, 'Unrecognized key: "nmae" (did you mean "name"?); name: required'),
    ({"name": 5}, "name: must be a string"),
    ({"name": ""}, "name: must not be empty"),
    ({"name": "box", "sides": 2}, "sides: must be at least 3"),
    ({"name": "box", "sides": 13}, "sides: must be at most 12"),
    ({"name": "box", "sides": 4.5}, "sides: must be an integer"),
    ({"name": "box", "sides": True}, "sides: must be an integer"),
    ({"name": "box", "color": "green"}, 'color: must be one of "red", "blue"'),
    ({"name": "box", "tags": "a"}, "tags: must be an array"),
    ({"name": "box", "tags": ["a", 1]}, "tags.1: must be a string"),
    ({"name": "box", "points": [{"x": 1}]}, "points.0.y: required"),
    ({"name": "box", "points": [{"x": 1, "y": 2, "z": 3}]}, 'points.0: Unrecognized key: "z"'),
    ({"name": "box", "points": ["p"]}, "points.0: must be an object"),
    ({"name": "box", "origin": "here"}, "origin: must be an object or null"),
    ({"name": "box", "origin": {"x": "1", "y": 2}}, "origin.x: must be a number"),
]


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The two-pack plugin module, importable as ``lorenz_shapes_plugin``, and a workflow mounting it."""
    (tmp_path / "lorenz_shapes_plugin.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "lorenz-local")
    monkeypatch.chdir(tmp_path)
    workflow = "---\ntracker:\n  kind: local\ntools:\n  typed: {}\n  plain: {}\n---\nWork.\n"
    (tmp_path / "WORKFLOW.md").write_text(workflow, encoding="utf-8")
    import lorenz_shapes_plugin  # type: ignore[import-not-found]

    lorenz_shapes_plugin.WRITES.clear()
    yield lorenz_shapes_plugin
    import sys

    sys.modules.pop("lorenz_shapes_plugin", None)


@pytest.mark.parametrize(("arguments", "problem"), BAD)
async def test_typed_and_plain_packs_are_refused_in_the_same_words_over_mcp(
    plugin: Any, tmp_path: Path, arguments: dict[str, Any], problem: str
) -> None:
    """Served by the real host to an SDK client: the typed pack (which checks its own input) and a
    plain pack with the same inputSchema (checked by the host) give the same isError result."""
    from lorenz.testing import make_pack_host

    host = make_pack_host(plugin.TYPED, plugin.PLAIN, base_dir=tmp_path)
    errors = {}
    for pack in ("typed", "plain"):
        result = await host.call_mcp(f"{pack}_make_shape", arguments)
        assert result.is_error is True
        assert result.structured_content is not None
        error = result.structured_content["error"]
        assert error["message"] == f"invalid arguments for tool {pack}_make_shape: {problem}"
        assert problem in result.content[0].text
        errors[pack] = {**error, "message": error["message"].replace(f"{pack}_", "")}
    assert errors["typed"] == errors["plain"]
    assert errors["plain"]["reason"] == "invalid_arguments" and errors["plain"]["retryable"] is False
    assert plugin.WRITES == []  # neither tool ran


@pytest.mark.parametrize(("arguments", "problem"), BAD[:4])
def test_lorenz_call_words_it_the_same(
    plugin: Any, capsys: pytest.CaptureFixture[str], arguments: dict[str, Any], problem: str
) -> None:
    """``lorenz call`` refuses with the same message, for the typed and the plain pack."""
    for pack in ("typed", "plain"):
        assert main(["-p", "lorenz_shapes_plugin", "call", f"{pack}_make_shape", json.dumps(arguments)]) == 1
        out = json.loads(capsys.readouterr().out)
        assert out["success"] is False
        assert out["error"] == f"invalid arguments for tool {pack}_make_shape: {problem}"
    assert plugin.WRITES == []


def test_a_good_call_still_runs(plugin: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The control: valid arguments reach both tools."""
    for pack in ("typed", "plain"):
        assert main(["-p", "lorenz_shapes_plugin", "call", f"{pack}_make_shape", '{"name": "box"}']) == 0
        assert json.loads(capsys.readouterr().out)["result"] == {"name": "box"}
    assert plugin.WRITES == ["typed", "plain"]


# -- the host's wording of each JSON Schema keyword ------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "value", "problem"),
    [
        ({"type": "string"}, 1, "must be a string"),
        ({"type": ["object", "null"]}, 1, "must be an object or null"),
        ({"enum": ["a", "b"]}, "c", 'must be one of "a", "b"'),
        ({"type": "string", "enum": ["a"]}, 5, 'must be "a"'),
        ({"const": 3}, 4, "must be 3"),
        ({"type": "string", "minLength": 1}, "", "must not be empty"),
        ({"type": "string", "minLength": 3}, "ab", "must be at least 3 characters long"),
        ({"type": "string", "maxLength": 1}, "ab", "must be at most 1 character long"),
        ({"type": "integer", "minimum": 1}, 0, "must be at least 1"),
        ({"type": "number", "maximum": 2.5}, 3, "must be at most 2.5"),
        ({"exclusiveMinimum": 0}, 0, "must be greater than 0"),
        ({"exclusiveMaximum": 10}, 10, "must be less than 10"),
        ({"multipleOf": 5}, 7, "must be a multiple of 5"),
        ({"type": "array", "minItems": 1}, [], "must not be empty"),
        ({"type": "array", "minItems": 2}, [1], "must have at least 2 items"),
        ({"type": "array", "maxItems": 1}, [1, 2], "must have at most 1 item"),
        ({"type": "array", "minItems": 2, "maxItems": 2}, [1], "must have exactly 2 items"),
        ({"type": "array", "prefixItems": [{}], "items": False}, [1, 2], "must have at most 1 item"),
        ({"uniqueItems": True}, [1, 1], "must not contain duplicate items"),
        ({"type": "object", "minProperties": 1}, {}, "must not be empty"),
        ({"type": "string", "pattern": "^[A-Z]+-[0-9]+$"}, "eng-1", "must match the pattern ^[A-Z]+-[0-9]+$"),
        ({"not": {"type": "null"}}, None, "is not allowed"),
        ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, [], "must be a string or an integer"),
        ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, 1, "matches more than one of the allowed shapes"),
        ({"anyOf": [{"minimum": 5}, {"maximum": 1}]}, 3, "matches none of the allowed shapes"),
    ],
)
def test_each_keyword_has_a_short_message(schema: dict[str, Any], value: Any, problem: str) -> None:
    """Each common keyword is worded for a person, at the key path of the value."""
    root = {"type": "object", "properties": {"v": schema}}
    failure = validate_arguments("demo_tool", {"v": value}, compile_schema(root))
    assert failure is not None
    assert failure.error == f"invalid arguments for tool demo_tool: v: {problem}"
    assert failure.result["error"]["path"] == "$.v"


def test_the_root_has_no_path() -> None:
    """A problem with the arguments object itself is the bare message."""
    failure = validate_arguments("demo_tool", [], compile_schema({"type": "object"}))
    assert failure is not None and failure.error == "invalid arguments for tool demo_tool: must be an object"
    assert failure.result["error"]["problems"] == [{"path": "$", "message": "must be an object"}]


def test_an_anyof_branch_is_followed_to_the_deepest_problem() -> None:
    """For a value that fits one branch's type, the problem inside that branch is reported."""
    schema = {
        "type": "object",
        "properties": {
            "v": {
                "anyOf": [
                    {"type": "object", "properties": {"x": {"type": "number"}}, "additionalProperties": False},
                    {"type": "null"},
                ]
            }
        },
    }
    validator = compile_schema(schema)
    deep = validate_arguments("demo_tool", {"v": {"x": "1"}}, validator)
    assert deep is not None and deep.error == "invalid arguments for tool demo_tool: v.x: must be a number"
    extra = validate_arguments("demo_tool", {"v": {"y": 1}}, validator)
    assert extra is not None and extra.error == 'invalid arguments for tool demo_tool: v: Unrecognized key: "y"'


def test_every_problem_is_listed_for_machines() -> None:
    """``result.error`` has each problem's JSON path and message, the reason, and a recovery hint."""
    schema = {
        "type": "object",
        "additionalProperties": False,
        "properties": {"a b": {"type": "integer"}, "list": {"type": "array", "items": {"type": "string"}}},
        "required": ["need"],
    }
    failure = validate_arguments("demo_tool", {"a b": "x", "list": ["ok", 2], "zz": 1}, compile_schema(schema))
    assert failure is not None
    assert failure.error == (
        'invalid arguments for tool demo_tool: Unrecognized key: "zz"; a b: must be an integer; '
        "list.1: must be a string; need: required"
    )
    error = failure.result["error"]
    assert error["path"] == "$"
    assert error["problems"] == [
        {"path": "$", "message": 'Unrecognized key: "zz"'},
        {"path": '$["a b"]', "message": "must be an integer"},
        {"path": "$.list[1]", "message": "must be a string"},
        {"path": "$.need", "message": "required"},
    ]
    assert (error["reason"], error["retryable"]) == ("invalid_arguments", False)
    assert error["recovery"]


def test_the_same_problem_is_reported_once() -> None:
    """Two keywords reporting the same missing key (or one error per key) give one sentence each."""
    problems = [ArgumentProblem(("a",), "required"), ArgumentProblem(("a",), "required")]
    assert invalid_arguments("t", problems).error == "invalid arguments for tool t: a: required"


_SCHEMAS = [
    {
        "type": "object",
        "additionalProperties": False,
        "properties": {"issueId": {"type": "string"}},
        "required": ["issueId"],
    },
    {
        "type": "object",
        "properties": {
            "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
            "state": {"enum": ["Todo", "Done"]},
            "labels": {"type": "array", "items": {"type": "string", "minLength": 1}, "uniqueItems": True},
            "where": {"oneOf": [{"type": "object", "required": ["field"]}, {"type": "null"}]},
            "ratio": {"type": "number", "exclusiveMaximum": 1},
        },
        "$defs": {"id": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"}},
        "patternProperties": {"^x-": {"$ref": "#/$defs/id"}},
    },
]
_INSTANCES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 2000)
    | st.floats(allow_nan=False)
    | st.sampled_from(["Todo", "A-1", "", "x"]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(
            st.sampled_from(["issueId", "limit", "state", "labels", "where", "ratio", "x-a", "field"]), children
        )
    ),
    max_leaves=12,
)


@given(st.sampled_from(_SCHEMAS), _INSTANCES)
def test_the_native_check_and_the_reference_validator_agree(schema: dict[str, Any], instance: Any) -> None:
    """The native check only spares the reference validator's time: every verdict is the reference's."""
    from jsonschema.validators import Draft202012Validator

    validator = compile_schema(schema)
    assert validator is not None and validator.native is not None
    assert validator.is_valid(instance) is Draft202012Validator(schema).is_valid(instance)
    assert validator.native.is_valid(instance) is Draft202012Validator(schema).is_valid(instance)


def test_a_remote_ref_is_never_fetched() -> None:
    """Neither check goes to the network for a ``$ref``: a host must not fetch what a schema names."""
    import http.server
    import threading

    fetched: list[str] = []

    class Schemas(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            body = b'{"type": "string"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Schemas)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        validator = compile_schema({"$ref": f"http://127.0.0.1:{server.server_port}/string.json"})
        assert validator is not None
        with pytest.raises(Exception, match="string.json"):
            validator.is_valid(1)
    finally:
        server.shutdown()
    assert fetched == []
