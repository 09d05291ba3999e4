"""The ``slack`` tools' typed inputs and outputs, and the readers that fill an input from a call's raw
arguments in the pack's own words (``'issueId' is required``), in the order the pack always checked them.

An output's ``payload()`` is the answer callers have always had: optional fields left out when absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from attrs import field, frozen

from lorenz import (
    ArgumentError,
    QueryError,
    ToolResult,
    check_list_argument,
    optional_str,
    parse_query_spec,
    parse_select,
    plain_text,
    query_input_properties,
    require_str,
)
from lorenz.authoring import CallContext, describe, failure_result

from .catalog import DEFAULT_SELECT, EXPAND
from .ids import split_issue_id

__all__ = ["payload", "pretty"]

_ISSUE = "The Slack issue id, '<channel>:<ts>' (e.g. C0123456789:1717000000.000100)."
_STRING = {"type": "string"}
_NUMBER = {"type": "number"}
_QUERY = query_input_properties(
    f"Row fields to return (default {', '.join(DEFAULT_SELECT)}); also channel, ts, stateType, text, url, reactions."
)
_CONTEXT_DEFAULT = 10
_CONTEXT_MAX = 50

#: A JSON value of a Slack record (rows, replies, a profile): any of these, nested freely.
Json = str | int | float | bool | list[Any] | dict[str, Any] | None


def payload(value: Any) -> Any:
    """``value`` as the pack has always answered it: an optional field (default ``None``) is left out
    when ``None``; everything else as it is."""
    if attrs.has(type(value)):
        out: dict[str, Any] = {}
        for item in attrs.fields(type(value)):
            got = getattr(value, item.name)
            if got is None and item.default is None:
                continue
            out[item.name] = payload(got)
        return out
    if isinstance(value, list):
        return [payload(item) for item in value]
    return value


def pretty(output: Any) -> str:
    """The text answer: the payload as pretty JSON, as the host renders a plain pack's result."""
    return plain_text(payload(output))


# -- inputs ------------------------------------------------------------------------------------


@frozen(kw_only=True)
class IssueArgs:
    issueId: str = field(metadata=describe(_ISSUE))


@frozen(kw_only=True)
class StatusArgs:
    issueId: str = field(metadata=describe(_ISSUE))
    status: str = field(metadata=describe("The new state, e.g. 'In Progress'."))


@frozen(kw_only=True)
class CommentArgs:
    issueId: str = field(metadata=describe(_ISSUE))
    body: str = field(metadata=describe("The reply text (Slack mrkdwn)."))


@frozen(kw_only=True)
class WorkpadArgs:
    issueId: str = field(metadata=describe(_ISSUE))
    # A section left out keeps its text; null is refused, as it always was (hence the schema).
    plan: str | None = field(
        default=None, metadata=describe("The plan, e.g. a '- [ ] step' checklist.", schema=_STRING)
    )
    note: str | None = field(default=None, metadata=describe("A short progress note.", schema=_STRING))


@frozen(kw_only=True)
class ContextArgs:
    issueId: str = field(metadata=describe(_ISSUE))
    before: int = field(
        default=_CONTEXT_DEFAULT,
        metadata=describe(
            "How many messages up to and including the anchor: an integer >= 0, default 10, capped at 50.",
            schema=_NUMBER,
        ),
    )
    after: int = field(
        default=_CONTEXT_DEFAULT,
        metadata=describe(
            "How many messages after the anchor: an integer >= 0, default 10, capped at 50.", schema=_NUMBER
        ),
    )


@frozen(kw_only=True)
class UserArgs:
    userId: str = field(metadata=describe("The Slack user id, e.g. U0123ABC."))


def _query_meta(name: str) -> dict[str, Any]:
    schema = dict(_QUERY[name])
    return describe(schema.pop("description"), schema=schema)


@frozen(kw_only=True)
class QueryArgs:
    channels: list[str] | None = field(
        default=None,
        metadata=describe(
            "Slack channel ids to search, e.g. ['C0123456789']; kept only if configured (default: every "
            "configured channel).",
            schema={"type": "array", "items": {"type": "string"}},
        ),
    )
    where: dict[str, Any] | None = field(default=None, metadata=_query_meta("where"))
    select: list[str] | None = field(default=None, metadata=_query_meta("select"))
    order_by: list[dict[str, Any]] | None = field(default=None, metadata=_query_meta("order_by"))
    limit: float | None = field(default=None, metadata=_query_meta("limit"))
    offset: float | None = field(default=None, metadata=_query_meta("offset"))
    expand: list[str] | None = field(
        default=None,
        metadata=describe(
            "Extra data per row: 'thread' (every reply) and/or 'reactions'.",
            schema={"type": "array", "items": {"type": "string", "enum": list(EXPAND)}},
        ),
    )

    def envelope(self) -> dict[str, Any]:
        """The query envelope as given (for the DSL's parser)."""
        pairs = (("where", self.where), ("order_by", self.order_by), ("limit", self.limit), ("offset", self.offset))
        return {key: value for key, value in pairs if value is not None}


# -- readers: the pack's own wording, in its own order -------------------------------------------

_REFUSED_RECOVERY = "Fix the arguments as the message says and call the tool again."


def refused(raw: Any, exc: ArgumentError) -> ToolResult:
    """A reader's refusal in its own words, as the pack has always sent it (no ``invalid arguments
    for tool`` prefix), with the kit's reason."""
    return failure_result(str(exc), reason="invalid_arguments", recovery=_REFUSED_RECOVERY)


def _issue(raw: Mapping[str, Any]) -> str:
    issue = require_str(raw, "issueId")
    if split_issue_id(issue) is None:
        msg = "issueId must be in '<channel>:<ts>' form"
        raise ArgumentError(msg)
    return issue


def _count(raw: Mapping[str, Any], key: str) -> int:
    value = raw.get(key)
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


def read_issue(ctx: CallContext, raw: Mapping[str, Any]) -> IssueArgs:
    return IssueArgs(issueId=_issue(raw))


def read_status(ctx: CallContext, raw: Mapping[str, Any]) -> StatusArgs:
    issue = _issue(raw)
    return StatusArgs(issueId=issue, status=require_str(raw, "status"))


def read_comment(ctx: CallContext, raw: Mapping[str, Any]) -> CommentArgs:
    issue = _issue(raw)
    return CommentArgs(issueId=issue, body=require_str(raw, "body"))


def read_workpad(ctx: CallContext, raw: Mapping[str, Any]) -> WorkpadArgs:
    issue = _issue(raw)
    plan = optional_str(raw, "plan", strict=True)
    return WorkpadArgs(issueId=issue, plan=plan, note=optional_str(raw, "note", strict=True))


def read_context(ctx: CallContext, raw: Mapping[str, Any]) -> ContextArgs:
    issue = _issue(raw)
    before = _count(raw, "before")
    return ContextArgs(issueId=issue, before=before, after=_count(raw, "after"))


def _require_bot(ctx: CallContext) -> None:
    from .errors import slack_failure  # the transport: only a call that needs the bot
    from .trust import SlackTrustError, require_bot_user_id  # only a call that needs the bot

    try:
        require_bot_user_id(ctx.settings)
    except SlackTrustError as exc:
        raise slack_failure(exc, ctx.settings) from None


def read_user(ctx: CallContext, raw: Mapping[str, Any]) -> UserArgs:
    _require_bot(ctx)
    return UserArgs(userId=require_str(raw, "userId"))


def read_query(ctx: CallContext, raw: Mapping[str, Any]) -> QueryArgs:
    _require_bot(ctx)
    try:
        parse_query_spec(raw)
        select = parse_select(raw.get("select"))
        expand = _expand(raw.get("expand"))
        channels = raw.get("channels")
        if channels is not None:
            if not isinstance(channels, list):
                raise ArgumentError("channels must be an array of strings")
            check_list_argument("channels", channels)
            if not all(isinstance(c, str) for c in channels):
                raise ArgumentError("channels must be an array of strings")
    except QueryError as exc:
        raise ArgumentError(str(exc)) from None
    return QueryArgs(
        channels=channels,
        where=raw.get("where"),
        select=list(select) if select is not None else None,
        order_by=raw.get("order_by"),
        limit=raw.get("limit"),
        offset=raw.get("offset"),
        expand=expand,
    )


def _expand(raw: Any) -> list[str] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise ArgumentError("expand must be an array of 'thread' | 'reactions'")
    out: list[str] = []
    for item in raw:
        if item not in EXPAND:
            raise ArgumentError("expand items must be 'thread' or 'reactions'")
        if item not in out:
            out.append(item)
    return out


# -- outputs -----------------------------------------------------------------------------------


@frozen(kw_only=True)
class StatusOut:
    ok: bool = field(metadata=describe("Always true: the status reply was posted."))
    status: str = field(metadata=describe("The state as the workflow spells it, e.g. 'In Progress'."))


@frozen(kw_only=True)
class CommentOut:
    ok: bool = field(metadata=describe("Always true: the reply was posted in the thread."))


@frozen(kw_only=True)
class WorkpadOut:
    ok: bool = field(metadata=describe("Always true: the workpad holds the new text."))
    workpadTs: str = field(metadata=describe("The ts of the workpad message (the same on every update)."))


@frozen(kw_only=True)
class ThreadOut:
    issueId: str = field(metadata=describe("The issue id, '<channel>:<ts>'."))
    status: str = field(metadata=describe("The state folded from the thread."))
    statusEvents: list[dict[str, Json]] = field(metadata=describe("Every status change in the thread, oldest first."))
    text: str = field(metadata=describe("The source message's text."))
    request: dict[str, Json] | None = field(default=None, metadata=describe("The reply that asked the bot, if any."))
    workpad: dict[str, Json] | None = field(default=None, metadata=describe("The workpad (ts, plan, note), if any."))
    reactions: list[str] = field(metadata=describe("Reactions on the source message."))
    permalink: str | None = field(default=None, metadata=describe("A link to the source message, when known."))
    replies: list[dict[str, Json]] = field(metadata=describe("Every reply in the thread, oldest first."))


@frozen(kw_only=True)
class QueryOut:
    rows: list[dict[str, Json]] = field(metadata=describe("The matching rows, projected by 'select' and 'expand'."))
    total: int = field(metadata=describe("How many rows matched before 'limit' and 'offset'."))


@frozen(kw_only=True)
class UserOut:
    user: dict[str, Json] = field(metadata=describe("The profile: id, name, realName, displayName, isBot."))


@frozen(kw_only=True)
class ContextMessage:
    ts: str = field(metadata=describe("The message's ts."))
    user: str | None = field(default=None, metadata=describe("Who wrote it (absent for some bot posts)."))
    text: str = field(metadata=describe("The message text."))


@frozen(kw_only=True)
class ContextOut:
    anchor: str = field(metadata=describe("The issue id the window is around."))
    messages: list[ContextMessage] = field(metadata=describe("The channel's messages, oldest first."))
