"""``linear_graphql`` on the kit, as the official MCP SDK client sees it against the loopback fake
Linear: annotations and an ``outputSchema`` in ``tools/list``, ``structuredContent`` that validates
against it, and declared failures with their reason, ``retryable`` and recovery."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from jsonschema import Draft202012Validator
from linear_fake import FakeLinear

from lorenz.testing import PackHost, make_pack_host
from lorenz_linear import LinearToolPack

pytestmark = pytest.mark.anyio

VIEWER = "query Viewer { viewer { id } }"


async def _no_sleep(delay: float) -> None:
    return None


def _host(tmp_path: Path, fake: FakeLinear, *, key: str | None = "linear-token") -> PackHost:
    options = {"endpoint": fake.url, **({"apiKey": key} if key else {})}
    fake.api_key = "linear-token"
    # A real transport: the fake listens on loopback only.
    return make_pack_host(
        LinearToolPack(sleep=_no_sleep),
        options={"linear": options},
        base_dir=tmp_path,
        transport=httpx.AsyncHTTPTransport(),
    )


async def test_list_shows_annotations_and_an_output_schema(tmp_path: Path, fake: FakeLinear) -> None:
    async with _host(tmp_path, fake).mcp_client() as client:
        [listed] = (await client.list_tools()).tools
    assert listed.name == "linear_graphql"
    assert listed.annotations is not None and listed.annotations.open_world_hint is True
    assert listed.annotations.read_only_hint is False and listed.annotations.destructive_hint is True
    assert listed.output_schema is not None and listed.output_schema["type"] == "object"


async def test_success_is_structured_and_matches_the_output_schema(tmp_path: Path, fake: FakeLinear) -> None:
    host = _host(tmp_path, fake)
    async with host.mcp_client() as client:
        [listed] = (await client.list_tools()).tools
        result = await client.call_tool("linear_graphql", {"query": VIEWER})
    assert result.is_error is False
    assert result.structured_content == {
        "data": {"viewer": {"id": "viewer-1", "name": "Test", "email": "test@example.com"}}
    }
    assert json.loads(result.content[0].text) == result.structured_content  # the text is as before
    assert listed.output_schema is not None
    Draft202012Validator(listed.output_schema).validate(result.structured_content)


async def test_a_missing_key_is_a_declared_unauthorized_failure(tmp_path: Path, fake: FakeLinear) -> None:
    result = await _host(tmp_path, fake, key=None).call_mcp("linear_graphql", {"query": VIEWER})
    assert result.is_error and result.structured_content is not None
    error = result.structured_content["error"]
    assert error["message"].startswith("Lorenz is missing Linear auth.")
    assert (error["reason"], error["retryable"]) == ("unauthorized", False)
    assert "tools.linear.api_key" in error["recovery"]
    assert fake.requests == []


async def test_a_persistent_429_is_rate_limited_and_retryable(tmp_path: Path, fake: FakeLinear) -> None:
    for _ in range(5):
        fake.script({"message": "rate limited"}, status=429, headers={"Retry-After": "7"})
    result = await _host(tmp_path, fake).call_mcp("linear_graphql", {"query": VIEWER})
    assert result.is_error and result.structured_content is not None
    error = result.structured_content["error"]
    assert error["message"] == "Linear GraphQL request failed with HTTP 429."
    assert (error["reason"], error["retryable"], error["retryAfter"]) == ("rate_limited", True, 7.0)
    assert error["recovery"].startswith("Wait retryAfter seconds")


async def test_a_missing_entity_is_not_found_beside_linears_errors(tmp_path: Path, fake: FakeLinear) -> None:
    errors = [{"message": "Entity not found: Issue", "extensions": {"code": "INVALID_INPUT"}}]
    fake.script({"data": None, "errors": errors})
    result = await _host(tmp_path, fake).call_mcp("linear_graphql", {"query": VIEWER})
    assert result.is_error and result.structured_content is not None
    assert result.structured_content["errors"] == errors  # Linear's body as it was
    error = result.structured_content["error"]
    assert (error["reason"], error["message"]) == ("not_found", "Entity not found: Issue")
    assert "existing id" in error["recovery"]


async def test_a_graphql_error_that_is_not_a_missing_entity_stays_as_linear_sent_it(
    tmp_path: Path, fake: FakeLinear
) -> None:
    fake.script({"errors": [{"message": "bad query"}]})
    result = await _host(tmp_path, fake).call_mcp("linear_graphql", {"query": VIEWER})
    assert result.is_error and result.structured_content == {"errors": [{"message": "bad query"}]}
