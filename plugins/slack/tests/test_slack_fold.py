"""Provenance, mapping, the thread fold and sanitising."""

from __future__ import annotations

from typing import Any

import pytest
from slack_fake import slack_settings

from lorenz_slack.fold import is_aside_text, parse_status_command, state_from_thread
from lorenz_slack.ids import compare_slack_ts, created_at, issue_identifier, permalink, split_issue_id
from lorenz_slack.mapping import derive_labels, emoji_for_state, slack_title, state_from_reactions
from lorenz_slack.models import SlackMessage, SlackMetadata, SlackThreadReply
from lorenz_slack.options import DEFAULT_EMOJI_STATES, status_emoji_map
from lorenz_slack.provenance import (
    is_allowed_request_message,
    is_bot_mention,
    is_request_message,
    is_trackable_thread_root,
    strip_leading_mention,
)
from lorenz_slack.sanitize import strip_broadcast_mentions

SETTINGS = slack_settings()


def root(text: str = "<@U_BOT> fix it", **kw: Any) -> SlackMessage:
    return SlackMessage(channel="C1", ts=kw.pop("ts", "100.1"), text=text, user=kw.pop("user", "U_HUMAN"), **kw)


def bot(ts: str, text: str, metadata: SlackMetadata | None = None) -> SlackThreadReply:
    return SlackThreadReply(ts=ts, text=text, user="U_BOT", metadata=metadata)


def human(ts: str, text: str, user: str = "U_HUMAN", **kw: Any) -> SlackThreadReply:
    return SlackThreadReply(ts=ts, text=text, user=user, **kw)


def test_ids_identifiers_permalinks_and_exact_ts_order() -> None:
    """Ids split at the first colon; identifiers and permalinks keep the channel; ts compare as decimals."""
    assert split_issue_id("C1:1700000000.000100") == ("C1", "1700000000.000100")
    assert split_issue_id("SLK-C1-1") is None
    assert issue_identifier("C1", "1700000000.000100") == "SLK-C1-1700000000-000100"
    assert permalink("https://example.slack.com/", "C1", "1700000000.000100") == (
        "https://example.slack.com/archives/C1/p1700000000000100"
    )
    assert compare_slack_ts("1700000000.000002", "1700000000.000003") == -1
    assert compare_slack_ts("0010.10", "10.1") == 0
    assert compare_slack_ts("9.9", "10.0") == -1
    assert created_at("1700000000.000100") == "2023-11-14T22:13:20.000Z"
    with pytest.raises(ValueError, match="invalid Slack timestamp: x"):
        compare_slack_ts("x", "1")


@pytest.mark.parametrize(
    ("reactions", "state"),
    [
        ([], "Todo"),
        (["thumbsup", "eyes"], "In Progress"),
        (["white_check_mark"], "Done"),
        (["x"], "Cancelled"),
        (["eyes", "white_check_mark"], "Done"),
        (["white_check_mark", "eyes"], "Done"),
        (["x", "eyes"], "Cancelled"),
        (["white_check_mark", "x"], "Cancelled"),
        (["constructor", "__proto__"], "Todo"),
        (["constructor", "eyes"], "In Progress"),
    ],
)
def test_state_from_reactions_default_map(reactions: list[str], state: str) -> None:
    """The highest-ranked mapped reaction wins; unmapped names never count."""
    assert state_from_reactions(reactions, DEFAULT_EMOJI_STATES, SETTINGS) == state


def test_custom_emoji_states_rank_by_configured_state_kind() -> None:
    """Custom terminal states outrank active ones; cancelled still wins."""
    settings = slack_settings(
        emojiStates={"rocket": "Shipped", "wrench": "Rework"},
        active_states=("Todo", "In Progress", "Rework"),
        terminal_states=("Shipped",),
    )
    emoji = status_emoji_map(settings)
    assert state_from_reactions(["eyes", "rocket"], emoji, settings) == "Shipped"
    assert state_from_reactions(["rocket", "eyes"], emoji, settings) == "Shipped"
    assert state_from_reactions(["wrench"], emoji, settings) == "Rework"
    assert state_from_reactions(["wrench", "x"], emoji, settings) == "Cancelled"
    assert emoji_for_state("In Progress", emoji) == "eyes"
    assert emoji_for_state("done", emoji) == "white_check_mark"
    assert emoji_for_state("Todo", emoji) is None


def test_bot_mentions_and_leading_mention_stripping() -> None:
    """Mentions are matched with or without a label; stripping removes one leading mention."""
    assert is_bot_mention("<@U_BOT> do it", "U_BOT")
    assert is_bot_mention("<@U_BOT|worker> do it", "U_BOT")
    assert is_bot_mention("hey <@U_BOT> later in line", "U_BOT")
    assert not is_bot_mention("<@U_OTHER> do it", "U_BOT")
    assert not is_bot_mention("no mention here", "U_BOT")
    assert is_bot_mention("<@U123|alice> hi", None)
    assert not is_bot_mention("plain text", None)
    assert strip_leading_mention("<@U_BOT> fix it", "U_BOT") == "fix it"
    assert strip_leading_mention("<@U_BOT|bot> fix it", "U_BOT") == "fix it"
    assert strip_leading_mention("<@U_OTHER> fix it", "U_BOT") == "<@U_OTHER> fix it"
    assert strip_leading_mention("<@U_OTHER> fix it", None) == "fix it"


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, True),
        ({"subtype": "file_share"}, True),
        ({"subtype": "me_message"}, True),
        ({"subtype": "channel_join"}, False),
        ({"subtype": "bot_message"}, False),
        ({"is_bot": True}, False),
        ({"user": "U_BOT"}, False),
        ({"user": None}, False),
        ({"subtype": "thread_broadcast", "thread_ts": "0.5"}, False),
    ],
)
def test_root_requests_come_only_from_humans(changes: dict[str, Any], expected: bool) -> None:
    """Only a human's plain, file or /me root mentioning the bot is a root request."""
    message = SlackMessage(
        channel="C1", ts="1.0", text="<@U_BOT> fix it", user=changes.pop("user", "U_HUMAN"), **changes
    )
    assert is_request_message(message, "U_BOT", "root") is expected


def test_reply_requests_allowlist_and_trackable_roots() -> None:
    """Replies may be broadcasts; the allow-list filters authors; bot posts can anchor a thread."""
    for subtype in (None, "file_share", "me_message", "thread_broadcast"):
        assert is_request_message(human("1.1", "<@U_BOT> go", subtype=subtype), "U_BOT", "reply")
    reply = human("1.1", "<@U_BOT> go")
    assert is_allowed_request_message(reply, "U_BOT", ["U_HUMAN"], "reply")
    assert not is_allowed_request_message(reply, "U_BOT", ["U_OTHER"], "reply")
    assert is_trackable_thread_root(root("deploy done", subtype="bot_message", is_bot=True))
    assert not is_trackable_thread_root(root("joined", subtype="channel_join"))


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("<@U_BOT> !done", "Done"),
        ("<@U_BOT> !Done!", "Done"),
        ("<@U_BOT> !cancel", "Cancelled"),
        ("<@U_BOT> !reopen", "Todo"),
        ("<@U_BOT> !in progress", "In Progress"),
        ("<@U_BOT> !status In Progress", "In Progress"),
        ("<@U_BOT|bot> !status: done", "Done"),
        ("thanks, looks done to me", None),
        ("<@U_BOT> done", None),
        ("<@U_BOT> status In Progress", None),
        ("please <@U_BOT> !done", None),
        ("<@U_BOT> !status Shipped", None),
    ],
)
def test_parse_status_command(text: str, state: str | None) -> None:
    """A command is a leading bot mention then '!' and a known state or keyword."""
    assert parse_status_command(text, "U_BOT", SETTINGS) == state


def test_aside_detection() -> None:
    """'!aside' (optionally after the mention) is an aside; '!aside-ish' is not."""
    assert is_aside_text("!aside context only", "U_BOT")
    assert is_aside_text("<@U_BOT> !ASIDE context only", "U_BOT")
    assert not is_aside_text("!aside-ish context", "U_BOT")


def test_fold_status_comes_from_latest_bot_status() -> None:
    """The latest bot 'status:' reply or explicit command decides; asides never count."""
    assert (
        state_from_thread(root(), [bot("101.1", "status: Done"), human("102.1", "<@U_BOT> !aside fyi")], SETTINGS).state
        == "Done"
    )
    replies = [
        bot("101.1", "status: In Progress"),
        human("102.1", "<@U_BOT> !done"),
        bot("103.1", "status: In Progress"),
    ]
    assert state_from_thread(root(), replies, SETTINGS).state == "In Progress"
    assert state_from_thread(root(), replies[:2], SETTINGS).state == "Done"


def test_fold_bare_mention_reopens_a_finished_issue() -> None:
    """A bare re-mention after a terminal status reopens; before any status it changes nothing."""
    folded = state_from_thread(root(), [bot("101.1", "status: Done"), human("102.1", "<@U_BOT> broke again")], SETTINGS)
    assert folded.state == "Todo"
    assert [e.to_record() for e in folded.events] == [
        {"ts": "101.1", "state": "Done", "actor": "U_BOT"},
        {"ts": "102.1", "state": "Todo", "actor": "U_HUMAN"},
    ]
    assert (
        state_from_thread(
            root(), [human("101.1", "<@U_BOT> any update?"), bot("102.1", "status: Done")], SETTINGS
        ).state
        == "Done"
    )
    replies = [bot("101.1", "status: Done"), human("102.1", "<@U_BOT> again"), bot("103.1", "status: Done")]
    folded = state_from_thread(root(), replies, SETTINGS)
    assert folded.state == "Done"
    assert [(e.state, e.actor) for e in folded.events] == [("Done", "U_BOT"), ("Todo", "U_HUMAN"), ("Done", "U_BOT")]


def test_fold_reactions_are_only_the_starting_point() -> None:
    """A bot reaction sets the initial state; a human reaction never does; a bare mention reopens it."""
    assert state_from_thread(root(bot_reactions=["eyes"]), [], SETTINGS).state == "In Progress"
    assert state_from_thread(root(reactions=["white_check_mark", "eyes"]), [], SETTINGS).state == "Todo"
    folded = state_from_thread(
        root(bot_reactions=["white_check_mark"]), [human("101.1", "<@U_BOT> still broken")], SETTINGS
    )
    assert folded.state == "Todo"
    assert [e.to_record() for e in folded.events] == [{"ts": "101.1", "state": "Todo", "actor": "U_HUMAN"}]
    settings = slack_settings(emojiStates={"check_mark": "Done", "green-check-mark": "Done"})
    assert state_from_thread(root(bot_reactions=["green-check-mark"]), [], settings).state == "Done"


def test_fold_reply_origin_request_and_invalid_replies() -> None:
    """On a non-mention root the first allowed mention reply is the request; system/bot replies never count."""
    chatter = root("we're seeing flaky deploys in prod")
    replies = [
        human("101.1", "plain reply"),
        human("102.1", "<@U_BOT> please fix this #backend"),
        human("103.1", "<@U_BOT> !done"),
    ]
    folded = state_from_thread(chatter, replies, SETTINGS)
    assert folded.state == "Done"
    assert folded.request is not None and folded.request.ts == "102.1"
    invalid = [
        human("101.1", "<@U_BOT> from a bot", is_bot=True),
        human("102.1", "<@U_BOT> joined", subtype="channel_join"),
        SlackThreadReply(ts="103.1", text="<@U_BOT> nobody"),
        human("104.1", "<@U_BOT> broadcast ask", subtype="thread_broadcast"),
    ]
    folded = state_from_thread(chatter, invalid, SETTINGS)
    assert folded.request is not None and folded.request.ts == "104.1"
    folded = state_from_thread(root(), [bot("100.5", "status: Done"), *invalid[:3]], SETTINGS)
    assert [e.state for e in folded.events] == ["Done"]


def test_fold_metadata_status_workpad_and_tracking() -> None:
    """Status metadata beats text, workpads never fold, the tracking record is read."""
    status = SlackMetadata(event_type="lorenz_status", payload={"state": "Cancelled"})
    folded = state_from_thread(
        root(), [bot("1.5", "status: Cancelled\n(requested by <@U9> via the workpad)", status)], SETTINGS
    )
    assert folded.state == "Cancelled"
    assert [e.to_record() for e in folded.events] == [{"ts": "1.5", "state": "Cancelled", "actor": "U_BOT"}]
    pad = SlackMetadata(event_type="lorenz_workpad", payload={"plan": "- [ ] step", "note": "starting"})
    tracking = SlackMetadata(event_type="lorenz_tracking", payload={"origin": "root"})
    folded = state_from_thread(
        root(), [bot("1.1", "Lorenz tracking record.", tracking), bot("1.2", "Lorenz workpad", pad)], SETTINGS
    )
    assert folded.state == "Todo"
    assert folded.workpad is not None and folded.workpad.to_record() == {
        "ts": "1.2",
        "plan": "- [ ] step",
        "note": "starting",
    }
    assert folded.tracking is not None and folded.tracking.origin == "root"


@pytest.mark.parametrize(
    ("text", "labels"),
    [
        ("#backend #Urgent", ["backend", "urgent"]),
        ("ask <@U1> in <#C0ABC|general> #backend", ["backend"]),
        ("color:#fff see http://x#frag then #Backend and #api", ["backend", "api"]),
        ("no hashtags", []),
        ("<https://wiki/x|the #route-prod runbook> then fix #backend", ["backend"]),
    ],
)
def test_labels_from_hashtags(text: str, labels: list[str]) -> None:
    """Labels are word-initial #tags outside Slack tokens, lower-cased and de-duplicated."""
    assert derive_labels(text) == labels


def test_titles_strip_the_mention() -> None:
    """The title is the first line without the leading bot mention (the ts when empty)."""
    assert slack_title(root("<@U_BOT|worker> do it\nmore"), "U_BOT") == "do it"
    assert slack_title(root("<@U_BOT>"), "U_BOT") == "100.1"


def test_broadcast_mentions_are_defused() -> None:
    """<!channel>/<!here>/<!everyone> and user groups become plain text; user mentions stay."""
    assert strip_broadcast_mentions("hey <!channel> and <!here|@here> and <!everyone>, ping <@U123>") == (
        "hey @channel and @here and @everyone, ping <@U123>"
    )
    assert strip_broadcast_mentions("cc <!subteam^S042ABC|@eng> and <!subteam^S042DEF>") == "cc @group and @group"
    assert strip_broadcast_mentions("<!subteam^S0|<!>channel>") == "@groupchannel>"
    assert strip_broadcast_mentions("<!CHANNEL>") == "@channel"
