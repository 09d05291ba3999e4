"""The typed tool builder: schema generation, strict structuring, error contracts, disabled tools."""

from __future__ import annotations

import enum
from typing import Any, Literal

import httpx
import pytest
from attrs import field, frozen
from jsonschema import Draft202012Validator

from lorenz import Settings, ToolContext, ToolProvider, tool_success
from lorenz.authoring import (
    CallContext,
    ErrorContract,
    FormattedResult,
    Pack,
    SchemaError,
    ToolFailure,
    describe,
    disabled,
    hints,
    input_schema,
    structure_strict,
    tool,
    unstructure,
)
from lorenz.authoring.structure import ArgumentError

pytestmark = pytest.mark.anyio


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@frozen(kw_only=True)
class Point:
    x: float = field(metadata=describe("Horizontal position."))
    y: float = field(metadata=describe("Vertical position."))


@frozen(kw_only=True)
class ShapeArgs:
    name: str = field(metadata=describe("Shape name.", examples=["box"]))
    sides: int = field(default=4, metadata=describe("Number of sides.", minimum=3))
    filled: bool = False
    color: Color = Color.RED
    kind: Literal["outline", "solid"] = "outline"
    tags: tuple[str, ...] = ()
    origin: Point | None = None
    points: list[Point] = field(factory=list)


@frozen(kw_only=True)
class Shape:
    name: str = field(metadata=describe("Shape name."))
    area: float = field(metadata=describe("Area in square units."))
    note: str | None = field(default=None, metadata=describe("Optional remark."))


CONTRACT = ErrorContract(
    reason="too_many_sides",
    when="The shape has more sides than supported.",
    recovery="Use a shape with at most twelve sides instead.",
    retryable=False,
)


@tool(
    name="geo_make_shape",
    description="Make a shape.",
    input=ShapeArgs,
    output=Shape,
    annotations=hints(read_only=True, idempotent=True),
    errors=[CONTRACT],
)
async def make_shape(ctx: CallContext, args: ShapeArgs) -> Shape:
    if args.sides > 12:
        raise ctx.fail("too_many_sides", f"{args.sides} sides is too many.")
    if args.name == "typo":
        raise ctx.fail("no_such_reason")
    if args.name == "boom":
        raise RuntimeError("kaboom")
    if args.name == "returned":
        return ctx.fail("too_many_sides")  # type: ignore[return-value]
    return Shape(name=args.name, area=float(args.sides))


def settings(options: dict[str, Any] | None = None) -> Settings:
    return Settings(tool_options={"geo": options} if options is not None else None)


async def call(pack: Pack, name: str, arguments: Any, opts: dict[str, Any] | None = None) -> Any:
    async with httpx.AsyncClient() as http:
        return await pack.execute_tool(name, arguments, ToolContext(settings=settings(opts), http=http))


def test_input_schema_from_attrs_fields() -> None:
    """The input schema is strict, carries descriptions, required and defaults, and nests."""
    schema = input_schema(ShapeArgs)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["name"]
    props = schema["properties"]
    assert props["name"] == {"type": "string", "description": "Shape name.", "examples": ["box"]}
    assert props["sides"] == {"type": "integer", "description": "Number of sides.", "minimum": 3, "default": 4}
    assert props["filled"] == {"type": "boolean", "default": False}
    assert props["color"] == {"type": "string", "enum": ["red", "blue"], "default": "red"}
    assert props["kind"]["enum"] == ["outline", "solid"]
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["origin"]["type"] == ["object", "null"]
    assert props["origin"]["additionalProperties"] is False
    assert props["points"]["items"]["required"] == ["x", "y"]


def test_widened_output_schema_admits_success_and_error() -> None:
    """The advertised output schema accepts the success object and the error envelope, nothing else."""
    schema = make_shape.output_schema
    assert schema is not None
    validator = Draft202012Validator(schema)
    assert validator.is_valid({"name": "box", "area": 4.0, "note": None})
    assert validator.is_valid({"error": {"message": "nope", "reason": "too_many_sides"}})
    assert not validator.is_valid({"name": "box"})
    assert not validator.is_valid({"name": "box", "area": "big", "note": None})
    assert not validator.is_valid({"error": {"reason": "no message"}})
    assert schema["properties"]["error"]["properties"]["reason"]["examples"] == ["too_many_sides"]


def test_output_class_may_not_declare_error() -> None:
    """A field named ``error`` in the output class is refused when the tool is defined."""

    @frozen
    class Bad:
        error: str

    with pytest.raises(SchemaError, match="reserved"):
        tool(name="x_y_z", description="d", input=ShapeArgs, output=Bad)(make_shape.handler)


def test_duplicate_reasons_are_refused() -> None:
    """Two contracts with the same reason fail at definition time."""
    with pytest.raises(ValueError, match="more than once"):
        tool(name="x_y_z", description="d", input=ShapeArgs, errors=[CONTRACT, CONTRACT])(make_shape.handler)


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"name": "box", "querry": 1}, 'Unrecognized key: "querry"'),
        ({"name": "box", "filled": "false"}, "filled: must be a boolean"),
        ({"name": "box", "sides": 5.9}, "sides: must be an integer"),
        ({"name": 5}, "name: must be a string"),
        ({"name": "box", "tags": "abc"}, "tags: must be an array"),
        ({"name": "box", "tags": ["a", 1]}, "tags.1: must be a string"),
        ({"name": "box", "origin": {"x": 1, "y": 2, "z": 3}}, 'origin: Unrecognized key: "z"'),
        ({"name": "box", "origin": "here"}, "origin: must be an object or null"),
        ({"name": "box", "points": [{"x": 1, "y": "2"}]}, "points.0.y: must be a number"),
        ({"name": "box", "color": "green"}, 'color: must be one of "red", "blue"'),
        ({"name": "box", "kind": "dotted"}, 'kind: must be one of "outline", "solid"'),
        ({}, "name: required"),
    ],
)
def test_strict_structuring_names_the_problem(arguments: dict[str, Any], problem: str) -> None:
    """Structuring never coerces and names the offending field path."""
    with pytest.raises(ArgumentError) as info:
        structure_strict(arguments, ShapeArgs)
    assert problem in info.value.problems


def test_structuring_accepts_json_values() -> None:
    """Valid JSON structures into the attrs class (ints widen to floats, arrays to tuples)."""
    value = structure_strict({"name": "box", "tags": ["a"], "origin": {"x": 1, "y": 2.5}, "color": "blue"}, ShapeArgs)
    assert value.origin == Point(x=1.0, y=2.5) and isinstance(value.origin.x, float)
    assert value.tags == ("a",) and value.color is Color.BLUE
    assert unstructure(value)["color"] == "blue"


async def test_success_is_structured_and_text() -> None:
    """A success result carries the unstructured output and its pretty JSON as text."""
    pack = Pack(name="geo", tools=[make_shape])
    result = await call(pack, "geo_make_shape", {"name": "box"})
    assert isinstance(result, FormattedResult)
    assert result.success and result.result == {"name": "box", "area": 4.0, "note": None}
    assert result.text is not None and '"area": 4.0' in result.text


async def test_unknown_key_is_a_failure_result() -> None:
    """An unknown key is rejected by name as a failure result, never an exception."""
    pack = Pack(name="geo", tools=[make_shape])
    result = await call(pack, "geo_make_shape", {"name": "box", "querry": 1})
    assert not result.success
    assert result.error == 'invalid arguments for tool geo_make_shape: Unrecognized key: "querry"'
    assert result.result["error"]["reason"] == "invalid_arguments"
    assert result.result["error"]["problems"] == [{"path": "$", "message": 'Unrecognized key: "querry"'}]


async def test_schema_keywords_are_enforced() -> None:
    """Constraints from field metadata (``minimum``) are checked after structuring."""
    pack = Pack(name="geo", tools=[make_shape])
    result = await call(pack, "geo_make_shape", {"name": "box", "sides": 2})
    assert not result.success and result.error == "invalid arguments for tool geo_make_shape: sides: must be at least 3"


async def test_fail_carries_the_contract() -> None:
    """``ctx.fail`` yields a failure with the contract's reason, retryable flag and recovery hint."""
    pack = Pack(name="geo", tools=[make_shape])
    result = await call(pack, "geo_make_shape", {"name": "box", "sides": 13})
    assert result.result == {
        "error": {
            "message": "13 sides is too many.",
            "reason": "too_many_sides",
            "retryable": False,
            "recovery": "Use a shape with at most twelve sides instead.",
        }
    }
    assert result.text.startswith("Error: 13 sides is too many.")
    assert "Recovery: Use a shape with at most twelve sides instead." in result.text


async def test_returned_fail_defaults_to_when() -> None:
    """A returned ``ctx.fail`` works like a raised one, with the contract's ``when`` as message."""
    pack = Pack(name="geo", tools=[make_shape])
    result = await call(pack, "geo_make_shape", {"name": "returned"})
    assert result.error == "The shape has more sides than supported."


async def test_undeclared_reason_is_reported() -> None:
    """An undeclared reason becomes an ``undeclared_reason`` failure listing the declared ones."""
    pack = Pack(name="geo", tools=[make_shape])
    result = await call(pack, "geo_make_shape", {"name": "typo"})
    assert result.result["error"]["reason"] == "undeclared_reason"
    assert result.result["error"]["declaredReasons"] == ["too_many_sides"]


async def test_handler_exception_is_a_failure() -> None:
    """An exception in a handler is a failure result naming the tool, not an exception."""
    pack = Pack(name="geo", tools=[make_shape])
    result = await call(pack, "geo_make_shape", {"name": "boom"})
    assert not result.success and result.error == "geo_make_shape failed: kaboom"
    assert result.result["error"]["reason"] == "internal_error"


async def test_unknown_tool_lists_supported() -> None:
    """An unknown name is the core's ``Unsupported tool`` failure."""
    pack = Pack(name="geo", tools=[make_shape])
    result = await call(pack, "geo_nope", {})
    assert result.error == 'Unsupported tool: "geo_nope".'
    assert result.result["error"]["supportedTools"] == ["geo_make_shape"]


def test_pack_is_a_tool_provider() -> None:
    """A typed pack satisfies the ``ToolProvider`` protocol and advertises its specs."""
    pack = Pack(name="geo", tools=[make_shape])
    assert isinstance(pack, ToolProvider)
    (spec,) = pack.tool_specs(Settings())
    assert spec.name == "geo_make_shape" and spec.title == "Geo Make Shape"
    assert spec.annotations == {"readOnlyHint": True, "idempotentHint": True}
    assert spec.output_schema == make_shape.output_schema


@frozen(kw_only=True)
class GeoOptions:
    writes: bool = False


@frozen
class NoArgs:
    pass


@tool(name="geo_erase_all", description="Erase everything.", input=NoArgs, annotations=hints(destructive=True))
async def erase_all(ctx: CallContext, args: NoArgs) -> dict[str, Any]:
    return {"erased": True, "writes": ctx.options.writes}


def gated_pack() -> Pack:
    return Pack(
        name="geo",
        options=GeoOptions,
        tools=[
            make_shape,
            disabled(erase_all, reason="Writes are off.", hint="tools.geo.writes: true", unless=lambda o: o.writes),
        ],
    )


async def test_disabled_tool_is_hidden_and_refused() -> None:
    """A disabled tool is left out of the specs, listed by ``disabled_tools`` and refused."""
    pack = gated_pack()
    assert [spec.name for spec in pack.tool_specs(Settings())] == ["geo_make_shape"]
    (off,) = pack.disabled_tools(Settings())
    assert off.to_dict()["reason"] == "Writes are off." and off.hint == "tools.geo.writes: true"
    result = await call(pack, "geo_erase_all", {})
    assert not result.success and result.result["error"]["reason"] == "tool_disabled"
    assert "tools.geo.writes: true" in result.error


async def test_disabled_tool_enabled_by_option() -> None:
    """``unless`` enables the tool when the pack's options say so; the handler sees them."""
    pack = gated_pack()
    assert [spec.name for spec in pack.tool_specs(settings({"writes": True}))] == ["geo_make_shape", "geo_erase_all"]
    assert pack.disabled_tools(settings({"writes": True})) == []
    result = await call(pack, "geo_erase_all", {}, {"writes": True})
    assert result.result == {"erased": True, "writes": True}


def test_options_are_validated_strictly() -> None:
    """Pack options reject unknown keys and wrong types, naming ``tools.<pack>.<key>``."""
    pack = gated_pack()
    with pytest.raises(ValueError, match=r'^tools\.geo: Unrecognized key: "wrties" \(did you mean "writes"\?\)$'):
        pack.validate_options({"wrties": True})
    with pytest.raises(ValueError, match=r"^tools\.geo\.writes: must be a boolean$"):
        pack.validate_options({"writes": "yes"})
    with pytest.raises(ValueError, match=r'^tools\.geo is not supported by the "geo" pack$'):
        Pack(name="geo", tools=[make_shape]).validate_options({"x": 1})


def test_handler_can_return_a_plain_result() -> None:
    """A handler may still return a ``ToolResult`` directly (escape hatch)."""
    assert tool_success({"a": 1}).success


def test_tool_failure_is_an_exception() -> None:
    """``ToolFailure`` can be raised and turned into a result."""
    failure = ToolFailure("m", reason="r", retryable=True, recovery="Do the other thing now please.", details={})
    assert failure.to_result().result["error"]["retryable"] is True
