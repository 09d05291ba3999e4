"""lorenz-jira: what a Jira tool call costs on top of Jira, measured against the loopback fakes.

Usage: .venv/bin/python bench/jira_client.py

Both fakes (plugins/jira/tests/fakes) run in threads of this process, so the HTTP figures include their
Starlette/uvicorn (and, for jira-mcp, the MCP SDK server) work; the real Jira API is 100-500 ms away.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins" / "jira" / "tests" / "fakes"))

from jira_fake_mcp import FakeJiraMcp
from jira_fake_rest import FakeJira
from jira_fake_settings import mcp_settings, rest_settings

from lorenz.contracts import ToolContext
from lorenz.testing import loopback_server
from lorenz_jira.adf import adf_to_text, markdown_to_adf
from lorenz_jira.mcp_client import JiraMcpClient
from lorenz_jira.normalize import normalize_jira_issue
from lorenz_jira.options import jira_options
from lorenz_jira.rest import JiraRestClient
from lorenz_jira.tools import JiraToolPack

MARKDOWN = "\n".join(
    ["# Workpad", "", "| Step | Status |", "| --- | --- |"]
    + [f"| `step_{n}` | done **{n}** |" for n in range(20)]
    + ["", "- [ ] parent", "  - [x] child"] * 20
    + ["Some *prose* with a [link](https://x.test) and `code`."] * 100
)


def per_call(samples: list[float]) -> str:
    return (
        f"median {statistics.median(samples) * 1e3:.2f} ms, p90 {statistics.quantiles(samples, n=10)[-1] * 1e3:.2f} ms"
    )


def timed(fn: Callable[[], object], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


async def atimed(fn: Callable[[], Awaitable[object]], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        await fn()
        out.append(time.perf_counter() - start)
    return out


async def main() -> None:
    rest_fake = FakeJira()
    mcp_fake = FakeJiraMcp(json_response=True)
    with loopback_server(rest_fake.app) as rest_server, loopback_server(mcp_fake.app) as mcp_server:
        rest_fake.base_url = rest_server.base_url
        mcp_fake.url = f"{mcp_server.base_url}/mcp"
        for n in range(1, 501):
            rest_fake.add_issue(f"ENG-{n}", assignee="account-current")
        issue = rest_fake.issues["ENG-1"]
        lines = len(MARKDOWN.splitlines())
        print(f"markdown_to_adf ({lines} lines): {per_call(timed(lambda: markdown_to_adf(MARKDOWN), 200))}")
        doc = markdown_to_adf(MARKDOWN)
        print(f"adf_to_text (same document): {per_call(timed(lambda: adf_to_text(doc), 200))}")
        print(f"normalize_jira_issue: {per_call(timed(lambda: normalize_jira_issue(issue, None, 'https://x'), 2000))}")
        async with httpx.AsyncClient() as http:
            rest = JiraRestClient(jira_options(rest_settings(rest_fake.base_url)), http)
            await rest.read_issue("ENG-1")
            print(f"REST read_issue (keep-alive): {per_call(await atimed(lambda: rest.read_issue('ENG-1'), 300))}")
            search = await atimed(rest.fetch_candidate_issues, 10)
            print(f"REST candidates, 500 issues in 10 pages of 50: {per_call(search)}")
            pack = JiraToolPack()
            context = ToolContext(settings=rest_settings(rest_fake.base_url), http=http)
            args = {
                "query": 'project in ("ENG")',
                "where": {"field": "title", "op": "contains", "value": "login"},
                "limit": 5,
            }
            query = await atimed(lambda: pack.execute_tool("jira_query", args, context), 10)
            print(f"jira_query tool over 500 issues (search + DSL + select): {per_call(query)}")
            mcp = JiraMcpClient(jira_options(mcp_settings(mcp_fake.url)), http)
            await mcp.read_issue("ENG-1")
            mcp_fake.http.clear()
            reads = await atimed(lambda: mcp.read_issue("ENG-1"), 100)
            print(
                f"jira-mcp read_issue (fresh session per operation): {per_call(reads)}; "
                f"{len(mcp_fake.http) / 100:.0f} HTTP requests per operation"
            )


if __name__ == "__main__":
    anyio.run(main)
