"""What the ``slack`` pack's tools do (:class:`~lorenz_slack.tools.SlackToolPack` loads this on its first call).

Every per-issue tool passes the trust boundary (:func:`~lorenz_slack.trust.require_tracked_message`) first.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import Any

from lorenz import (
    ArgumentError,
    Settings,
    ToolResult,
    apply_query,
    as_arguments,
    check_list_argument,
    error_message,
    optional_str,
    parse_query_spec,
    parse_select,
    pick_fields,
    redact_text,
    require_str,
    tool_failure,
    tool_success,
    unsupported_tool_failure,
)

from .catalog import DEFAULT_SELECT, EXPAND, TOOL_NAMES
from .fold import observe_thread, resolve_state_name, state_from_thread
from .ids import issue_id, permalink, split_issue_id
from .mapping import slack_message_to_row
from .options import slack_endpoint, slack_options
from .provenance import is_allowed_author, is_request_message
from .transport import SlackTransport
from .trust import (
    ensure_tracking_record,
    mirror_status_reaction,
    post_status,
    read_thread_state,
    require_bot_user_id,
    require_tracked_message,
)
from .workpad import WorkpadContent, upsert_workpad

__all__ = ["execute_slack_tool"]

_CONTEXT_DEFAULT = 10
_CONTEXT_MAX = 50


def _count(args: Mapping[str, Any], key: str) -> int:
    value = args.get(key)
    if value is None:
        return _CONTEXT_DEFAULT
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and not value.is_integer())
        or value < 0
    ):
        msg = f"'{key}' must be a non-negative integer"
        raise ArgumentError(msg)
    return min(int(value), _CONTEXT_MAX)


# Per event loop, per (endpoint, token digest, issue id): the pack builds a transport per call, so
# the lock must not hang off the transport. Entries are [lock, holders] and go when the last holder leaves.
_WorkpadKey = tuple[str, str, str]
_workpad_locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[_WorkpadKey, list[Any]]] = (
    weakref.WeakKeyDictionary()
)


@contextlib.asynccontextmanager
async def _workpad_lock(settings: Settings, issue: str) -> AsyncIterator[None]:
    token = hashlib.sha256((settings.tracker.api_key or "").encode()).hexdigest()
    key = (slack_endpoint(settings), token, issue)
    locks = _workpad_locks.setdefault(asyncio.get_running_loop(), {})
    entry = locks.setdefault(key, [asyncio.Lock(), 0])
    entry[1] += 1
    try:
        async with entry[0]:
            yield
    finally:
        entry[1] -= 1
        if entry[1] == 0 and locks.get(key) is entry:
            del locks[key]


async def _query(args: Mapping[str, Any], settings: Settings, transport: SlackTransport) -> ToolResult:
    bot = require_bot_user_id(settings)
    options = slack_options(settings)
    spec = parse_query_spec(args)
    select = parse_select(args.get("select"))
    fields = list(select) if select is not None else list(DEFAULT_SELECT)
    raw_expand = args.get("expand")
    expand: list[str] = []
    if raw_expand is not None:
        if not isinstance(raw_expand, list):
            return tool_failure("expand must be an array of 'thread' | 'reactions'")
        for item in raw_expand:
            if item not in EXPAND:
                return tool_failure("expand items must be 'thread' or 'reactions'")
            if item not in expand:
                expand.append(item)
    raw_channels = args.get("channels")
    channels = list(options.channels)
    if raw_channels is not None:
        if not isinstance(raw_channels, list):
            return tool_failure("channels must be an array of strings")
        check_list_argument("channels", raw_channels)
        if not all(isinstance(c, str) for c in raw_channels):
            return tool_failure("channels must be an array of strings")
        wanted = set(raw_channels)
        channels = [c for c in channels if c in wanted]
    scan = await transport.scan_channels(channels) if channels else None
    team_url = await transport.team_url()
    rows: list[dict[str, Any]] = []
    if scan is not None:
        marker = options.marker_emoji
        roots = [*scan.mentions, *(r for r in scan.threaded_roots if marker in r.bot_reactions)]
        from lorenz import report_progress

        for done, root in enumerate(roots):
            if done:  # one Slack call per thread: say how far the query got
                await report_progress(done, len(roots), f"{done} of {len(roots)} threads read")
            thread = await read_thread_state(settings, transport, root)
            is_root_request = is_request_message(root, bot, "root")
            vouched = is_allowed_author(root.user, options.users) or marker in root.bot_reactions
            if (is_root_request and vouched) or thread.request is not None:
                rows.append(
                    slack_message_to_row(
                        root, settings, bot=bot, team_url=team_url, state=thread.state, request=thread.request
                    )
                )
    result = apply_query(rows, spec)
    out: list[dict[str, Any]] = []
    for row in result.rows:
        projected = pick_fields(row, fields)
        if "reactions" in expand:
            projected["reactions"] = row["reactions"]
        if "thread" in expand:
            thread_replies = await transport.get_thread(row["channel"], row["ts"])
            projected["thread"] = [reply.to_record() for reply in thread_replies]
        out.append(projected)
    return tool_success({"rows": out, "total": result.total})


async def _user_info(args: Mapping[str, Any], settings: Settings, transport: SlackTransport) -> ToolResult:
    require_bot_user_id(settings)
    user_id = require_str(args, "userId")
    user = await transport.get_user(user_id)
    if user is None:
        return tool_failure(f"unknown slack user: {user_id}")
    return tool_success({"user": user.to_record()})


async def _update_status(
    args: Mapping[str, Any], settings: Settings, transport: SlackTransport, channel: str, ts: str
) -> ToolResult:
    status = require_str(args, "status")
    canonical = resolve_state_name(status, settings)
    if canonical is None:
        states = ", ".join((*settings.tracker.active_states, *settings.tracker.terminal_states))
        return tool_failure(f"unknown status '{status}': use one of the workflow's active/terminal states ({states})")
    root = await require_tracked_message(settings, transport, channel, ts)
    thread = await read_thread_state(settings, transport, root)
    await ensure_tracking_record(settings, transport, root, thread)
    await post_status(transport, channel, ts, canonical)
    # The reaction mirror is best-effort: it never fails the transition.
    await mirror_status_reaction(settings, transport, channel, ts, canonical, tuple(root.bot_reactions))
    return tool_success({"ok": True, "status": canonical})


async def _read_thread(settings: Settings, transport: SlackTransport, channel: str, ts: str) -> ToolResult:
    root = await require_tracked_message(settings, transport, channel, ts)
    replies = await transport.get_thread(channel, ts)
    thread = state_from_thread(root, observe_thread(transport, channel, ts, replies), settings)
    result: dict[str, Any] = {
        "issueId": issue_id(channel, ts),
        "status": thread.state,
        "statusEvents": [event.to_record() for event in thread.events],
        "text": root.text,
    }
    if thread.request is not None:
        result["request"] = thread.request.to_record()
    if thread.workpad is not None:
        result["workpad"] = thread.workpad.to_record()
    result["reactions"] = list(root.reactions)
    team_url = await transport.team_url()
    link = permalink(team_url, channel, ts) if team_url else await transport.get_permalink(channel, ts)
    if link:
        result["permalink"] = link
    result["replies"] = [reply.to_record() for reply in replies]
    return tool_success(result)


async def _workpad(
    args: Mapping[str, Any], settings: Settings, transport: SlackTransport, channel: str, ts: str
) -> ToolResult:
    plan, note = optional_str(args, "plan", strict=True), optional_str(args, "note", strict=True)
    async with _workpad_lock(settings, issue_id(channel, ts)):
        root = await require_tracked_message(settings, transport, channel, ts)
        existing = (await read_thread_state(settings, transport, root)).workpad
        content = WorkpadContent(
            plan=plan if plan is not None else (existing.plan if existing else None),
            note=note if note is not None else (existing.note if existing else None),
        )
        workpad_ts = await upsert_workpad(settings, transport, channel, ts, content, existing)
    return tool_success({"ok": True, "workpadTs": workpad_ts})


async def _channel_context(
    args: Mapping[str, Any], settings: Settings, transport: SlackTransport, channel: str, ts: str
) -> ToolResult:
    before, after = _count(args, "before"), _count(args, "after")
    await require_tracked_message(settings, transport, channel, ts)
    messages = await transport.list_around(channel, ts, before=before, after=after)
    rendered = []
    for message in messages:
        item: dict[str, Any] = {"ts": message.ts}
        if message.user is not None:
            item["user"] = message.user
        item["text"] = message.text
        rendered.append(item)
    return tool_success({"anchor": issue_id(channel, ts), "messages": rendered})


async def execute_slack_tool(name: str, input: Any, settings: Settings, transport: SlackTransport) -> ToolResult:
    """Run one slack tool against ``transport``; every error becomes a failure result."""
    args = as_arguments(input)
    try:
        if name == "slack_query":
            return await _query(args, settings, transport)
        if name == "slack_user_info":
            return await _user_info(args, settings, transport)
        if name not in TOOL_NAMES:
            return unsupported_tool_failure(name, TOOL_NAMES)
        parts = split_issue_id(require_str(args, "issueId"))
        if parts is None:
            return tool_failure("issueId must be in '<channel>:<ts>' form")
        channel, ts = parts
        if name == "slack_update_status":
            return await _update_status(args, settings, transport, channel, ts)
        if name == "slack_comment":
            body = require_str(args, "body")
            await require_tracked_message(settings, transport, channel, ts)
            await transport.post_reply(channel, ts, body)
            return tool_success({"ok": True})
        if name == "slack_workpad":
            return await _workpad(args, settings, transport, channel, ts)
        if name == "slack_read_thread":
            return await _read_thread(settings, transport, channel, ts)
        return await _channel_context(args, settings, transport, channel, ts)
    except Exception as exc:  # failure is data; messages never echo a secret
        return tool_failure(redact_text(error_message(exc), settings.secrets))
