"""End to end over real sockets: ``lorenz serve`` → ``jira_*`` tool → loopback fake Jira (REST and MCP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from jira_fake_mcp import FakeJiraMcp
from jira_fake_rest import API_TOKEN, EMAIL, FakeJira
from mcp import Client

from lorenz.host import serve_in_thread
from lorenz.testing import open_workspace

pytestmark = pytest.mark.anyio

REST_WORKFLOW = """---
tracker:
  kind: jira
  base_url: $SITE
  project_keys: [ENG]
  active_states: [To Do]
tools:
  jira: {}
---
Work on {{ issue.identifier }}.
"""

MCP_WORKFLOW = """---
tracker:
  kind: jira-mcp
  project_keys: [ENG]
  mcp:
    url: $JIRA_MCP_URL
    token: $JIRA_MCP_TOKEN
    tools:
      search: jira_search
---
Work on it.
"""


def payload(result: Any) -> Any:
    return json.loads(result.content[0].text)


async def test_serve_reads_queries_and_comments_over_rest(jira: FakeJira, tmp_path: Path) -> None:
    """An agent's MCP calls reach the fake Jira through the host's HTTP client, with env credentials."""
    jira.add_issue("ENG-1", assignee="account-current")
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_text(REST_WORKFLOW, encoding="utf-8")
    env = {"SITE": jira.base_url, "JIRA_EMAIL": EMAIL, "JIRA_API_KEY": API_TOKEN}
    with serve_in_thread(workflow, cwd=tmp_path, env=env) as server:
        async with Client(server.url) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            read = await client.call_tool("jira_read_issue", {"issueId": "ENG-1"})
            query = await client.call_tool("jira_query", {"select": ["identifier", "state"]})
            comment = await client.call_tool("jira_comment", {"issueId": "ENG-1", "body": "Started **now**"})
            missing = await client.call_tool("jira_read_issue", {"issueId": "ENG-404"})
    assert [n for n in names if n.startswith("jira_")] == [
        "jira_read_issue",
        "jira_query",
        "jira_update_status",
        "jira_list_comments",
        "jira_comment",
        "jira_update_comment",
        "jira_create_issue",
    ]
    assert payload(read)["issue"]["identifier"] == "ENG-1"
    assert payload(query) == {"rows": [{"identifier": "ENG-1", "state": "To Do"}], "total": 1}
    assert payload(comment)["comment"]["body"] == "Started now"
    assert jira.comments["ENG-1"][0]["body"]["content"][0]["content"][1]["marks"] == [{"type": "strong"}]
    assert missing.is_error is True
    assert payload(missing)["error"]["message"].startswith("jira api status 404: ")


@pytest.mark.parametrize(
    ("name", "args", "key"),
    [
        ("jira_comment", {"issueId": "ENG-1", "body": "Done", "visibility": "internal"}, "visibility"),
        ("jira_create_issue", {"title": "New", "staus": "In Progress"}, "staus"),
        ("jira_update_status", {"issueId": "ENG-1", "status": "Done", "resolution": "Fixed"}, "resolution"),
    ],
)
async def test_a_misspelled_key_reaches_no_jira(
    jira: FakeJira, tmp_path: Path, name: str, args: dict[str, Any], key: str
) -> None:
    """Issue 12: an unknown key on a write tool is an isError result naming it, and the fake Jira
    receives no request at all (nothing is written)."""
    jira.add_issue("ENG-1")
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_text(REST_WORKFLOW, encoding="utf-8")
    env = {"SITE": jira.base_url, "JIRA_EMAIL": EMAIL, "JIRA_API_KEY": API_TOKEN}
    with serve_in_thread(workflow, cwd=tmp_path, env=env) as server:
        async with Client(server.url) as client:
            refused = await client.call_tool(name, args)
    assert refused.is_error is True
    assert f'Unrecognized key: "{key}"' in refused.content[0].text
    assert refused.structured_content is not None
    assert refused.structured_content["error"]["message"].startswith(
        f'invalid arguments for tool {name}: Unrecognized key: "{key}"'
    )
    assert jira.requests == []
    assert jira.comments.get("ENG-1", []) == []


async def test_serve_over_jira_mcp(jira_mcp: FakeJiraMcp, tmp_path: Path) -> None:
    """With ``jira-mcp`` the host's tool call becomes an MCP session with the remote server."""
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_text(MCP_WORKFLOW, encoding="utf-8")
    env = {"JIRA_MCP_URL": jira_mcp.url, "JIRA_MCP_TOKEN": "mcp-token"}
    with serve_in_thread(workflow, cwd=tmp_path, env=env) as server:
        async with Client(server.url) as client:
            moved = await client.call_tool("jira_update_status", {"issueId": "ENG-1", "status": "In Progress"})
            query = await client.call_tool("jira_query", {"states": ["In Progress"], "select": ["identifier"]})
    assert payload(moved)["issue"]["state"] == "In Progress"
    assert payload(query) == {"rows": [{"identifier": "ENG-1"}], "total": 1}
    assert [name for name, _ in jira_mcp.calls] == ["jira_transition_issue", "jira_search"]
    assert jira_mcp.calls[1][1]["jql"] == 'project in ("ENG") AND status in ("In Progress")'


async def test_runtime_client_from_the_workspace(jira: FakeJira, tmp_path: Path) -> None:
    """The dispatch tracker's runtime client fetches candidates and ids, with or without a host client."""
    jira.add_issue("ENG-1", assignee="account-current")
    jira.add_issue("ENG-2", assignee="account-current")
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_text(REST_WORKFLOW, encoding="utf-8")
    env = {"SITE": jira.base_url, "JIRA_EMAIL": EMAIL, "JIRA_API_KEY": API_TOKEN}
    workspace = open_workspace(workflow, cwd=tmp_path, env=env)
    own = workspace.tracker_client(env=env)
    assert [i.identifier for i in await own.fetch_candidate_issues()] == ["ENG-1", "ENG-2"]
    async with httpx.AsyncClient() as http:
        shared = workspace.tracker_client(http=http, env=env)
        assert [i.identifier for i in await shared.fetch_issues_by_ids(["ENG-2", "ENG-1"])] == ["ENG-2", "ENG-1"]
    assert workspace.discovery.trackers.require("jira").project_url(workspace.settings) == (  # type: ignore[attr-defined]
        f"{jira.base_url}/jira/software/c/projects/ENG/issues"
    )
    assert workspace.project_url == f"{jira.base_url}/jira/software/c/projects/ENG/issues"  # what the host shows
