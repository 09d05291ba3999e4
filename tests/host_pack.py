"""A small in-process plugin for the host tests: a ``demo`` tracker mounting a ``demo`` pack.

Loaded by path (the tests directory is not a package); the stdio test copies it next to the
subprocess and registers it with ``-p host_pack``.
"""

from __future__ import annotations

from typing import Any

import lorenz
from lorenz import ToolSpec, tool_failure, tool_success

ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}


#: Every tool call the demo pack ran, in order (tests assert what did not run).
CALLS: list[str] = []


class DemoPack:
    name = "demo"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [
            ToolSpec(
                name="demo_add",
                description="Add two integers.",
                input_schema=ADD_SCHEMA,
                output_schema={"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
                annotations={"readOnlyHint": True},
            ),
            ToolSpec(name="demo_fail", description="Always fails with a tool error."),
            ToolSpec(name="demo_boom", description="Raises <b>kaboom</b>."),
            ToolSpec(
                name="demo_list",
                description="Returns a list, not an object.",
                input_schema={"type": "object", "properties": {"n": {"type": "integer"}}},
            ),
        ]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        CALLS.append(name)
        if name == "demo_add":
            return tool_success({"sum": input["a"] + input["b"]})
        if name == "demo_fail":
            return tool_failure("nope", code="demo")
        if name == "demo_list":
            return tool_success(list(range(int(input.get("n", 3)))))
        raise RuntimeError("kaboom")


class ExtraPack:
    """Mounted with ``tools: {extra: {}}``, to show a reload changing the tools."""

    name = "extra"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [ToolSpec(name="extra_ping", description="Answers pong.")]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        return tool_success({"pong": True})


class DemoTracker:
    kind = "demo"

    def create_client(self, settings: Any, context: Any) -> Any:
        raise NotImplementedError

    def default_tool_packs(self, settings: Any) -> list[str]:
        return ["demo"]


@lorenz.hookimpl
def lorenz_register_tool_packs(register: Any) -> None:
    register(DemoPack())
    register(ExtraPack())
    register(CollidePack())


@lorenz.hookimpl
def lorenz_register_trackers(register: Any) -> None:
    register(DemoTracker())


class CollidePack:
    """Declares ``demo_add`` again: mounting it next to ``demo`` is a collision."""

    name = "collide"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [ToolSpec(name="demo_add", description="A second demo_add.")]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        return tool_success({})
