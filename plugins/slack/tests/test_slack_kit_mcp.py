"""The slack tools on the authoring kit, through the official MCP SDK client over real HTTP: every
success matches its outputSchema and keeps its old text; Slack's failures arrive with a reason,
``retryable`` and a recovery."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import jsonschema
import mcp
import pytest
from mcp.types import CallToolResult, TextContent
from slack_fake import BOT, FakeSlack
from test_slack_e2e import ENV, ROOT, workflow

from lorenz.host import serve_in_thread

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
ISSUE = f"C1:{ROOT}"


@pytest.fixture
async def client(tmp_path: Path, fake: FakeSlack) -> AsyncIterator[mcp.Client]:
    fake.add_root("C1", ROOT, "<@U_BOT> the deploy is flaky #ci", user="U_ALICE")
    fake.add_user("U_ALICE", name="alice", real_name="Alice A", is_bot=False)
    with serve_in_thread(workflow(tmp_path, fake.url), cwd=tmp_path, env=ENV) as server:
        async with mcp.Client(server.url) as session:
            yield session


def text_of(result: CallToolResult) -> Any:
    (content,) = result.content
    assert isinstance(content, TextContent)
    return json.loads(content.text)


async def test_every_tool_matches_its_output_schema_and_keeps_its_text(client: mcp.Client) -> None:
    schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
    calls = [
        ("slack_update_status", {"issueId": ISSUE, "status": "in progress"}),
        ("slack_comment", {"issueId": ISSUE, "body": "on it"}),
        ("slack_workpad", {"issueId": ISSUE, "plan": "- [ ] fix"}),
        ("slack_read_thread", {"issueId": ISSUE}),
        ("slack_query", {"select": ["issueId", "state"]}),
        ("slack_user_info", {"userId": "U_ALICE"}),
        ("slack_channel_context", {"issueId": ISSUE, "before": 2, "after": 1}),
    ]
    assert sorted(name for name, _ in calls) == sorted(schemas)
    for name, args in calls:
        result = await client.call_tool(name, args)
        assert result.is_error is False, (name, result.content)
        structured = result.structured_content
        assert structured is not None and schemas[name] is not None
        jsonschema.validate(structured, schemas[name])
        # The text is the old answer: the structured output less null fields and enrichment.
        old = {k: v for k, v in structured.items() if v is not None and k not in ("echo", "notice")}
        assert text_of(result) == old, name
    query = await client.call_tool("slack_query", {"where": {"field": "state", "op": "eq", "value": "Done"}})
    assert query.structured_content is not None
    assert query.structured_content["rows"] == [] and query.structured_content["total"] == 0
    assert "loosen the filter" in query.structured_content["notice"]
    assert query.structured_content["echo"]["channels"] == ["C1"]
    assert text_of(query) == {"rows": [], "total": 0}


async def error_of(client: mcp.Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, args)
    assert result.is_error is True and result.structured_content is not None
    error: dict[str, Any] = result.structured_content["error"]
    assert text_of(result) == {"error": {"message": error["message"]}}  # the text callers always read
    return error


async def test_not_in_channel_says_to_invite_the_bot(client: mcp.Client, fake: FakeSlack) -> None:
    fake.fail("chat.postMessage", 200, {"ok": False, "error": "not_in_channel"})
    error = await error_of(client, "slack_comment", {"issueId": ISSUE, "body": "hi"})
    assert error["message"] == "slack chat.postMessage failed: not_in_channel"
    assert (error["reason"], error["retryable"], error["slackError"]) == ("not_in_channel", False, "not_in_channel")
    assert "invite the bot" in error["recovery"]


async def test_ratelimited_carries_retry_after(client: mcp.Client, fake: FakeSlack) -> None:
    for after in ("0", "0", "0", "0", "7"):  # the pack's own retries first, then the failure
        fake.fail("chat.postMessage", 429, "", headers={"Retry-After": after})
    error = await error_of(client, "slack_comment", {"issueId": ISSUE, "body": "hi"})
    assert error["message"] == "slack chat.postMessage failed: status 429"
    assert (error["reason"], error["retryable"], error["retryAfter"]) == ("rate_limited", True, 7)
    assert error["recovery"] == "Wait 7 seconds, then call the tool again."


async def test_invalid_auth_names_the_token_setting(client: mcp.Client, fake: FakeSlack) -> None:
    fake.fail("chat.postMessage", 200, {"ok": False, "error": "invalid_auth"})
    error = await error_of(client, "slack_comment", {"issueId": ISSUE, "body": "hi"})
    assert (error["reason"], error["retryable"], error["code"]) == ("unauthorized", False, -32006)
    assert "tracker.api_key (or SLACK_BOT_TOKEN)" in error["recovery"]


async def test_trust_boundary_and_channel_not_found(client: mcp.Client, fake: FakeSlack) -> None:
    error = await error_of(client, "slack_read_thread", {"issueId": "C1:1.1"})
    assert (error["message"], error["reason"]) == ("no tracked issue at C1:1.1", "issue_not_found")
    assert "slack_query" in error["recovery"]
    error = await error_of(client, "slack_read_thread", {"issueId": "C9:1.1"})
    assert error["reason"] == "channel_not_configured"
    error = await error_of(client, "slack_update_status", {"issueId": ISSUE, "status": "Shipped"})
    assert error["reason"] == "unknown_status" and error["message"].startswith("unknown status 'Shipped'")
    fake.fail("conversations.history", 200, {"ok": False, "error": "channel_not_found"})
    fake.fail("conversations.replies", 200, {"ok": False, "error": "channel_not_found"})
    error = await error_of(client, "slack_channel_context", {"issueId": ISSUE})
    assert (error["reason"], error["slackError"]) == ("channel_not_found", "channel_not_found")
    assert BOT not in json.dumps(error)
