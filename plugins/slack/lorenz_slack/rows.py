"""Slack Web API rows as the records of :mod:`.models`: history messages, thread replies, paging."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .ids import ts_sort_key
from .models import SlackMessage, SlackMetadata, SlackThreadReply

__all__ = ["next_cursor", "opt_str", "sort_messages", "to_message", "to_thread_reply"]


def opt_str(value: object) -> str | None:
    """``value`` when it is a string, else ``None``."""
    return value if isinstance(value, str) else None


def to_message(channel: str, raw: Mapping[str, Any], bot: str | None) -> SlackMessage:
    """A history row as a :class:`SlackMessage` (bot reactions: those whose ``users`` list the bot)."""
    user, subtype = opt_str(raw.get("user")), opt_str(raw.get("subtype"))
    reactions: list[str] = []
    bot_reactions: list[str] = []
    for reaction in raw.get("reactions") or ():
        if not isinstance(reaction, Mapping) or not isinstance(reaction.get("name"), str):
            continue
        reactions.append(reaction["name"])
        users = reaction.get("users")
        if bot is not None and isinstance(users, list) and bot in users:
            bot_reactions.append(reaction["name"])
    reply_count = raw.get("reply_count")
    return SlackMessage(
        channel=channel,
        ts=str(raw.get("ts")),
        text=opt_str(raw.get("text")) or "",
        user=user,
        subtype=subtype,
        is_bot=isinstance(raw.get("bot_id"), str) or subtype == "bot_message" or (bot is not None and user == bot),
        thread_ts=opt_str(raw.get("thread_ts")),
        reactions=reactions,
        bot_reactions=bot_reactions,
        reply_count=reply_count if isinstance(reply_count, int) and reply_count > 0 else None,
        latest_reply=opt_str(raw.get("latest_reply")),
    )


def to_thread_reply(raw: Mapping[str, Any]) -> SlackThreadReply:
    """A ``conversations.replies`` message as a :class:`SlackThreadReply`."""
    subtype = opt_str(raw.get("subtype"))
    return SlackThreadReply(
        ts=str(raw.get("ts")),
        text=opt_str(raw.get("text")) or "",
        user=opt_str(raw.get("user")),
        subtype=subtype,
        is_bot=isinstance(raw.get("bot_id"), str) or subtype == "bot_message",
        edited="edited" in raw,
        metadata=SlackMetadata.from_wire(raw.get("metadata")),
    )


def next_cursor(payload: Mapping[str, Any]) -> str | None:
    meta = payload.get("response_metadata")
    cursor = meta.get("next_cursor") if isinstance(meta, Mapping) else None
    return cursor if isinstance(cursor, str) and cursor else None


def sort_messages(messages: Sequence[SlackMessage]) -> list[SlackMessage]:
    return sorted(messages, key=lambda m: ts_sort_key(m.ts))
