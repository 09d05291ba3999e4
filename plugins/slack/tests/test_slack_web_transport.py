"""The Web API transport against the loopback fake Slack."""

from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest
from slack_fake import BOT, TOKEN, FakeSlack, slack_settings

from lorenz_slack import SlackApiError, SlackTransportError, SlackWebTransport
from lorenz_slack.models import SlackMetadata

pytestmark = pytest.mark.anyio


class Sleeps:
    """Records backoff sleeps instead of sleeping."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def web(fake: FakeSlack, http: httpx.AsyncClient, **kw: Any) -> SlackWebTransport:
    options = {k: kw.pop(k) for k in list(kw) if k in ("bot", "users", "channels")}
    extra = {k: kw.pop(k) for k in list(kw) if k in ("scanLookbackDays",)}
    return SlackWebTransport(slack_settings(fake.url, **options, **extra), http=http, **kw)


def seed_fixture(fake: FakeSlack) -> None:
    fake.add_root("C1", "1.1", "<@U_BOT> plain ask")
    fake.add_root("C1", "1.2", "<@U_BOT> joined", subtype="channel_join", user=BOT)
    fake.add_root("C1", "1.3", "<@U_BOT> talking to myself", user=BOT)
    fake.add_root("C1", "1.4", "<@U_BOT> from an integration", bot_id="B1")
    fake.add_root("C1", "1.5", "<@U_BOT> nobody", user=None)
    fake.add_root("C1", "1.6", "<@U_BOT> broadcast", subtype="thread_broadcast", thread_ts="1.0")
    fake.add_root("C1", "1.7", "plain chatter with a thread")
    fake.add_reply("C1", "1.7", "1.71", "a reply")
    fake.add_root("C1", "1.8", "<@U_BOT> a file", subtype="file_share")
    fake.add_root("C1", "1.9", "<@U_BOT> waves", subtype="me_message")
    fake.add_root("C1", "2.0", "<@U_BOT> legacy", subtype="bot_message")
    fake.add_root("C1", "2.1", "<@U_BOT> odd", subtype="huddle_thread")
    fake.add_reply("C1", "2.1", "2.11", "reply to odd")


async def test_scan_classifies_roots_and_sends_the_bot_token(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """Only human bot-mention roots are mentions; other trackable roots with replies are threaded roots."""
    seed_fixture(fake)
    scan = await web(fake, http).scan_channels(["C1"])
    assert sorted(m.ts for m in scan.mentions) == ["1.1", "1.8", "1.9"]
    assert [m.ts for m in scan.threaded_roots] == ["1.7"]
    call = fake.calls("conversations.history")[0]
    assert call["verb"] == "GET" and call["params"]["channel"] == "C1" and call["params"]["limit"] == "200"
    assert call["headers"]["authorization"] == f"Bearer {TOKEN}"


async def test_scan_reactions_split_bot_and_everyone(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """reactions lists every name; botReactions only those the bot itself added."""
    fake.add_root("C1", "1.1", "<@U_BOT> go", bot_reactions=("eyes",), human_reactions=("white_check_mark", "tada"))
    (message,) = (await web(fake, http).scan_channels(["C1"])).mentions
    assert message.reactions == ("eyes", "white_check_mark", "tada")
    assert message.bot_reactions == ("eyes",)
    assert message.channel == "C1"


async def test_scan_allow_list_and_fail_closed(
    fake: FakeSlack, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """users restricts authors; without a bot id the scan is empty, makes no request and warns once."""
    fake.add_root("C1", "1.1", "<@U_BOT> alice asks", user="U_ALICE")
    fake.add_root("C1", "1.2", "<@U_BOT> bob asks", user="U_BOB")
    scan = await web(fake, http, users=("U_ALICE",)).scan_channels(["C1"])
    assert [m.ts for m in scan.mentions] == ["1.1"]
    fake.requests.clear()
    transport = web(fake, http, bot=None)
    with caplog.at_level(logging.WARNING, logger="lorenz_slack"):
        assert (await transport.scan_channels(["C1"])).mentions == ()
        assert (await transport.scan_channels(["C1"])).mentions == ()
    assert fake.requests == []
    assert len([r for r in caplog.records if "bot_user_id" in r.getMessage()]) == 1


async def test_scan_follows_cursors_and_caps_pages(
    fake: FakeSlack, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """History pages follow next_cursor; at the page cap the scan is truncated with a warning."""
    for i in range(1, 4):
        fake.add_root("C1", f"{i}.1", f"<@U_BOT> ask {i}")
    fake.history_page_size = 1
    scan = await web(fake, http).scan_channels(["C1"])
    assert sorted(m.ts for m in scan.mentions) == ["1.1", "2.1", "3.1"]
    calls = fake.calls("conversations.history")
    assert len(calls) == 3 and "cursor" not in calls[0]["params"] and calls[1]["params"]["cursor"] == "1"
    fake.requests.clear()
    with caplog.at_level(logging.WARNING, logger="lorenz_slack"):
        scan = await web(fake, http, max_history_pages=2).scan_channels(["C1"])
    assert len(scan.mentions) == 2 and len(fake.calls("conversations.history")) == 2
    assert any("C1" in r.getMessage() and "truncat" in r.getMessage() for r in caplog.records)


async def test_scan_discards_a_failing_channel_and_raises_when_all_fail(
    fake: FakeSlack, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A channel failing contributes nothing (warned); every channel failing raises with their errors."""
    fake.add_root("C_GOOD", "1.1", "<@U_BOT> good")
    with caplog.at_level(logging.WARNING, logger="lorenz_slack"):
        scan = await web(fake, http).scan_channels(["C_BAD", "C_GOOD"])
    assert [m.ts for m in scan.mentions] == ["1.1"]
    assert any("C_BAD" in r.getMessage() and "channel_not_found" in r.getMessage() for r in caplog.records)
    fake.history_page_size = 1
    fake.add_root("C_GOOD", "2.1", "<@U_BOT> second page")
    fake.fail("conversations.history", 200, {"ok": True, "messages": [], "response_metadata": {"next_cursor": "1"}})
    fake.fail("conversations.history", 200, {"ok": False, "error": "fatal_error"})
    with pytest.raises(SlackTransportError, match=r"failed for all channels: C_GOOD: .*fatal_error"):
        await web(fake, http).scan_channels(["C_GOOD"])


async def test_scan_lookback_sets_oldest(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """scan_lookback_days sends oldest = floor(now - days*86400); unset sends none."""
    fake.add_root("C1", "1.1", "<@U_BOT> old")
    await web(fake, http, scanLookbackDays=30, now=lambda: 1_700_000_000.0).scan_channels(["C1"])
    await web(fake, http).scan_channels(["C1"])
    first, second = fake.calls("conversations.history")
    assert first["params"]["oldest"] == str(1_700_000_000 - 30 * 86400)
    assert "oldest" not in second["params"]


async def test_rate_limit_retry_after_then_success(
    fake: FakeSlack, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A 429 with Retry-After: 0 is retried after a backoff warning."""
    fake.add_root("C1", "1.1", "<@U_BOT> hi")
    fake.fail("conversations.history", 429, "", {"Retry-After": "0"})
    with caplog.at_level(logging.WARNING, logger="lorenz_slack"):
        scan = await web(fake, http).scan_channels(["C1"])
    assert len(scan.mentions) == 1
    assert len(fake.calls("conversations.history")) == 2
    assert any(
        "backing off" in r.getMessage() and "conversations.history" in r.getMessage() and "retry 1/4" in r.getMessage()
        for r in caplog.records
    )


async def test_persistent_rate_limit_gives_up_after_five_requests(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """Five 429s in a row fail with the method and the status."""
    for _ in range(5):
        fake.fail("conversations.history", 429, "", {"Retry-After": "0"})
    with pytest.raises(SlackTransportError, match=r"conversations\.history.*429"):
        await web(fake, http).get_message("C1", "1.1")
    assert len(fake.calls("conversations.history")) == 5


async def test_retry_after_is_capped_at_sixty_seconds(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """A huge Retry-After waits at most 60 s."""
    fake.add_root("C1", "1.1", "<@U_BOT> hi")
    fake.fail("conversations.history", 429, "", {"Retry-After": "86400"})
    sleeps = Sleeps()
    await web(fake, http, sleep=sleeps).get_message("C1", "1.1")
    assert sleeps.delays == [60.0]


async def test_server_errors_retry_idempotent_calls_only(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """reactions.add retries a 503/502; chat.postMessage never retries a 5xx but does retry a 429."""
    fake.add_root("C1", "1.1", "<@U_BOT> hi")
    sleeps = Sleeps()
    transport = web(fake, http, sleep=sleeps)
    fake.fail("reactions.add", 503, "")
    fake.fail("reactions.add", 502, "")
    await transport.add_reaction("C1", "1.1", "eyes")
    assert len(fake.calls("reactions.add")) == 3
    assert sleeps.delays == [1.0, 2.0]
    fake.fail("chat.postMessage", 503, "")
    with pytest.raises(SlackTransportError, match=r"chat\.postMessage.*503"):
        await transport.post_reply("C1", "1.1", "hello")
    assert len(fake.calls("chat.postMessage")) == 1
    fake.fail("chat.postMessage", 429, "", {"Retry-After": "0"})
    assert await transport.post_reply("C1", "1.1", "hello again")
    assert len(fake.calls("chat.postMessage")) == 3


async def test_non_json_and_error_statuses(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """HTML 502s exhaust retries; an HTML 200 is a non-JSON error; a 401 text body names its status."""
    transport = web(fake, http, sleep=Sleeps())
    for _ in range(5):
        fake.fail("conversations.history", 502, "<html>bad gateway</html>")
    with pytest.raises(SlackTransportError, match=r"conversations\.history.*502"):
        await transport.get_message("C1", "1.1")
    fake.fail("conversations.history", 200, "<html>login</html>")
    with pytest.raises(SlackTransportError, match=r"conversations\.history returned a non-JSON response \(HTTP 200\)"):
        await transport.get_message("C1", "1.1")
    fake.fail("reactions.add", 401, "unauthorized")
    with pytest.raises(SlackTransportError, match=r"reactions\.add.*401"):
        await transport.add_reaction("C1", "1.1", "eyes")


async def test_ok_false_surfaces_the_slack_error_code(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """ok: false raises SlackApiError with Slack's code; already_reacted/no_reaction are successes."""
    transport = web(fake, http)
    with pytest.raises(SlackApiError, match=r"slack chat\.postMessage failed: channel_not_found") as info:
        await transport.post_reply("C_NOPE", "1.1", "done!")
    assert info.value.code == "channel_not_found"
    fake.add_root("C1", "1.1", "<@U_BOT> hi", bot_reactions=("eyes",))
    await transport.add_reaction("C1", "1.1", "eyes")
    await transport.remove_reaction("C1", "1.1", "tada")
    assert [c["body"] for c in fake.calls("reactions.remove")] == [
        {"channel": "C1", "timestamp": "1.1", "name": "tada"}
    ]


async def test_transport_errors_are_not_retried_and_are_redacted() -> None:
    """A thrown request fails at once, names the method, and never echoes the token."""
    attempts: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        attempts.append(request)
        if request.url.path.endswith("reactions.add"):
            raise httpx.ReadTimeout("read timed out", request=request)
        raise httpx.ConnectError(f"refused; sent Bearer {TOKEN}", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
        transport = SlackWebTransport(slack_settings("http://127.0.0.1:9/api"), http=client)
        with pytest.raises(SlackTransportError, match=r"conversations\.history request failed") as info:
            await transport.get_message("C1", "1.1")
        assert TOKEN not in str(info.value)
        with pytest.raises(SlackTransportError, match=r"^slack reactions\.add request to http://127\.0\.0\.1:9 timed"):
            await transport.add_reaction("C1", "1.1", "eyes")
    assert len(attempts) == 2


async def test_a_slack_that_never_answers_names_host_and_limit(
    silent_server: str, short_timeouts: httpx.AsyncBaseTransport
) -> None:
    """A Web API that accepts the connection and never answers is a timeout naming the method, the host
    and the limit (not the path or the token), raised at once as an ambiguous transport error."""
    async with httpx.AsyncClient(transport=short_timeouts) as client:
        transport = SlackWebTransport(slack_settings(f"{silent_server}/api"), http=client)
        with pytest.raises(SlackTransportError) as info:
            await transport.get_message("C1", "1.1")
    assert str(info.value) == f"slack conversations.history request to {silent_server} timed out after 0.5 s"
    assert info.value.ambiguous


async def test_point_read_and_post_bodies(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """getMessage is a history point read; replies post thread_ts and sanitised text as JSON."""
    fake.add_root(
        "C1", "1.1", "joined", subtype="channel_join", bot_id="B1", thread_ts="1.0", human_reactions=("eyes",)
    )
    fake.add_root("C1", "1.0", "older")
    transport = web(fake, http)
    message = await transport.get_message("C1", "1.1")
    assert message is not None
    assert (message.subtype, message.is_bot, message.thread_ts, message.reactions) == (
        "channel_join",
        True,
        "1.0",
        ("eyes",),
    )
    assert fake.calls("conversations.history")[0]["params"] == {
        "channel": "C1",
        "latest": "1.1",
        "inclusive": "true",
        "limit": "1",
    }
    assert await transport.get_message("C1", "1.05") is None
    ts = await transport.post_reply("C1", "1.0", "done! <!channel>")
    post = fake.calls("chat.postMessage")[0]
    assert post["verb"] == "POST" and post["body"] == {"channel": "C1", "thread_ts": "1.0", "text": "done! @channel"}
    assert post["headers"]["content-type"].startswith("application/json")
    assert fake.thread("C1", "1.0")[0]["ts"] == ts


async def test_thread_reads_drop_the_root_map_replies_and_page(
    fake: FakeSlack, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Replies come back ascending without the root, with bot/edited/subtype/metadata mapped; cursors are followed."""
    fake.add_root("C1", "1.1", "<@U_BOT> root")
    fake.add_reply("C1", "1.1", "1.2", "first reply")
    fake.add_reply("C1", "1.1", "1.3", "second reply", user=None)
    fake.add_reply("C1", "1.1", "1.4", "automation", user="U_AUTOMATION", bot_id="B1")
    fake.add_reply("C1", "1.1", "1.5", "edited reply", edited={"ts": "1.9"})
    fake.add_reply("C1", "1.1", "1.6", "file upload", subtype="file_share")
    fake.add_reply(
        "C1",
        "1.1",
        "1.7",
        "status: Done",
        user=BOT,
        metadata={"event_type": "lorenz_status", "event_payload": {"state": "Done"}},
    )
    fake.replies_page_size = 2
    transport = web(fake, http)
    replies = await transport.get_thread("C1", "1.1")
    assert [r.to_record() for r in replies[:5]] == [
        {"ts": "1.2", "text": "first reply", "user": "U_HUMAN"},
        {"ts": "1.3", "text": "second reply"},
        {"ts": "1.4", "text": "automation", "user": "U_AUTOMATION", "isBot": True},
        {"ts": "1.5", "text": "edited reply", "user": "U_HUMAN", "edited": True},
        {"ts": "1.6", "text": "file upload", "user": "U_HUMAN", "subtype": "file_share"},
    ]
    assert replies[5].metadata == SlackMetadata(event_type="lorenz_status", payload={"state": "Done"})
    calls = fake.calls("conversations.replies")
    assert len(calls) == 3 and calls[1]["params"]["cursor"] == "2"
    assert calls[0]["params"]["include_all_metadata"] == "true" and calls[0]["params"]["ts"] == "1.1"
    page = await transport.get_thread_page("C1", "1.1", after_ts="1.3", limit=17, cursor="1")
    assert [r.ts for r in page.replies] == ["1.5", "1.6"] and page.next_cursor == "3"
    last = fake.calls("conversations.replies")[-1]["params"]
    assert (last["oldest"], last["inclusive"], last["limit"], last["cursor"]) == ("1.3", "false", "17", "1")
    with caplog.at_level(logging.WARNING, logger="lorenz_slack"):
        truncated = await web(fake, http, max_history_pages=2).get_thread("C1", "1.1")
    assert len(truncated) == 4
    assert any("truncated thread" in r.getMessage() for r in caplog.records)


async def test_team_url_users_around_and_permalink(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """auth.test is cached; users.info maps the profile; listAround merges both sides ascending."""
    transport = web(fake, http)
    assert await transport.team_url() == "https://example.slack.com"
    assert await web(fake, http).team_url() == "https://example.slack.com"
    assert len(fake.calls("auth.test")) == 1
    fake.add_user("U_HUMAN", name="ryan", real_name="Ryan L", is_bot=False, profile={"display_name": ""})
    user = await transport.get_user("U_HUMAN")
    assert user is not None and user.to_record() == {
        "id": "U_HUMAN",
        "name": "ryan",
        "realName": "Ryan L",
        "isBot": False,
    }
    assert await transport.get_user("U_NOPE") is None
    for i in range(1, 5):
        fake.add_root("C1", f"{i}.0", f"message {i}", user="U_B")
    around = await transport.list_around("C1", "3.0", before=2, after=5)
    assert [m.ts for m in around] == ["2.0", "3.0", "4.0"]
    assert await transport.get_permalink("C1", "3.0") == "https://example.slack.com/archives/C1/p30"


async def test_ambiguous_post_reconciles_by_metadata_marker(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """A 502 after Slack applied a post finds the bot's reply by its seq marker instead of failing or reposting."""
    fake.add_root("C1", "1.1", "<@U_BOT> hi")
    transport = web(fake, http)
    fake.ambiguous_posts = 1
    metadata = SlackMetadata(event_type="lorenz_status", payload={"state": "Done", "seq": "abc-12345678"})
    ts = await transport.post_reply("C1", "1.1", "status: Done", metadata=metadata)
    assert ts == fake.thread("C1", "1.1")[0]["ts"]
    assert len(fake.calls("chat.postMessage")) == 1
    fake.fail("chat.postMessage", 503, "")
    other = SlackMetadata(event_type="lorenz_status", payload={"state": "Done", "seq": "zzz-00000000"})
    with pytest.raises(SlackTransportError, match=r"chat\.postMessage.*503"):
        await transport.post_reply("C1", "1.1", "status: Done", metadata=other)
    assert len(fake.calls("chat.postMessage")) == 2
    fake.ambiguous_posts = 1
    with pytest.raises(SlackTransportError, match=r"chat\.postMessage.*502"):
        await transport.post_reply("C1", "1.1", "no marker")


async def test_reconciliation_read_failures_and_page_cap(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """A failing marker read surfaces the read error; a thread past the page cap fails instead of reposting."""
    fake.add_root("C1", "1.1", "<@U_BOT> hi")
    marker = SlackMetadata(event_type="lorenz_status", payload={"state": "Done", "seq": "seq-1"})
    transport = web(fake, http, sleep=Sleeps())
    fake.fail("chat.postMessage", 503, "")
    for _ in range(5):
        fake.fail("conversations.replies", 503, "")
    with pytest.raises(SlackTransportError, match=r"conversations\.replies"):
        await transport.post_reply("C1", "1.1", "status: Done", metadata=marker)
    assert len(fake.calls("chat.postMessage")) == 1
    for n in range(3):
        fake.add_reply("C1", "1.1", f"1.{n + 2}", f"reply {n}")
    fake.replies_page_size = 1
    fake.fail("chat.postMessage", 503, "")
    with pytest.raises(SlackTransportError, match=r"reconciliation.*safety cap"):
        await web(fake, http, max_history_pages=2).post_reply("C1", "1.1", "status: Done", metadata=marker)
    assert len(fake.calls("chat.postMessage")) == 2


async def test_read_thread_falls_back_to_slack_permalinks(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """Without a team URL from auth.test, slack_read_thread asks chat.getPermalink."""
    from lorenz_slack.handlers import execute_slack_tool

    fake.add_root("C1", "1.1", "<@U_BOT> hi")
    fake.fail("auth.test", 200, {"ok": False, "error": "not_authed"})
    settings = slack_settings(fake.url)
    result = await execute_slack_tool(
        "slack_read_thread", {"issueId": "C1:1.1"}, settings, SlackWebTransport(settings, http=http)
    )
    assert result.result["permalink"] == "https://example.slack.com/archives/C1/p11"
    assert fake.calls("chat.getPermalink")[0]["params"] == {"channel": "C1", "message_ts": "1.1"}


async def test_api_error_code_is_redacted(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """An ``ok: false`` error echoing the token never carries it into the SlackApiError."""
    fake.fail("chat.postMessage", 200, {"ok": False, "error": f"bad_token_{TOKEN}"})
    with pytest.raises(SlackApiError) as info:
        await web(fake, http).post_reply("C1", "1.1", "hi")
    assert TOKEN not in str(info.value) and TOKEN not in info.value.code
    assert "[REDACTED]" in info.value.code
