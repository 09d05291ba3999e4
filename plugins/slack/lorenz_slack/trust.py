"""The pack's trust boundary and the bot's bookkeeping replies (tracking record, reaction mirror)."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from attrs import evolve

from lorenz import Settings

from .fold import ThreadState, Tracking, observe_thread, state_from_thread
from .mapping import emoji_for_state, state_from_reactions
from .models import STATUS_METADATA_EVENT, TRACKING_METADATA_EVENT, SlackMessage, SlackMetadata
from .options import slack_options, status_emoji_map
from .provenance import is_allowed_author, is_request_message
from .transport import SlackTransport
from .workpad import make_metadata_seq

__all__ = [
    "TRACKING_TEXT",
    "SlackTrustError",
    "ensure_tracking_record",
    "mirror_status_reaction",
    "post_status",
    "read_thread_state",
    "require_bot_user_id",
    "require_tracked_message",
]

TRACKING_TEXT = "Lorenz tracking record."
_LOG = logging.getLogger("lorenz_slack")


class SlackTrustError(ValueError):
    """A tool or refresh addressed a message the tracker does not own. ``reason`` says which check
    refused it: ``bot_not_configured``, ``channel_not_configured``, ``issue_not_found``, ``not_tracked``."""

    def __init__(self, message: str, *, reason: str = "not_tracked") -> None:
        super().__init__(message)
        self.reason = reason


def require_bot_user_id(settings: Settings) -> str:
    """The bot id, or the error every slack tool reports without one."""
    bot = slack_options(settings).bot
    if bot is None:
        msg = "slack tools are unavailable: tracker.bot_user_id (or SLACK_BOT_USER_ID) is not configured"
        raise SlackTrustError(msg, reason="bot_not_configured")
    return bot


async def read_thread_state(settings: Settings, transport: SlackTransport, root: SlackMessage) -> ThreadState:
    """Read (unless the root has no replies) and fold a thread."""
    if not root.reply_count:
        return state_from_thread(root, [], settings)
    replies = await transport.get_thread(root.channel, root.ts)
    return state_from_thread(root, observe_thread(transport, root.channel, root.ts, replies), settings)


async def ensure_tracking_record(
    settings: Settings, transport: SlackTransport, root: SlackMessage, thread: ThreadState | None = None
) -> Tracking | None:
    """The thread's tracking record, posting one when it has none and the thread is a request."""
    if thread is None:
        thread = await read_thread_state(settings, transport, root)
    if thread.tracking is not None:
        return thread.tracking
    bot = require_bot_user_id(settings)
    payload: dict[str, Any]
    if is_request_message(root, bot, "root"):
        tracking = Tracking(origin="root")
        payload = {"origin": "root"}
    elif thread.request is not None:
        tracking = Tracking(origin="reply", request_ts=thread.request.ts)
        payload = {"origin": "reply", "request_ts": thread.request.ts}
    else:
        return None
    payload["seq"] = make_metadata_seq()
    metadata = SlackMetadata(event_type=TRACKING_METADATA_EVENT, payload=payload)
    await transport.post_reply(root.channel, root.ts, TRACKING_TEXT, metadata=metadata)
    return tracking


async def post_status(
    transport: SlackTransport, channel: str, ts: str, state: str, *, actor: str | None = None, text: str | None = None
) -> str:
    """Post the bot's authoritative ``status: <State>`` reply with status metadata."""
    payload: dict[str, Any] = {"issue": f"{channel}:{ts}", "state": state, "seq": make_metadata_seq()}
    if actor is not None:
        payload["actor"] = actor
    metadata = SlackMetadata(event_type=STATUS_METADATA_EVENT, payload=payload)
    return await transport.post_reply(channel, ts, text or f"status: {state}", metadata=metadata)


async def mirror_status_reaction(
    settings: Settings, transport: SlackTransport, channel: str, ts: str, state: str, observed: tuple[str, ...]
) -> None:
    """Make the bot's reactions show ``state``: marker on, stale status emoji off, target on.

    Best-effort: every step's error is logged and swallowed. Only emoji actually observed are
    removed.
    """
    emoji_map = status_emoji_map(settings)
    marker = slack_options(settings).marker_emoji
    target = emoji_for_state(state, emoji_map)
    steps: list[tuple[str, str]] = []
    if marker not in observed:
        steps.append(("add", marker))
    steps.extend(("remove", emoji) for emoji in observed if emoji in emoji_map and emoji != target)
    if target is not None:
        steps.append(("add", target))
    for action, emoji in steps:
        try:
            if action == "add":
                await transport.add_reaction(channel, ts, emoji)
            else:
                await transport.remove_reaction(channel, ts, emoji)
        except Exception as exc:
            _LOG.warning("slack reaction mirror %s %s on %s:%s failed: %s", action, emoji, channel, ts, exc)


async def _migrate(settings: Settings, transport: SlackTransport, root: SlackMessage) -> SlackMessage:
    # A root tracked before thread status existed carries only a status reaction: record its
    # state in the thread once so the fold (not the reaction) owns it from now on.
    marker = slack_options(settings).marker_emoji
    with contextlib.suppress(Exception):
        thread = await read_thread_state(settings, transport, root)
        await ensure_tracking_record(settings, transport, root, thread)
        if not thread.events:
            state = state_from_reactions(root.bot_reactions, status_emoji_map(settings), settings)
            await post_status(transport, root.channel, root.ts, state)
        await transport.add_reaction(root.channel, root.ts, marker)
        refreshed = await transport.get_message(root.channel, root.ts)
        if refreshed is not None:
            return refreshed
        return evolve(
            root,
            bot_reactions=(*root.bot_reactions, marker),
            reactions=tuple(dict.fromkeys((*root.reactions, marker))),
        )
    return root


async def require_tracked_message(settings: Settings, transport: SlackTransport, channel: str, ts: str) -> SlackMessage:
    """The root at ``channel:ts`` if it is an issue this tracker owns; raises :class:`SlackTrustError`."""
    bot = require_bot_user_id(settings)
    options = slack_options(settings)
    if channel not in options.channels:
        msg = f"channel '{channel}' is not a configured tracker channel"
        raise SlackTrustError(msg, reason="channel_not_configured")
    root = await transport.get_message(channel, ts)
    if root is None:
        msg = f"no tracked issue at {channel}:{ts}"
        raise SlackTrustError(msg, reason="issue_not_found")
    if is_request_message(root, bot, "root"):
        if is_allowed_author(root.user, options.users) or options.marker_emoji in root.bot_reactions:
            return root
        emoji_map = status_emoji_map(settings)
        if any(emoji in emoji_map for emoji in root.bot_reactions):
            return await _migrate(settings, transport, root)
    if root.reply_count:
        thread = await read_thread_state(settings, transport, root)
        if thread.request is not None:
            return root
    msg = "message is not a tracked bot-mention issue"
    raise SlackTrustError(msg)
