"""The tool pack the MCP latency benchmark serves: one ``add`` tool.

Registered with ``lorenz -p mcp_bench_pack serve`` (``bench/`` on ``PYTHONPATH``).
"""

from __future__ import annotations

from typing import Any

import lorenz
from lorenz import ToolSpec, tool_success

ADD = ToolSpec(
    name="add",
    description="Add two integers.",
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
        "additionalProperties": False,
    },
    output_schema={"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]},
    annotations={"readOnlyHint": True, "idempotentHint": True},
)


class BenchPack:
    name = "bench"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [ADD]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        return tool_success({"sum": input["a"] + input["b"]})


class BenchTracker:
    kind = "bench"

    def create_client(self, settings: Any, context: Any) -> Any:
        raise NotImplementedError

    def default_tool_packs(self, settings: Any) -> list[str]:
        return ["bench"]


@lorenz.hookimpl
def lorenz_register_tool_packs(register: Any) -> None:
    register(BenchPack())


@lorenz.hookimpl
def lorenz_register_trackers(register: Any) -> None:
    register(BenchTracker())
