"""Request provenance: which messages count as a human asking the bot for something."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from .models import SlackMessage, SlackThreadReply

__all__ = [
    "is_allowed_author",
    "is_allowed_request_message",
    "is_bot_mention",
    "is_request_message",
    "is_trackable_thread_root",
    "strip_leading_mention",
]

Origin = Literal["root", "reply"]
_ROOT_SUBTYPES = frozenset({"file_share", "me_message", "bot_message"})
_REQUEST_SUBTYPES = frozenset({"file_share", "me_message"})
_ANY_MENTION = r"<@[A-Z0-9_]+(?:\|[^>]*)?>"


def _mention_pattern(bot: str | None) -> str:
    return _ANY_MENTION if not bot else rf"<@{re.escape(bot)}(?:\|[^>]*)?>"


def is_bot_mention(text: str, bot: str | None) -> bool:
    """Does ``text`` mention the bot anywhere (any user mention when no bot id is known)?"""
    return re.search(_mention_pattern(bot), text) is not None


def strip_leading_mention(text: str, bot: str | None) -> str:
    """Remove one leading bot mention (any user mention without a bot id) and the space after it."""
    return re.sub(rf"^{_mention_pattern(bot)}\s*", "", text, count=1)


def is_trackable_thread_root(message: SlackMessage) -> bool:
    """A root (not a reply or broadcast row) of a kind a person or integration posts."""
    if message.thread_ts is not None and message.thread_ts != message.ts:
        return False
    return message.subtype is None or message.subtype in _ROOT_SUBTYPES


def is_request_message(
    message: SlackMessage | SlackThreadReply, bot: str | None, origin: Origin, *, text: str | None = None
) -> bool:
    """A human's message that mentions the bot: never a system, bot, self or unknown-author post.

    ``text`` overrides the message text (first-seen classification of replies).
    """
    if not is_bot_mention(message.text if text is None else text, bot):
        return False
    if message.user is None or message.is_bot or (bot is not None and message.user == bot):
        return False
    if origin == "root" and isinstance(message, SlackMessage) and not is_trackable_thread_root(message):
        return False
    if message.subtype is None or message.subtype in _REQUEST_SUBTYPES:
        return True
    return message.subtype == "thread_broadcast" and origin == "reply"


def is_allowed_author(user: str | None, allowed: Sequence[str]) -> bool:
    """An empty allow-list allows everyone; otherwise the author must be listed."""
    return not allowed or (user is not None and user in allowed)


def is_allowed_request_message(
    message: SlackMessage | SlackThreadReply, bot: str | None, allowed: Sequence[str], origin: Origin
) -> bool:
    """A request from an allowed author."""
    return is_request_message(message, bot, origin) and is_allowed_author(message.user, allowed)
