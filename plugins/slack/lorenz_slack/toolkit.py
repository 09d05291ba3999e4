"""The seven ``slack`` tools on :mod:`lorenz.authoring`: their schemas, hints, declared failures and the
text they answer. :class:`~lorenz_slack.tools.SlackToolPack` loads this on first use, and the tools'
work (:mod:`.work`, with the Web API transport) on their first call.

Every tool is open-world (it talks to Slack). The reads never change what an agent sees; the writes
post or edit only the bot's own replies, so none is destructive.
"""

from __future__ import annotations

from typing import Any

from lorenz.authoring import CallContext, ErrorContract, Pack, Tool, hints, tool

from . import shapes
from .catalog import TOOL_NAMES
from .errors import READ_ERRORS, WRITE_ERRORS
from .shapes import (
    CommentArgs,
    CommentOut,
    ContextArgs,
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

__all__ = ["SLACK_PACK", "TOOLS"]

_READ = hints(read_only=True, idempotent=True, open_world=True)
UNKNOWN_STATUS = ErrorContract(
    reason="unknown_status",
    when="The status is not one of the workflow's active or terminal states.",
    recovery="Call slack_update_status again with one of the states the message lists.",
)
USER_NOT_FOUND = ErrorContract(
    reason="user_not_found",
    when="Slack knows no user with that id.",
    recovery="Take a user id (U...) from a message's user field in slack_read_thread and call again.",
    code=-32001,
)


async def _run(ctx: CallContext, args: Any) -> Any:
    from .work import run_handler  # the handlers and transport: on the first call

    return await run_handler(ctx, args)


@tool(
    name="slack_update_status",
    description=(
        "Move a Slack issue to another state by posting the bot's authoritative 'status: <State>' "
        "reply in its thread; the bot's reactions on the request are only a visibility mirror. "
        "'status' must be one of the workflow's active or terminal states."
    ),
    input=StatusArgs,
    output=StatusOut,
    # Each call posts another 'status:' reply, so repeating it is not a no-op.
    annotations=hints(read_only=False, destructive=False, idempotent=False, open_world=True),
    errors=[UNKNOWN_STATUS, *WRITE_ERRORS],
    format=shapes.pretty,
    read_arguments=shapes.read_status,
    argument_errors=shapes.refused,
)
async def update_status(ctx: CallContext, args: StatusArgs) -> StatusOut:
    out: StatusOut = await _run(ctx, args)
    return out


@tool(
    name="slack_comment",
    description="Reply in the issue's Slack thread (the requester is notified). Broadcasts are defused.",
    input=CommentArgs,
    output=CommentOut,
    annotations=hints(read_only=False, destructive=False, idempotent=False, open_world=True),
    errors=WRITE_ERRORS,
    format=shapes.pretty,
    read_arguments=shapes.read_comment,
    argument_errors=shapes.refused,
)
async def comment(ctx: CallContext, args: CommentArgs) -> CommentOut:
    out: CommentOut = await _run(ctx, args)
    return out


@tool(
    name="slack_workpad",
    description=(
        "Create or update the issue's workpad: one bot message in the thread, edited in place, "
        "holding a plan checklist and a short progress note (with Cancel/Details buttons when "
        "Socket Mode is configured). A section you omit keeps its current text."
    ),
    input=WorkpadArgs,
    output=WorkpadOut,
    # The same sections twice leave the same one workpad message.
    annotations=hints(read_only=False, destructive=False, idempotent=True, open_world=True),
    errors=WRITE_ERRORS,
    format=shapes.pretty,
    read_arguments=shapes.read_workpad,
    argument_errors=shapes.refused,
)
async def workpad(ctx: CallContext, args: WorkpadArgs) -> WorkpadOut:
    out: WorkpadOut = await _run(ctx, args)
    return out


@tool(
    name="slack_read_thread",
    description=(
        "Read a Slack issue: the source message, its thread-derived status and status history, "
        "the request, the workpad, reactions, a permalink and every reply."
    ),
    input=IssueArgs,
    output=ThreadOut,
    annotations=_READ,
    errors=READ_ERRORS,
    format=shapes.pretty,
    read_arguments=shapes.read_issue,
    argument_errors=shapes.refused,
)
async def read_thread(ctx: CallContext, args: IssueArgs) -> ThreadOut:
    out: ThreadOut = await _run(ctx, args)
    return out


@tool(
    name="slack_query",
    description=(
        "Query tracked Slack issues in the configured channels with their thread-derived state. "
        "Row fields: issueId, channel, ts, title, state, stateType, labels, text, url. Filter with "
        "'where', sort with 'order_by', page with 'limit'/'offset', project with 'select'; "
        "'expand' adds 'thread' and/or 'reactions'. 'channels' is intersected with the "
        "configured channels."
    ),
    input=QueryArgs,
    output=QueryOut,
    annotations=_READ,
    errors=READ_ERRORS,
    format=shapes.pretty,
    # The output's own 'total' is the count before limit/offset: only echo and notice are added.
    enrichment=("echo", "notice"),
    read_arguments=shapes.read_query,
    argument_errors=shapes.refused,
)
async def query(ctx: CallContext, args: QueryArgs) -> QueryOut:
    out: QueryOut = await _run(ctx, args)
    return out


@tool(
    name="slack_user_info",
    description="Profile of a Slack user ('U…' id): name, real name, display name, whether a bot.",
    input=UserArgs,
    output=UserOut,
    annotations=_READ,
    errors=[USER_NOT_FOUND, *READ_ERRORS],
    format=shapes.pretty,
    read_arguments=shapes.read_user,
    argument_errors=shapes.refused,
)
async def user_info(ctx: CallContext, args: UserArgs) -> UserOut:
    out: UserOut = await _run(ctx, args)
    return out


@tool(
    name="slack_channel_context",
    description=(
        "Channel messages around a tracked issue's source message: 'before' (default 10, "
        "counting the anchor) and 'after' (default 10), each at most 50."
    ),
    input=ContextArgs,
    output=ContextOut,
    annotations=_READ,
    errors=READ_ERRORS,
    format=shapes.pretty,
    read_arguments=shapes.read_context,
    argument_errors=shapes.refused,
)
async def channel_context(ctx: CallContext, args: ContextArgs) -> ContextOut:
    out: ContextOut = await _run(ctx, args)
    return out


#: The tools by name, in their published order.
TOOLS: dict[str, Tool[Any, Any]] = {
    t.name: t for t in (update_status, comment, workpad, read_thread, query, user_info, channel_context)
}
assert tuple(TOOLS) == TOOL_NAMES

#: The typed pack behind the registered :class:`~lorenz_slack.tools.SlackToolPack` (what the lint checks).
SLACK_PACK = Pack(name="slack", tools=list(TOOLS.values()))
