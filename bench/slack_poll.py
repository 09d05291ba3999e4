"""lorenz-slack: what the thread fold, a poll and the pack's tools cost, measured against the loopback fake.

Usage: .venv/bin/python bench/slack_poll.py

The fake Slack (plugins/slack/tests/slack_fake.py) runs in a thread of this process, so the HTTP figures include
its JSON rendering and Starlette/uvicorn; the real Web API is 50-300 ms away per call and dominates in practice.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import anyio
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins" / "slack" / "tests"))

from slack_fake import BOT, FakeSlack, slack_settings

from lorenz.contracts import ToolContext
from lorenz.testing import loopback_server
from lorenz_slack.client import SlackTrackerClient
from lorenz_slack.fold import state_from_thread
from lorenz_slack.models import SlackMessage, SlackThreadReply
from lorenz_slack.plugin import PACK
from lorenz_slack.transport import SlackWebTransport

ROOTS = 200
THREADED = 50
REPLIES = 4
FOLD_REPLIES = 2000


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_fold() -> float:
    settings = slack_settings()
    root = SlackMessage(channel="C1", ts="1.0", text="<@U_BOT> fix it", user="U_HUMAN", bot_reactions=["eyes"])
    replies = []
    for i in range(FOLD_REPLIES):
        ts = f"2.{i:06d}"
        if i % 4 == 0:
            replies.append(SlackThreadReply(ts=ts, text="status: In Progress", user=BOT))
        elif i % 4 == 1:
            replies.append(SlackThreadReply(ts=ts, text="<@U_BOT> !done", user="U_HUMAN"))
        else:
            replies.append(SlackThreadReply(ts=ts, text=f"chatter {i}", user="U_OTHER"))
    samples = []
    for _ in range(20):
        start = time.perf_counter()
        state_from_thread(root, replies, settings)
        samples.append(time.perf_counter() - start)
    return median_ms(samples)


async def main() -> None:
    print(f"fold of a {FOLD_REPLIES}-reply thread: {bench_fold():.2f} ms (median of 20)")
    fake = FakeSlack()
    with loopback_server(fake.app) as server:
        fake.url = f"{server.base_url}/api"
        await _measure(fake)


async def _measure(fake: FakeSlack) -> None:
    for n in range(ROOTS):
        ts = f"{1_700_000_000 + n}.000100"
        fake.add_root("C1", ts, f"<@U_BOT> request {n} #ops")
        if n < THREADED:
            fake.add_reply("C1", ts, f"{1_700_000_000 + n}.000200", "status: In Progress", user=BOT)
            for r in range(1, REPLIES):
                fake.add_reply("C1", ts, f"{1_700_000_000 + n}.00{r + 2}00", f"reply {r}")
    settings = slack_settings(fake.url)
    async with httpx.AsyncClient() as http:
        polls = []
        for _ in range(5):
            client = SlackTrackerClient(settings, SlackWebTransport(settings, http=http))
            start = time.perf_counter()
            issues = await client.fetch_candidate_issues()
            polls.append(time.perf_counter() - start)
            await client.aclose()
        print(
            f"cold poll, {ROOTS} mention roots ({THREADED} threads of {REPLIES} replies): "
            f"{median_ms(polls):.1f} ms (median of 5), {len(issues)} candidates, "
            f"{len(fake.calls('conversations.replies')) // 5} thread reads per poll"
        )
        warm = []
        for _ in range(5):
            start = time.perf_counter()
            await client.fetch_issues_by_ids([issues[0].id])
            warm.append(time.perf_counter() - start)
        print(f"refresh by id (fresh scan, cached threads): {median_ms(warm):.1f} ms (median of 5)")
        context = ToolContext(settings=settings, http=http)
        args = {"issueId": issues[0].id}
        reads = []
        for _ in range(100):
            start = time.perf_counter()
            await PACK.execute_tool("slack_read_thread", args, context)
            reads.append(time.perf_counter() - start)
        print(f"slack_read_thread: {median_ms(reads):.2f} ms (median of 100)")
        updates = []
        for i in range(20):
            start = time.perf_counter()
            status = "In Progress" if i % 2 else "Todo"
            await PACK.execute_tool("slack_update_status", {**args, "status": status}, context)
            updates.append(time.perf_counter() - start)
        print(f"slack_update_status: {median_ms(updates):.2f} ms (median of 20)")


if __name__ == "__main__":
    anyio.run(main)
