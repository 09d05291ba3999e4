"""End to end: ``lorenz serve`` (the real host under uvicorn on 127.0.0.1) with ``tracker.kind: slack``
pointed at the fake Slack, the pack called through the official MCP SDK client, the tracker polled."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import mcp
import pytest
from mcp.types import TextContent
from slack_fake import BOT, TOKEN, FakeSlack

from lorenz.host import serve_in_thread
from lorenz.testing import open_workspace

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

ENV = {"LORENZ_LOAD_PLUGINS": "lorenz-slack", "SLACK_BOT_TOKEN": TOKEN, "SLACK_BOT_USER_ID": BOT}
ROOT = "1700000000.000100"


def workflow(directory: Path, endpoint: str) -> Path:
    path = directory / "WORKFLOW.md"
    path.write_text(
        "---\n"
        "tracker:\n"
        "  kind: slack\n"
        f"  endpoint: {json.dumps(endpoint)}\n"
        "  channels: [C1]\n"
        "  active_states: [Todo, In Progress]\n"
        "  terminal_states: [Done, Cancelled]\n"
        "---\n"
        "Work the Slack request.\n",
        encoding="utf-8",
    )
    return path


async def call(client: mcp.Client, name: str, args: Any) -> tuple[bool, Any]:
    result = await client.call_tool(name, args)
    (content,) = result.content
    assert isinstance(content, TextContent)
    return bool(result.is_error), json.loads(content.text)


async def test_mention_to_candidate_to_status_over_mcp(tmp_path: Path, fake: FakeSlack) -> None:
    """A human mention is a candidate; slack_update_status over MCP moves it; the next poll sees the new state."""
    fake.add_root("C1", ROOT, "<@U_BOT> the deploy is flaky #ci", user="U_ALICE")
    fake.add_root("C1", "1700000000.000200", "lunch anyone?", user="U_BOB")
    path = workflow(tmp_path, fake.url)
    workspace = open_workspace(path, cwd=tmp_path, env=ENV)
    assert workspace.pack_names() == ["slack"]
    async with httpx.AsyncClient() as http:
        tracker = workspace.tracker_client(http=http, env=ENV)
        (issue,) = await tracker.fetch_candidate_issues()
        assert (issue.id, issue.title, issue.state, issue.labels) == (
            f"C1:{ROOT}",
            "the deploy is flaky #ci",
            "Todo",
            ("ci",),
        )

        with serve_in_thread(path, cwd=tmp_path, env=ENV) as server:
            async with mcp.Client(server.url) as client:
                listed = await client.list_tools()
                assert [tool.name for tool in listed.tools][:2] == ["slack_update_status", "slack_comment"]
                assert len(listed.tools) == 7
                assert await call(client, "slack_update_status", {"issueId": issue.id, "status": "in progress"}) == (
                    False,
                    {"ok": True, "status": "In Progress"},
                )
                assert await call(client, "slack_comment", {"issueId": issue.id, "body": "on it <!here>"}) == (
                    False,
                    {"ok": True},
                )
                error, payload = await call(
                    client, "slack_update_status", {"issueId": "C1:1700000000.000200", "status": "Done"}
                )
                assert (error, payload) == (True, {"error": {"message": "message is not a tracked bot-mention issue"}})

        (moved,) = await tracker.fetch_issues_by_ids([issue.id])
        assert moved.state == "In Progress"
        assert [i.state for i in await tracker.fetch_candidate_issues()] == ["In Progress"]
        await tracker.aclose()  # type: ignore[attr-defined]
    texts = [reply["text"] for reply in fake.thread("C1", ROOT)]
    assert texts == ["Lorenz tracking record.", "status: In Progress", "on it @here"]
    assert fake.bot_reactions("C1", ROOT) == ["robot_face", "eyes"]
    assert {r["headers"]["authorization"] for r in fake.requests} == {f"Bearer {TOKEN}"}


@pytest.mark.parametrize(
    ("name", "args", "key"),
    [
        ("slack_comment", {"issueId": f"C1:{ROOT}", "body": "on it", "broadcast": True}, "broadcast"),
        ("slack_update_status", {"issueId": f"C1:{ROOT}", "staus": "Done"}, "staus"),
        ("slack_workpad", {"issueId": f"C1:{ROOT}", "plan": "- [ ] a", "notes": "b"}, "notes"),
    ],
)
async def test_a_misspelled_key_reaches_no_slack(
    tmp_path: Path, fake: FakeSlack, name: str, args: dict[str, Any], key: str
) -> None:
    """Issue 12: an unknown key on a write tool is an isError result naming it, and the fake Slack
    receives no request at all (nothing is posted, edited or reacted to)."""
    fake.add_root("C1", ROOT, "<@U_BOT> the deploy is flaky", user="U_ALICE")
    with serve_in_thread(workflow(tmp_path, fake.url), cwd=tmp_path, env=ENV) as server:
        async with mcp.Client(server.url) as client:
            refused = await client.call_tool(name, args)
    assert refused.is_error is True
    (content,) = refused.content
    assert isinstance(content, TextContent) and f'Unrecognized key: "{key}"' in content.text
    assert refused.structured_content is not None
    assert refused.structured_content["error"]["message"].startswith(f"invalid arguments for tool {name}: ")
    assert fake.requests == []
    assert fake.thread("C1", ROOT) == []
