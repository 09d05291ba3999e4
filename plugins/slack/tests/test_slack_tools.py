"""The slack tool pack: schemas, trust boundary, status, comments, workpad, query."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from slack_fake import BOT, FakeSlack, slack_settings

from lorenz import ToolContext, ToolResult
from lorenz_slack.catalog import TOOL_NAMES
from lorenz_slack.fold import state_from_thread
from lorenz_slack.handlers import execute_slack_tool
from lorenz_slack.memory import InMemorySlackTransport, SeedMessage
from lorenz_slack.models import SlackMetadata, SlackThreadReply, SlackUser
from lorenz_slack.plugin import PACK
from lorenz_slack.transport import SlackApiError
from lorenz_slack.workpad import WorkpadContent, render_workpad_blocks, upsert_workpad, workpad_fallback_text

pytestmark = pytest.mark.anyio

SETTINGS = slack_settings()


def memory(*roots: SeedMessage, users: dict[str, SlackUser] | None = None) -> InMemorySlackTransport:
    return InMemorySlackTransport({"C1": list(roots)}, bot_user_id=BOT, users=users)


def mention(ts: str = "1.1", text: str = "<@U_BOT> do the thing", **kw: Any) -> SeedMessage:
    return SeedMessage(ts=ts, text=text, user=kw.pop("user", "U_HUMAN"), **kw)


async def call(transport: InMemorySlackTransport, name: str, args: Any, settings: Any = SETTINGS) -> ToolResult:
    return await execute_slack_tool(name, args, settings, transport)


def bodies(transport: InMemorySlackTransport) -> list[str]:
    return [posted.body for posted in transport.replies]


async def bot_reactions(transport: InMemorySlackTransport, ts: str = "1.1") -> tuple[str, ...]:
    message = await transport.get_message("C1", ts)
    assert message is not None
    return message.bot_reactions


def test_specs_names_order_and_required_fields() -> None:
    """Seven tools in the published order, with their required arguments."""
    specs = PACK.tool_specs(SETTINGS)
    assert (
        [s.name for s in specs]
        == list(TOOL_NAMES)
        == [
            "slack_update_status",
            "slack_comment",
            "slack_workpad",
            "slack_read_thread",
            "slack_query",
            "slack_user_info",
            "slack_channel_context",
        ]
    )
    required = {s.name: s.input_schema.get("required") for s in specs}
    assert required["slack_update_status"] == ["issueId", "status"]
    assert required["slack_comment"] == ["issueId", "body"]
    assert required["slack_query"] is None
    for spec in specs:
        assert spec.input_schema["additionalProperties"] is False
        for key, prop in spec.input_schema["properties"].items():
            assert prop.get("description"), f"{spec.name}.{key} has no description"
    expand = specs[4].input_schema["properties"]["expand"]
    assert expand["items"]["enum"] == ["thread", "reactions"]


async def test_update_status_posts_tracking_then_status_and_mirrors_reactions() -> None:
    """A transition records the issue, posts 'status: Done' with metadata, and swaps eyes for a check."""
    transport = memory(mention(reactions=["eyes"]))
    result = await call(transport, "slack_update_status", {"issueId": "C1:1.1", "status": "done"})
    assert result.success and result.result == {"ok": True, "status": "Done"}
    assert bodies(transport) == ["Lorenz tracking record.", "status: Done"]
    thread = await transport.get_thread("C1", "1.1")
    assert thread[0].metadata is not None and thread[0].metadata.event_type == "lorenz_tracking"
    assert thread[0].metadata.payload["origin"] == "root"
    status = thread[1].metadata
    assert status is not None and status.event_type == "lorenz_status"
    assert (status.payload["issue"], status.payload["state"]) == ("C1:1.1", "Done") and status.payload["seq"]
    assert await bot_reactions(transport) == ("robot_face", "white_check_mark")
    assert [c for c in transport.reaction_calls if c[0] == "remove"] == [("remove", "C1", "1.1", "eyes")]
    comment = await call(transport, "slack_comment", {"issueId": "C1:1.1", "body": "done!"})
    assert comment.result == {"ok": True}
    assert (transport.replies[-1].channel, transport.replies[-1].thread_ts, transport.replies[-1].body) == (
        "C1",
        "1.1",
        "done!",
    )
    read = await call(transport, "slack_read_thread", {"issueId": "C1:1.1"})
    assert read.result["status"] == "Done"


async def test_unknown_status_posts_nothing_and_custom_states_work() -> None:
    """An unconfigured status fails listing the states; a configured custom one without an emoji succeeds."""
    transport = memory(mention())
    result = await call(transport, "slack_update_status", {"issueId": "C1:1.1", "status": "Shipped"})
    assert not result.success
    assert result.error == (
        "unknown status 'Shipped': use one of the workflow's active/terminal states "
        "(Todo, In Progress, Done, Cancelled)"
    )
    assert transport.replies == []
    custom = slack_settings(terminal_states=("Done", "Cancelled", "Shipped"))
    result = await call(transport, "slack_update_status", {"issueId": "C1:1.1", "status": "shipped"}, custom)
    assert result.result == {"ok": True, "status": "Shipped"}
    assert bodies(transport) == ["Lorenz tracking record.", "status: Shipped"]
    assert (await call(transport, "slack_read_thread", {"issueId": "C1:1.1"}, custom)).result["status"] == "Shipped"


async def test_reaction_failures_never_fail_a_transition() -> None:
    """add/remove reaction errors are swallowed; both replies are still posted."""

    class Flaky(InMemorySlackTransport):
        async def add_reaction(self, channel: str, ts: str, name: str) -> None:
            raise RuntimeError("reactions down")

        async def remove_reaction(self, channel: str, ts: str, name: str) -> None:
            raise RuntimeError("reactions down")

    transport = Flaky({"C1": [mention(reactions=["eyes"])]}, bot_user_id=BOT)
    result = await call(transport, "slack_update_status", {"issueId": "C1:1.1", "status": "Done"})
    assert result.success and bodies(transport) == ["Lorenz tracking record.", "status: Done"]


async def test_trust_boundary_messages() -> None:
    """Unconfigured channels, missing roots and untracked chatter are refused without side effects."""
    transport = memory(mention(), SeedMessage(ts="2.1", text="just chatter", user="U_HUMAN", human_reactions=["eyes"]))
    cases = [
        (
            "slack_update_status",
            {"issueId": "C9:1.1", "status": "Done"},
            "channel 'C9' is not a configured tracker channel",
        ),
        ("slack_comment", {"issueId": "C1:9.9", "body": "hi"}, "no tracked issue at C1:9.9"),
        ("slack_read_thread", {"issueId": "C1:2.1"}, "message is not a tracked bot-mention issue"),
        ("slack_comment", {"issueId": "C1:2.1", "body": "hi"}, "message is not a tracked bot-mention issue"),
        ("slack_channel_context", {"issueId": "C1:2.1"}, "message is not a tracked bot-mention issue"),
        ("slack_read_thread", {"issueId": "nocolon"}, "issueId must be in '<channel>:<ts>' form"),
        ("slack_read_thread", {}, "'issueId' is required"),
        ("slack_update_status", {"issueId": "C1:1.1"}, "'status' is required"),
        ("slack_workpad", {"issueId": "C1:1.1", "plan": 3}, "'plan' must be a string"),
        ("slack_channel_context", {"issueId": "C1:1.1", "before": -1}, "'before' must be a non-negative integer"),
    ]
    for name, args, message in cases:
        result = await call(transport, name, args)
        assert (result.success, result.error) == (False, message), name
    assert transport.replies == [] and transport.reaction_calls == []
    unsupported = await call(transport, "slack_bogus", {})
    assert unsupported.error == 'Unsupported tool: "slack_bogus".'


async def test_tools_need_a_bot_user_id() -> None:
    """Without a bot id the pack refuses to read or query."""
    settings = slack_settings(bot=None)
    for name, args in (
        ("slack_query", {}),
        ("slack_read_thread", {"issueId": "C1:1.1"}),
        ("slack_user_info", {"userId": "U1"}),
    ):
        result = await call(memory(mention()), name, args, settings)
        assert result.error is not None and "bot_user_id" in result.error


async def test_read_thread_returns_status_workpad_permalink_and_replies() -> None:
    """read_thread folds the thread and returns the replies verbatim."""
    workpad = SlackMetadata(event_type="lorenz_workpad", payload={"plan": "- [ ] test", "note": "running"})
    replies = [
        SlackThreadReply(ts="1.2", text="on it", user="U2"),
        SlackThreadReply(ts="1.3", text="Lorenz workpad", user=BOT, metadata=workpad),
    ]
    transport = memory(mention(reactions=["eyes"], replies=replies))
    result = await call(transport, "slack_read_thread", {"issueId": "C1:1.1"})
    assert result.result == {
        "issueId": "C1:1.1",
        "status": "In Progress",
        "statusEvents": [],
        "text": "<@U_BOT> do the thing",
        "workpad": {"ts": "1.3", "plan": "- [ ] test", "note": "running"},
        "reactions": ["eyes"],
        "permalink": "https://example.slack.com/archives/C1/p11",
        "replies": [
            {"ts": "1.2", "text": "on it", "user": "U2"},
            {"ts": "1.3", "text": "Lorenz workpad", "user": BOT, "metadata": workpad.to_record()},
        ],
    }


async def test_human_commands_and_rementions_drive_read_status() -> None:
    """A human '!done' over bot eyes reads Done; a bare re-mention over a bot check reads Todo."""
    done = memory(
        mention(reactions=["eyes"], replies=[SlackThreadReply(ts="1.2", text="<@U_BOT> !done", user="U_HUMAN")])
    )
    assert (await call(done, "slack_read_thread", {"issueId": "C1:1.1"})).result["status"] == "Done"
    reopened = memory(
        mention(
            reactions=["white_check_mark"], replies=[SlackThreadReply(ts="1.2", text="<@U_BOT> again", user="U_HUMAN")]
        )
    )
    assert (await call(reopened, "slack_read_thread", {"issueId": "C1:1.1"})).result["status"] == "Todo"


async def test_comment_is_sanitised() -> None:
    """Broadcast mentions in a comment are defused before posting."""
    transport = memory(mention())
    await call(transport, "slack_comment", {"issueId": "C1:1.1", "body": "done, telling <!channel> about it"})
    assert bodies(transport) == ["done, telling @channel about it"]


async def test_query_rows_states_labels_select_and_expand() -> None:
    """Query returns tracked roots with thread state; select projects, expand adds thread and reactions."""
    transport = memory(
        mention(
            "1.1",
            "<@U_BOT> fix the build #backend",
            reactions=["eyes"],
            replies=[SlackThreadReply(ts="1.15", text="working", user="U2")],
        ),
        mention("1.2", "<@U_BOT> ship docs", reactions=["white_check_mark"]),
        SeedMessage(ts="1.3", text="chatter", user="U_HUMAN"),
    )
    result = await call(transport, "slack_query", {})
    assert result.result["total"] == 2
    rows = result.result["rows"]
    assert [(r["issueId"], r["state"]) for r in rows] == [("C1:1.1", "In Progress"), ("C1:1.2", "Done")]
    assert rows[0]["labels"] == ["backend"] and set(rows[0]) == {"issueId", "labels", "state", "title"}
    args = {
        "where": {"field": "state", "op": "eq", "value": "In Progress"},
        "select": ["issueId", "text"],
        "expand": ["thread", "reactions", "thread"],
    }
    result = await call(transport, "slack_query", args)
    assert result.result["total"] == 1
    (row,) = result.result["rows"]
    assert (row["issueId"], row["text"], row["reactions"]) == ("C1:1.1", "<@U_BOT> fix the build #backend", ["eyes"])
    assert [r["text"] for r in row["thread"]] == ["working"]
    assert (await call(transport, "slack_query", {"channels": ["C9"]})).result == {"rows": [], "total": 0}
    bad = await call(transport, "slack_query", {"expand": ["bogus"]})
    assert bad.error == "expand items must be 'thread' or 'reactions'"
    bad = await call(transport, "slack_query", {"limit": 0})
    assert bad.error == "limit must be a positive integer"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"channels": ["C1"] * 1001}, "channels has more than 1000 items"),
        ({"channels": ["C" * 4097]}, "channels has a string longer than 4096 characters"),
        (
            {"where": {"field": "t", "op": "nin", "value": [0] * 150_000}},
            "filter: 'nin' value has more than 1000 items",
        ),
        ({"order_by": [{"field": "title"}] * 10_000}, "order_by has more than 8 keys"),
        ({"select": ["title"] * 100_000}, "select has more than 64 fields"),
    ],
)
async def test_query_refuses_oversized_arguments(args: dict[str, Any], message: str) -> None:
    """Oversized lists fail with the DSL bound's message before any Slack call."""
    transport = memory(mention("1.1", "<@U_BOT> fix the build"))
    assert (await call(transport, "slack_query", args)).error == message
    assert transport.scan_calls == 0


async def test_query_includes_marked_reply_threads() -> None:
    """A marked chatter root whose reply asked the bot is a row titled by the request."""
    replies = [
        SlackThreadReply(ts="2.2", text="<@U_BOT> please handle #infra", user="U_HUMAN"),
        SlackThreadReply(ts="2.3", text="status: In Progress", user=BOT),
    ]
    transport = memory(
        mention("1.1", "<@U_BOT> mention-tracked"),
        SeedMessage(ts="2.1", text="something broke", user="U_HUMAN", reactions=["robot_face"], replies=replies),
    )
    result = await call(transport, "slack_query", {"select": ["issueId", "title", "state"]})
    assert result.result["rows"] == [
        {"issueId": "C1:1.1", "title": "mention-tracked", "state": "Todo"},
        {"issueId": "C1:2.1", "title": "please handle #infra", "state": "In Progress"},
    ]


async def test_user_info_and_channel_context() -> None:
    """user_info maps a profile or fails for unknown users; channel_context returns the anchor's neighbourhood."""
    users = {"U_HUMAN": SlackUser(id="U_HUMAN", name="ryan", real_name="Ryan L", is_bot=False)}
    transport = memory(
        SeedMessage(ts="1.0", text="earlier", user="U_A"),
        SeedMessage(ts="2.0", text="more context", user="U_B"),
        SeedMessage(ts="3.0", text="<@U_BOT> fix the thing", user="U_B"),
        SeedMessage(ts="4.0", text="after the ask", user="U_A"),
        users=users,
    )
    info = await call(transport, "slack_user_info", {"userId": "U_HUMAN"})
    assert info.result == {"user": {"id": "U_HUMAN", "name": "ryan", "realName": "Ryan L", "isBot": False}}
    assert (await call(transport, "slack_user_info", {"userId": "U_NOPE"})).error == "unknown slack user: U_NOPE"
    context = await call(transport, "slack_channel_context", {"issueId": "C1:3.0", "before": 2, "after": 5})
    assert context.result == {
        "anchor": "C1:3.0",
        "messages": [
            {"ts": "2.0", "user": "U_B", "text": "more context"},
            {"ts": "3.0", "user": "U_B", "text": "<@U_BOT> fix the thing"},
            {"ts": "4.0", "user": "U_A", "text": "after the ask"},
        ],
    }


async def test_workpad_is_one_message_edited_in_place() -> None:
    """Plan then note update the same workpad; omitted sections are kept."""
    transport = memory(mention())
    first = await call(transport, "slack_workpad", {"issueId": "C1:1.1", "plan": "- [ ] reproduce\n- [ ] fix"})
    second = await call(transport, "slack_workpad", {"issueId": "C1:1.1", "note": "tests running"})
    assert first.result["workpadTs"] == second.result["workpadTs"]
    thread = await transport.get_thread("C1", "1.1")
    pads = [r for r in thread if r.metadata is not None and r.metadata.event_type == "lorenz_workpad"]
    assert len(pads) == 1 and len(transport.replies) == 1
    assert pads[0].metadata is not None
    assert (pads[0].metadata.payload["plan"], pads[0].metadata.payload["note"]) == (
        "- [ ] reproduce\n- [ ] fix",
        "tests running",
    )
    assert "- [ ] reproduce" in transport.replies[0].body
    root = await transport.get_message("C1", "1.1")
    assert root is not None and state_from_thread(root, thread, SETTINGS).state == "Todo"


async def test_concurrent_workpad_updates_merge() -> None:
    """Concurrent plan and note updates end in one workpad holding both."""
    transport = memory(mention())
    async with anyio.create_task_group() as tg:
        tg.start_soon(call, transport, "slack_workpad", {"issueId": "C1:1.1", "plan": "- [ ] a"})
        tg.start_soon(call, transport, "slack_workpad", {"issueId": "C1:1.1", "note": "busy"})
    (pad,) = [r for r in await transport.get_thread("C1", "1.1") if r.metadata is not None]
    assert pad.metadata is not None and (pad.metadata.payload["plan"], pad.metadata.payload["note"]) == (
        "- [ ] a",
        "busy",
    )


def test_workpad_rendering_sanitises_clips_and_gates_buttons() -> None:
    """Broadcasts are defused, 2000+2000 chars clip to 2800, and buttons need an app token."""
    content = WorkpadContent(plan="- [ ] ping <!channel> and <!subteam^S1|@eng>", note="cc <!here>")
    rendered = repr(render_workpad_blocks(SETTINGS, "C1:1.1", content))
    assert "<!" not in rendered and "@channel" in rendered and "@group" in rendered and "@here" in rendered
    assert "lorenz_cancel" not in rendered
    assert "lorenz_cancel" in repr(render_workpad_blocks(slack_settings(appToken="xapp-test"), "C1:1.1", content))
    assert workpad_fallback_text(WorkpadContent(plan="- [ ] verify accessibility", note="reviewing")) == (
        "Lorenz workpad\n\n- [ ] verify accessibility\n\nreviewing"
    )


async def test_workpad_clipping_and_repost_rules() -> None:
    """Long sections clip to the budget; an uneditable workpad is reposted, other errors propagate."""
    transport = memory(mention())
    await upsert_workpad(SETTINGS, transport, "C1", "1.1", WorkpadContent(plan="p" * 2000, note="n" * 2000), None)
    (pad,) = await transport.get_thread("C1", "1.1")
    assert pad.metadata is not None
    plan, note = pad.metadata.payload["plan"], pad.metadata.payload["note"]
    assert len(plan) + len(note) == 2800 and note.endswith("… (clipped)") and len(pad.text) < 4000

    class Stale(InMemorySlackTransport):
        error: Exception = SlackApiError("chat.update", "message_not_found")

        async def update_message(self, *args: Any, **kwargs: Any) -> None:
            raise self.error

    from lorenz_slack.fold import Workpad

    stale = Stale({"C1": [mention()]}, bot_user_id=BOT)
    ts = await upsert_workpad(SETTINGS, stale, "C1", "1.1", WorkpadContent(plan="x"), Workpad(ts="1.5"))
    assert ts != "1.5" and len(stale.replies) == 1
    stale.error = RuntimeError("temporary failure")
    with pytest.raises(RuntimeError, match="temporary failure"):
        await upsert_workpad(SETTINGS, stale, "C1", "1.1", WorkpadContent(plan="x"), Workpad(ts="1.5"))
    assert len(stale.replies) == 1


async def test_pack_executes_over_the_web_api(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """Through the pack the tools use the host's HTTP client against the Web API."""
    fake.add_root("C1", "1.1", "<@U_BOT> please deploy", bot_reactions=("eyes",))
    settings = slack_settings(fake.url)
    context = ToolContext(settings=settings, http=http)
    result = await PACK.execute_tool("slack_update_status", {"issueId": "C1:1.1", "status": "Done"}, context)
    assert result.result == {"ok": True, "status": "Done"}
    assert [r["text"] for r in fake.thread("C1", "1.1")] == ["Lorenz tracking record.", "status: Done"]
    assert fake.bot_reactions("C1", "1.1") == ["robot_face", "white_check_mark"]
    read = await PACK.execute_tool("slack_read_thread", {"issueId": "C1:1.1"}, context)
    assert read.result["status"] == "Done" and read.result["permalink"] == "https://example.slack.com/archives/C1/p11"
    pad = await PACK.execute_tool("slack_workpad", {"issueId": "C1:1.1", "plan": "- [x] ship"}, context)
    again = await PACK.execute_tool("slack_workpad", {"issueId": "C1:1.1", "note": "live"}, context)
    assert pad.result["workpadTs"] == again.result["workpadTs"]
    assert fake.thread("C1", "1.1")[-1]["metadata"]["event_payload"]["note"] == "live"
    assert fake.calls("chat.update")


async def test_pack_serialises_concurrent_workpad_updates(fake: FakeSlack, http: httpx.AsyncClient) -> None:
    """Concurrent pack workpad calls (a fresh transport each) still merge into one workpad."""
    fake.add_root("C1", "1.1", "<@U_BOT> do it")
    context = ToolContext(settings=slack_settings(fake.url), http=http)
    results: list[ToolResult] = []

    async def run(args: dict[str, str]) -> None:
        results.append(await PACK.execute_tool("slack_workpad", {"issueId": "C1:1.1", **args}, context))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, {"plan": "- [ ] a"})
        tg.start_soon(run, {"note": "busy"})
    assert all(r.success for r in results) and len({r.result["workpadTs"] for r in results}) == 1
    pads = [m for m in fake.thread("C1", "1.1") if (m.get("metadata") or {}).get("event_type") == "lorenz_workpad"]
    assert [p["metadata"]["event_payload"].get("plan") for p in pads] == ["- [ ] a"]
    assert pads[0]["metadata"]["event_payload"]["note"] == "busy"


async def test_a_query_over_several_threads_reports_progress() -> None:
    """`slack_query` reads each candidate thread with its own Slack call, and tells the client how far
    it got before each one after the first."""
    from lorenz.testing import run_tool

    transport = memory(*(mention(f"1.{n}", f"<@U_BOT> task {n}") for n in range(1, 4)))
    seen: list[tuple[float, float | None, str | None]] = []

    async def sink(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    class Pack:  # the slack pack's handlers on the in-memory transport, run as the host runs a pack
        name = "slack"
        tool_specs = PACK.tool_specs

        async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
            return await call(transport, name, input)

    context = ToolContext(settings=SETTINGS, http=None, progress_sink=sink)
    result = await run_tool(Pack(), "slack_query", {}, context)
    assert result.result["total"] == 3
    assert seen == [(1, 3, "1 of 3 threads read"), (2, 3, "2 of 3 threads read")]
