"""The runtime tracker client over the in-memory transport and the fake Web API."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from slack_fake import BOT, FakeSlack, slack_settings

from lorenz_slack.client import SlackTrackerClient
from lorenz_slack.memory import InMemorySlackTransport, SeedMessage
from lorenz_slack.models import SlackMetadata, SlackThreadReply
from lorenz_slack.web_transport import SlackWebTransport

pytestmark = pytest.mark.anyio

NOW = 1_700_100_000.0
T1, T2 = "1700000000.000100", "1700000000.000200"


def memory(seed: dict[str, list[SeedMessage]], users: tuple[str, ...] = ()) -> InMemorySlackTransport:
    return InMemorySlackTransport(seed, bot_user_id=BOT, allowed_users=users)


def client(transport: InMemorySlackTransport, **kw: Any) -> SlackTrackerClient:
    now = kw.pop("now", NOW)
    return SlackTrackerClient(slack_settings(**kw), transport, now=lambda: now)


def reply(ts: str, text: str, user: str = "U_HUMAN", **kw: Any) -> SlackThreadReply:
    return SlackThreadReply(ts=ts, text=text, user=user, **kw)


async def test_bot_mentions_become_candidates_with_thread_state() -> None:
    """A fresh mention is a Todo candidate; a bot-marked done one is not, but refreshes as Done."""
    transport = memory(
        {
            "C1": [
                SeedMessage(ts=T1, text="<@U_BOT> fix the flaky test\nmore detail", user="U_HUMAN"),
                SeedMessage(ts=T2, text="<@U_BOT> ship docs", user="U_HUMAN", reactions=["white_check_mark"]),
            ]
        }
    )
    tracker = client(transport)
    (issue,) = await tracker.fetch_candidate_issues()
    assert (issue.id, issue.title, issue.state, issue.state_type) == (
        f"C1:{T1}",
        "fix the flaky test",
        "Todo",
        "unstarted",
    )
    assert issue.description == "<@U_BOT> fix the flaky test\nmore detail"
    assert issue.issue_event_cursor == "0"
    assert issue.identifier == f"SLK-C1-{T1.replace('.', '-')}"
    assert issue.url == "https://example.slack.com/archives/C1/p1700000000000100"
    assert issue.created_at == "2023-11-14T22:13:20.000Z"
    assert [i.state for i in await tracker.fetch_issues_by_ids([f"C1:{T2}"])] == ["Done"]
    assert await tracker.acknowledge_issue_receipt(issue) is True
    assert (await transport.get_message("C1", T1)).bot_reactions == ("robot_face",)  # type: ignore[union-attr]
    assert [i.state for i in await tracker.fetch_issues_by_ids([issue.id])] == ["Todo"]
    await tracker.aclose()


async def test_only_bot_mentions_from_allowed_authors_are_candidates() -> None:
    """Chatter and other users' mentions never become issues; the allow-list filters authors."""
    transport = memory(
        {
            "C1": [
                SeedMessage(ts="1.1", text="<@U_BOT> handle this", user="U_ALICE"),
                SeedMessage(ts="1.2", text="<@U_BOT|worker> and this", user="U_BOB"),
                SeedMessage(ts="1.3", text="<@U_OTHER> not for the bot", user="U_ALICE"),
                SeedMessage(ts="1.4", text="<@U_BOT> nobody wrote this"),
            ]
        }
    )
    assert [i.title for i in await client(transport).fetch_candidate_issues()] == ["handle this", "and this"]
    restricted = memory(
        {
            "C1": [
                SeedMessage(ts="1.1", text="<@U_BOT> a", user="U_ALICE"),
                SeedMessage(ts="1.2", text="<@U_BOT> b", user="U_BOB"),
            ]
        },
        ("U_ALICE",),
    )
    tracker = client(restricted, users=("U_ALICE",))
    assert [i.id for i in await tracker.fetch_candidate_issues()] == ["C1:1.1"]


async def test_reply_mention_thread_becomes_an_issue_and_is_marked() -> None:
    """A recent reply mention on chatter is a request: tracked, recorded, marked, and kept after the lookback."""
    root_ts, reply_ts = f"{int(NOW) - 3600}.000100", f"{int(NOW) - 1800}.000100"
    transport = memory(
        {
            "C1": [
                SeedMessage(
                    ts=root_ts,
                    text="we're seeing flaky deploys in prod",
                    user="U_OPS",
                    replies=[reply(reply_ts, "<@U_BOT> please fix this #backend")],
                )
            ]
        }
    )
    (issue,) = await client(transport).fetch_candidate_issues()
    assert (issue.id, issue.title, list(issue.labels)) == (f"C1:{root_ts}", "please fix this #backend", ["backend"])
    assert issue.description is not None and "flaky deploys in prod" in issue.description
    assert issue.issue_event_cursor == reply_ts
    root = await transport.get_message("C1", root_ts)
    assert root is not None and "robot_face" in root.bot_reactions
    thread = await transport.get_thread("C1", root_ts)
    assert thread[-1].metadata is not None and thread[-1].metadata.payload["origin"] == "reply"
    assert thread[-1].metadata.payload["request_ts"] == reply_ts
    later = client(transport, replyLookbackDays=0)
    assert [i.id for i in await later.fetch_candidate_issues()] == [issue.id]


async def test_old_reply_threads_are_not_inspected() -> None:
    """Threads whose latest reply is older than the lookback are never read."""
    transport = memory(
        {"C1": [SeedMessage(ts="1000.1", text="chatter", user="U_A", replies=[reply("1000.2", "<@U_BOT> fix")])]}
    )
    assert await client(transport).fetch_candidate_issues() == []


async def test_tracking_record_preserves_authorization_across_allow_lists() -> None:
    """A reply thread accepted for U_ALICE is still returned by id when the allow-list changes."""
    root_ts, reply_ts = f"{int(NOW) - 60}.000100", f"{int(NOW) - 30}.000100"
    seed = {
        "C1": [
            SeedMessage(
                ts=root_ts,
                text="chatter",
                user="U_OPS",
                replies=[
                    reply(reply_ts, "<@U_BOT> do it", "U_ALICE"),
                    reply(f"{int(NOW) - 20}.000100", "<@U_BOT> me too", "U_BOB"),
                ],
            )
        ]
    }
    transport = memory(seed, ("U_ALICE",))
    assert [i.id for i in await client(transport, users=("U_ALICE",)).fetch_candidate_issues()] == [f"C1:{root_ts}"]
    bob = client(transport, users=("U_BOB",))
    (issue,) = await bob.fetch_issues_by_ids([f"C1:{root_ts}"])
    assert issue.issue_event_cursor == reply_ts


async def test_editing_the_mention_away_untracks_the_root() -> None:
    """A root edited to drop the bot mention is no longer an issue."""
    transport = memory(
        {
            "C1": [
                SeedMessage(
                    ts="1.1",
                    text="<@U_BOT> fix",
                    user="U_HUMAN",
                    replies=[reply("1.2", "status: In Progress", BOT), reply("1.3", "<@U_BOT> later follow-up")],
                )
            ]
        }
    )
    tracker = client(transport)
    assert [i.id for i in await tracker.fetch_candidate_issues()] == ["C1:1.1"]
    transport.edit_root("C1", "1.1", "mention removed")
    assert await tracker.fetch_issues_by_ids(["C1:1.1"]) == []


async def test_commands_keep_their_first_seen_meaning() -> None:
    """A '!done' reply edited into plain text still counts as done for the same transport."""
    transport = memory(
        {"C1": [SeedMessage(ts="1.1", text="<@U_BOT> fix", user="U_HUMAN", replies=[reply("1.2", "<@U_BOT> !done")])]}
    )
    tracker = client(transport)
    assert [i.state for i in await tracker.fetch_issues_by_ids(["C1:1.1"])] == ["Done"]
    transport.edit_reply("C1", "1.1", "1.2", "<@U_BOT> never mind")
    assert [i.state for i in await tracker.fetch_issues_by_ids(["C1:1.1"])] == ["Done"]
    await tracker.aclose()


async def test_reaction_mirror_heals_in_the_background_once() -> None:
    """A human '!done' over the bot's eyes converges to marker + check; the next poll writes nothing."""
    transport = memory(
        {
            "C1": [
                SeedMessage(
                    ts="1.1",
                    text="<@U_BOT> fix",
                    user="U_HUMAN",
                    reactions=["eyes"],
                    replies=[reply("1.2", "<@U_BOT> !done")],
                )
            ]
        }
    )
    tracker = client(transport)
    assert await tracker.fetch_candidate_issues() == []
    await tracker.flush_status_mirror_heals()
    assert (await transport.get_message("C1", "1.1")).bot_reactions == ("robot_face", "white_check_mark")  # type: ignore[union-attr]
    assert ("remove", "C1", "1.1", "eyes") in transport.reaction_calls
    before = len(transport.reaction_calls)
    assert await tracker.fetch_issues_by_states(["Done"])
    await tracker.flush_status_mirror_heals()
    assert len(transport.reaction_calls) == before


async def test_human_reactions_never_count_or_trigger_writes() -> None:
    """Only human reactions on a mention leave it Todo with zero reaction writes."""
    transport = memory(
        {
            "C1": [
                SeedMessage(ts="1.1", text="<@U_BOT> fix", user="U_HUMAN", human_reactions=["white_check_mark", "eyes"])
            ]
        }
    )
    tracker = client(transport)
    assert [i.state for i in await tracker.fetch_candidate_issues()] == ["Todo"]
    await tracker.flush_status_mirror_heals()
    assert transport.reaction_calls == []


async def test_scans_are_shared_within_a_poll_and_ids_are_validated() -> None:
    """One scan serves a poll; identifiers make no scan; ids outside the scan fall back to a point read."""
    transport = memory(
        {
            "C1": [SeedMessage(ts=T1, text="<@U_BOT> a", user="U_A"), SeedMessage(ts=T1, text="x", user="U_A")],
            "C2": [SeedMessage(ts=T1, text="<@U_BOT> b", user="U_A")],
        }
    )
    tracker = client(transport, channels=("C1", "C2"))
    await tracker.fetch_issues_by_states(["Done", "Cancelled"])
    issues = await tracker.fetch_candidate_issues()
    assert transport.scan_calls == 1
    assert [i.identifier for i in issues] == [f"SLK-C1-{T1.replace('.', '-')}", f"SLK-C2-{T1.replace('.', '-')}"]
    assert await tracker.fetch_issues_by_ids([f"SLK-C1-{T1.replace('.', '-')}"]) == []
    assert transport.scan_calls == 1
    restricted = memory(
        {
            "C1": [
                SeedMessage(ts="1.1", text="<@U_BOT> a", user="U_ALICE"),
                SeedMessage(ts="1.2", text="<@U_BOT> b", user="U_DAVE", reactions=["eyes"]),
                SeedMessage(ts="1.3", text="<@U_BOT> c", user="U_BOB", human_reactions=["eyes"]),
                SeedMessage(ts="1.4", text="<@U_BOT> d", user="U_CAROL", reactions=["robot_face"]),
            ]
        },
        ("U_ALICE",),
    )
    tracker = client(restricted, users=("U_ALICE",))
    found = await tracker.fetch_issues_by_ids(["C1:1.2", "C1:1.3", "C1:9.9", "C9:1.1", "C1:1.4", "C1:1.1"])
    assert [i.id for i in found] == ["C1:1.2", "C1:1.4", "C1:1.1"]
    dave = await restricted.get_message("C1", "1.2")
    assert dave is not None and dave.bot_reactions == ("eyes", "robot_face")
    thread = await restricted.get_thread("C1", "1.2")
    assert thread[0].metadata is not None and thread[0].metadata.event_type == "lorenz_tracking"
    assert found[0].state == "In Progress"


async def test_bot_system_roots_are_never_issues() -> None:
    """A bot's channel_join root with status reactions is never returned and causes no writes."""
    transport = memory(
        {
            "C1": [
                SeedMessage(
                    ts="1.1", text="<@U_BOT> joined", user=BOT, subtype="channel_join", reactions=["robot_face", "eyes"]
                )
            ]
        }
    )
    assert await client(transport).fetch_issues_by_ids(["C1:1.1"]) == []
    assert transport.replies == [] and transport.reaction_calls == []


async def test_web_client_polls_the_fake_slack(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """Over the Web API a mention is a candidate, a bot status reply moves it, and refresh sees it."""
    fake.add_root("C1", T1, "<@U_BOT> fix the build #ci")
    settings = slack_settings(fake.url)
    tracker = SlackTrackerClient(settings, SlackWebTransport(settings, http=http))
    (issue,) = await tracker.fetch_candidate_issues()
    assert (issue.title, issue.labels, issue.url) == (
        "fix the build #ci",
        ("ci",),
        "https://example.slack.com/archives/C1/p1700000000000100",
    )
    fake.add_reply(
        "C1",
        T1,
        "1700000001.000100",
        "status: Done",
        user=BOT,
        metadata={"event_type": "lorenz_status", "event_payload": {"state": "Done"}},
    )
    (refreshed,) = await tracker.fetch_issues_by_ids([issue.id])
    assert refreshed.state == "Done"
    assert [i.id for i in await tracker.fetch_issues_by_states(["Done"])] == [issue.id]
    await tracker.flush_status_mirror_heals()
    assert fake.bot_reactions("C1", T1) == ["robot_face", "white_check_mark"]
    assert fake.thread("C1", T1)[-1]["metadata"]["event_type"] == "lorenz_tracking"
    assert SlackMetadata.from_wire(fake.thread("C1", T1)[-1]["metadata"]) is not None


async def test_a_blocked_heal_does_not_block_discovery() -> None:
    """While a reaction write hangs, polls still return every issue; the mirror converges afterwards."""
    import anyio

    release = anyio.Event()

    class Stuck(InMemorySlackTransport):
        async def remove_reaction(self, channel: str, ts: str, name: str) -> None:
            await release.wait()
            await super().remove_reaction(channel, ts, name)

    transport = Stuck(
        {
            "C1": [
                SeedMessage(
                    ts=T1,
                    text="<@U_BOT> a",
                    user="U_A",
                    reactions=["eyes"],
                    replies=[reply("1700000001.1", "<@U_BOT> !reopen")],
                ),
                SeedMessage(ts=T2, text="<@U_BOT> b", user="U_A"),
            ]
        },
        bot_user_id=BOT,
    )
    tracker = client(transport)
    assert [i.id for i in await tracker.fetch_candidate_issues()] == [f"C1:{T1}", f"C1:{T2}"]
    assert (await transport.get_message("C1", T1)).bot_reactions == ("eyes", "robot_face")  # type: ignore[union-attr]
    release.set()
    await tracker.flush_status_mirror_heals()
    assert (await transport.get_message("C1", T1)).bot_reactions == ("robot_face",)  # type: ignore[union-attr]


async def test_refresh_then_poll_share_one_scan_and_commands_heal_minimally() -> None:
    """A refresh warms the poll's scan (no point reads); a '!wip' heal only adds the marker and eyes."""
    transport = memory(
        {
            "C1": [
                SeedMessage(ts="1.1", text="<@U_BOT> a", user="U_A"),
                SeedMessage(ts="1.2", text="<@U_BOT> b", user="U_A", replies=[reply("1.3", "<@U_BOT> !wip")]),
            ]
        }
    )
    tracker = client(transport)
    assert [i.id for i in await tracker.fetch_issues_by_ids(["C1:1.1"])] == ["C1:1.1"]
    assert [i.id for i in await tracker.fetch_issues_by_states(["Todo"])] == ["C1:1.1"]
    assert (transport.scan_calls, transport.get_message_calls) == (1, 0)
    assert [i.state for i in await tracker.fetch_issues_by_ids(["C1:1.2"])] == ["In Progress"]
    await tracker.fetch_candidate_issues()
    await tracker.flush_status_mirror_heals()
    assert transport.reaction_calls == [("add", "C1", "1.2", "robot_face"), ("add", "C1", "1.2", "eyes")]
