"""The ``template_api`` pack, tested with the lorenz.testing fixtures: the contract, and every tool
against a mock of the API (``httpx.MockTransport``) answering 404, then the document's example where
it has one (examples.json, which ``--update`` rewrites). Yours to extend: the generator never
rewrites this file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from lorenz.testing import HostFactory, assert_pack_contract

from lorenz_template_api import PACK
from lorenz_template_api.generated import CREDENTIALS

pytestmark = pytest.mark.anyio
TOOLS = sorted(tool.name for tool in PACK.tools)
#: Each tool's documented answer, from the document's examples: ``{"status": 200, "body": ...}``.
EXAMPLES: dict[str, dict[str, Any]] = json.loads(Path(__file__).with_name("examples.json").read_text("utf-8"))
OPTIONS = {"template_api": {"base_url": "https://api.example.test/base", **dict.fromkeys(CREDENTIALS, "test-key")}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_pack_keeps_the_contract() -> None:
    """Names, descriptions, schemas and error contracts pass the lint."""
    assert_pack_contract(PACK)


def minimal(schema: Any) -> Any:
    """The smallest value ``schema`` accepts, as far as one can be made without knowing the API."""
    if not isinstance(schema, dict):
        return None
    for key in ("examples", "enum"):
        if schema.get(key):
            return schema[key][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return minimal(next((s for s in schema[key] if s.get("type") != "null"), schema[key][0]))
    kinds = schema.get("type")
    kind = next((k for k in kinds if k != "null"), None) if isinstance(kinds, list) else kinds
    if kind == "object":
        properties = schema.get("properties") or {}
        return {key: minimal(properties.get(key)) for key in schema.get("required") or ()}
    if kind == "array":
        return [minimal(schema.get("items"))] * int(schema.get("minItems", 0))
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0) + 1)
        return low if kind == "number" else int(low)
    if kind == "boolean":
        return True
    return "x" * max(1, int(schema.get("minLength", 1)))


def contained(answer: Any, example: Any) -> bool:
    """Whether ``answer`` says only what ``example`` says (what the document does not declare left out)."""
    if isinstance(answer, dict) and isinstance(example, dict):
        return all(
            value is None or (key in example and contained(value, example[key])) for key, value in answer.items()
        )
    if isinstance(answer, list) and isinstance(example, list):
        return len(answer) == len(example) and all(map(contained, answer, example))
    return bool(answer == example)


@pytest.mark.parametrize("name", TOOLS)
async def test_each_tool_calls_the_api(lorenz_host: HostFactory, name: str) -> None:
    """With the smallest arguments its schema accepts, the tool calls the configured base URL; a 404
    answer is the not_found failure with a recovery, and the document's example (where it has one)
    a success whose structured content holds what the example says."""
    seen: list[httpx.Request] = []
    answer = httpx.Response(404)

    def api(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer

    host = lorenz_host(PACK, transport=httpx.MockTransport(api), options=OPTIONS)
    schema = next(spec.input_schema for spec in host.tool_specs() if spec.name == name)
    outcome = await host.call_tool(name, minimal(schema))
    assert seen
    assert all(str(request.url).startswith("https://api.example.test/base/") for request in seen)
    error = (outcome.mcp.structured_content or {})["error"]
    assert error["reason"] == "not_found"
    assert error["recovery"]
    if name in EXAMPLES:
        answer = httpx.Response(EXAMPLES[name]["status"], json=EXAMPLES[name]["body"])
        outcome = await host.call_tool(name, minimal(schema))
        assert outcome.mcp.is_error is not True, outcome.mcp
        content, body = outcome.mcp.structured_content or {}, EXAMPLES[name]["body"]
        wrapped = len(content) == 1 and contained(next(iter(content.values())), body)  # {"items": [...]}
        assert contained(content, body) or wrapped, (content, body)
