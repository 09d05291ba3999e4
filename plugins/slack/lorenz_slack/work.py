"""What the ``slack`` pack's tools do (:mod:`.toolkit` loads this on their first call; :mod:`.handlers`
runs a tool by name).

Every per-issue tool passes the trust boundary (:func:`~lorenz_slack.trust.require_tracked_message`)
first; whatever a tool raises becomes a failure with a reason (:func:`~lorenz_slack.errors.slack_failure`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import attrs

from lorenz import (
    Settings,
    apply_query,
    parse_query_spec,
    pick_fields,
    report_progress,
)
from lorenz.authoring import CallContext, ToolFailure

from .catalog import DEFAULT_SELECT
from .errors import slack_failure
from .fold import observe_thread, resolve_state_name, state_from_thread
from .ids import issue_id, permalink, split_issue_id
from .mapping import slack_message_to_row
from .options import slack_endpoint, slack_options
from .provenance import is_allowed_author, is_request_message
from .shapes import (
    CommentArgs,
    CommentOut,
    ContextArgs,
    ContextMessage,
    ContextOut,
    IssueArgs,
    QueryArgs,
    QueryOut,
    StatusArgs,
    StatusOut,
    ThreadOut,
    UserArgs,
    UserOut,
    WorkpadArgs,
    WorkpadOut,
)
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

__all__ = ["SlackCallContext", "run_handler"]


@attrs.define(kw_only=True)
class SlackCallContext(CallContext):
    """A call's context with the transport the pack chose for it (the Web API, or a test's fake)."""

    transport: SlackTransport | None = None


def _transport(ctx: CallContext) -> SlackTransport:
    if isinstance(ctx, SlackCallContext) and ctx.transport is not None:
        return ctx.transport
    from .web_transport import SlackWebTransport  # httpx: only a call with no transport given

    return SlackWebTransport(ctx.settings, http=ctx.http)


def _parts(issue: str) -> tuple[str, str]:
    parts = split_issue_id(issue)
    assert parts is not None  # the readers refuse any other form
    return parts


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


async def _query(ctx: CallContext, args: QueryArgs) -> QueryOut:
    settings, transport = ctx.settings, _transport(ctx)
    bot = require_bot_user_id(settings)
    options = slack_options(settings)
    spec = parse_query_spec(args.envelope())
    fields = list(args.select) if args.select is not None else list(DEFAULT_SELECT)
    expand = args.expand or []
    channels = list(options.channels)
    if args.channels is not None:
        wanted = set(args.channels)
        channels = [c for c in channels if c in wanted]
    scan = await transport.scan_channels(channels) if channels else None
    team_url = await transport.team_url()
    rows: list[dict[str, Any]] = []
    if scan is not None:
        marker = options.marker_emoji
        roots = [*scan.mentions, *(r for r in scan.threaded_roots if marker in r.bot_reactions)]
        for done, root in enumerate(roots):
            if done:  # one Slack call per thread: say how far the query got (on from the history pages)
                pages = scan.extra_pages
                await report_progress(pages + done, pages + len(roots), f"{done} of {len(roots)} threads read")
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
    echo: dict[str, Any] = {"channels": channels, **args.envelope(), "limit": spec.limit, "offset": spec.offset}
    ctx.enrich.echo({**echo, "select": fields, "expand": expand})
    if not out:
        ctx.enrich.notice(_empty_notice(args, options.channels, channels, result.total, spec.offset))
    return QueryOut(rows=out, total=result.total)


def _empty_notice(
    args: QueryArgs, configured: tuple[str, ...] | list[str], channels: list[str], total: int, offset: int
) -> str:
    if not channels:
        listed = ", ".join(configured) or "none"
        return f"No configured channel was searched (configured: {listed}); drop 'channels' or name one of them."
    if total:
        return f"{total} issues matched but 'offset' {offset} skipped them all; lower 'offset'."
    if args.where is not None:
        return "No tracked issue matched 'where'; loosen the filter or drop it to list every tracked issue."
    return "No tracked issues in the searched channels: an issue is a bot mention by an allowed user."


async def _user_info(ctx: CallContext, args: UserArgs) -> UserOut:
    require_bot_user_id(ctx.settings)
    user = await _transport(ctx).get_user(args.userId)
    if user is None:
        raise ctx.fail("user_not_found", f"unknown slack user: {args.userId}")
    return UserOut(user=user.to_record())


async def _update_status(ctx: CallContext, args: StatusArgs) -> StatusOut:
    settings, transport = ctx.settings, _transport(ctx)
    channel, ts = _parts(args.issueId)
    canonical = resolve_state_name(args.status, settings)
    if canonical is None:
        states = ", ".join((*settings.tracker.active_states, *settings.tracker.terminal_states))
        message = f"unknown status '{args.status}': use one of the workflow's active/terminal states ({states})"
        raise ctx.fail("unknown_status", message)
    root = await require_tracked_message(settings, transport, channel, ts)
    thread = await read_thread_state(settings, transport, root)
    await ensure_tracking_record(settings, transport, root, thread)
    await post_status(transport, channel, ts, canonical)
    # The reaction mirror is best-effort: it never fails the transition.
    await mirror_status_reaction(settings, transport, channel, ts, canonical, tuple(root.bot_reactions))
    return StatusOut(ok=True, status=canonical)


async def _comment(ctx: CallContext, args: CommentArgs) -> CommentOut:
    transport = _transport(ctx)
    channel, ts = _parts(args.issueId)
    await require_tracked_message(ctx.settings, transport, channel, ts)
    await transport.post_reply(channel, ts, args.body)
    return CommentOut(ok=True)


async def _read_thread(ctx: CallContext, args: IssueArgs) -> ThreadOut:
    settings, transport = ctx.settings, _transport(ctx)
    channel, ts = _parts(args.issueId)
    root = await require_tracked_message(settings, transport, channel, ts)
    replies = await transport.get_thread(channel, ts)
    thread = state_from_thread(root, observe_thread(transport, channel, ts, replies), settings)
    team_url = await transport.team_url()
    link = permalink(team_url, channel, ts) if team_url else await transport.get_permalink(channel, ts)
    return ThreadOut(
        issueId=issue_id(channel, ts),
        status=thread.state,
        statusEvents=[event.to_record() for event in thread.events],
        text=root.text,
        request=thread.request.to_record() if thread.request is not None else None,
        workpad=thread.workpad.to_record() if thread.workpad is not None else None,
        reactions=list(root.reactions),
        permalink=link or None,
        replies=[reply.to_record() for reply in replies],
    )


async def _workpad(ctx: CallContext, args: WorkpadArgs) -> WorkpadOut:
    settings, transport = ctx.settings, _transport(ctx)
    channel, ts = _parts(args.issueId)
    async with _workpad_lock(settings, issue_id(channel, ts)):
        root = await require_tracked_message(settings, transport, channel, ts)
        existing = (await read_thread_state(settings, transport, root)).workpad
        content = WorkpadContent(
            plan=args.plan if args.plan is not None else (existing.plan if existing else None),
            note=args.note if args.note is not None else (existing.note if existing else None),
        )
        workpad_ts = await upsert_workpad(settings, transport, channel, ts, content, existing)
    return WorkpadOut(ok=True, workpadTs=workpad_ts)


async def _channel_context(ctx: CallContext, args: ContextArgs) -> ContextOut:
    transport = _transport(ctx)
    channel, ts = _parts(args.issueId)
    await require_tracked_message(ctx.settings, transport, channel, ts)
    messages = await transport.list_around(channel, ts, before=args.before, after=args.after)
    rendered = [ContextMessage(ts=m.ts, user=m.user, text=m.text) for m in messages]
    return ContextOut(anchor=issue_id(channel, ts), messages=rendered)


_HANDLERS: dict[type, Callable[[CallContext, Any], Awaitable[Any]]] = {
    StatusArgs: _update_status,
    CommentArgs: _comment,
    WorkpadArgs: _workpad,
    IssueArgs: _read_thread,
    QueryArgs: _query,
    UserArgs: _user_info,
    ContextArgs: _channel_context,
}


async def run_handler(ctx: CallContext, args: Any) -> Any:
    """Run the tool for ``args`` (its input class names it); anything raised becomes a failure with
    the pack's own message, redacted."""
    try:
        return await _HANDLERS[type(args)](ctx, args)
    except ToolFailure:
        raise
    except Exception as exc:
        raise slack_failure(exc, ctx.settings) from None
