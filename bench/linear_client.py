"""lorenz-linear: what a poll and a ``linear_graphql`` call cost on top of Linear, measured against the loopback fake.

Usage: .venv/bin/python bench/linear_client.py

The fake (plugins/linear/tests/linear_fake.py) runs in a thread of this process, so the HTTP figures include
its JSON rendering and Starlette/uvicorn; the real Linear API is 50-300 ms away and dominates in practice.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins" / "linear" / "tests"))

from linear_fake import FakeLinear, linear_settings

from lorenz.contracts import ToolContext
from lorenz.issue import normalize_issue
from lorenz.redact import redact_value
from lorenz.testing import loopback_server
from lorenz_linear import LinearClient, LinearToolPack
from lorenz_linear.normalize import issue_record

ISSUES = 500


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def main() -> None:
    fake = FakeLinear()
    with loopback_server(fake.app) as server:
        fake.url = f"{server.base_url}/graphql"
        for n in range(ISSUES):
            fake.add_issue(f"id-{n}", f"MT-{n}", labels=["Lorenz:Backend", "Bug"])
        settings = linear_settings(fake.url, secrets=frozenset({"linear-token"}))
        async with httpx.AsyncClient() as http:
            pack = LinearToolPack()
            context = ToolContext(settings=settings, http=http)
            query = {"query": "query Viewer { viewer { id name email } }"}
            await pack.execute_tool("linear_graphql", query, context)
            calls = []
            for _ in range(200):
                start = time.perf_counter()
                await pack.execute_tool("linear_graphql", query, context)
                calls.append(time.perf_counter() - start)

            client = LinearClient(settings, http=http)
            polls = []
            for _ in range(5):
                start = time.perf_counter()
                issues = await client.fetch_candidate_issues()
                polls.append(time.perf_counter() - start)
            assert len(issues) == ISSUES

            big = {"query": "query LorenzTsPoll { issues }"}
            fake.script({"data": {"issues": {"nodes": [fake.node(i) for i in fake.issues]}}}, operation=None)
            start = time.perf_counter()
            result = await pack.execute_tool("linear_graphql", big, context)
            big_call = time.perf_counter() - start
            assert result.success

    nodes = [fake.node(issue) for issue in fake.issues]
    start = time.perf_counter()
    for node in nodes:
        normalize_issue(issue_record(node, labels=node["labels"]["nodes"], relations=node["inverseRelations"]["nodes"]))
    normalize_each = (time.perf_counter() - start) / len(nodes)
    envelope = {"data": {"issues": {"nodes": nodes}}}
    start = time.perf_counter()
    redact_value(envelope, settings.secrets)
    redact_all = time.perf_counter() - start

    print(f"linear_graphql round trip (viewer), median of 200: {median_ms(calls):.2f} ms")
    print(f"candidate poll, {ISSUES} issues over {ISSUES // 50} pages, median of 5: {median_ms(polls):.1f} ms")
    print(f"linear_graphql returning {ISSUES} issue nodes (incl. redaction): {big_call * 1000:.1f} ms")
    print(f"normalising one issue node (record + normalize_issue): {normalize_each * 1e6:.1f} µs")
    print(f"redact_value over the {ISSUES}-node envelope: {redact_all * 1000:.1f} ms")


if __name__ == "__main__":
    anyio.run(main)
