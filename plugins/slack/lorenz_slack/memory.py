"""An in-memory :class:`~lorenz_slack.transport.SlackTransport`: the test double for the tracker
client and the tool pack (no network)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from attrs import evolve, field, frozen

from .ids import permalink, ts_sort_key
from .models import (
    SlackChannelScan,
    SlackMessage,
    SlackMetadata,
    SlackThreadPage,
    SlackThreadReply,
    SlackUser,
)
from .provenance import is_allowed_request_message, is_trackable_thread_root
from .sanitize import strip_broadcast_mentions

__all__ = ["InMemorySlackTransport", "PostedReply", "SeedMessage"]


def _names(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _replies(value: Iterable[SlackThreadReply]) -> tuple[SlackThreadReply, ...]:
    return tuple(value)


@frozen(kw_only=True)
class SeedMessage:
    """A root to seed: ``reactions`` are the bot's own, ``human_reactions`` anyone else's."""

    ts: str
    text: str
    user: str | None = None
    subtype: str | None = None
    is_bot: bool = False
    thread_ts: str | None = None
    reactions: tuple[str, ...] = field(default=(), converter=_names)
    human_reactions: tuple[str, ...] = field(default=(), converter=_names)
    replies: tuple[SlackThreadReply, ...] = field(default=(), converter=_replies)


@frozen(kw_only=True)
class PostedReply:
    channel: str
    thread_ts: str
    body: str


class _Root:
    def __init__(self, channel: str, seed: SeedMessage) -> None:
        self.channel = channel
        self.ts = seed.ts
        self.text = seed.text
        self.user = seed.user
        self.subtype = seed.subtype
        self.is_bot = seed.is_bot
        self.thread_ts = seed.thread_ts
        self.bot_reactions = list(dict.fromkeys(seed.reactions))
        self.human_reactions = list(dict.fromkeys(seed.human_reactions))
        self.replies = list(seed.replies)

    def snapshot(self) -> SlackMessage:
        return SlackMessage(
            channel=self.channel,
            ts=self.ts,
            text=self.text,
            user=self.user,
            subtype=self.subtype,
            is_bot=self.is_bot,
            thread_ts=self.thread_ts,
            reactions=list(dict.fromkeys([*self.bot_reactions, *self.human_reactions])),
            bot_reactions=list(self.bot_reactions),
            reply_count=len(self.replies) or None,
            latest_reply=self.replies[-1].ts if self.replies else None,
        )


def _bump(ts: str) -> str:
    """``ts`` plus one microsecond, formatted ``<sec>.<6 digits>``."""
    seconds, _, fraction = ts.partition(".")
    micros = int(seconds or "0") * 1_000_000 + int((fraction + "000000")[:6])
    micros += 1
    return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"


class InMemorySlackTransport:
    """Channels of seeded roots and threads; records every post for assertions.

    Scans use the transport's own ``bot_user_id``/``allowed_users`` (no bot id: any user mention
    counts).
    """

    def __init__(
        self,
        seed: Mapping[str, Sequence[SeedMessage]],
        *,
        bot_user_id: str | None = None,
        allowed_users: Sequence[str] = (),
        users: Mapping[str, SlackUser] | None = None,
        team_url: str | None = "https://example.slack.com",
    ) -> None:
        self._channels: dict[str, list[_Root]] = {
            channel: [_Root(channel, message) for message in messages] for channel, messages in seed.items()
        }
        self.bot_user_id = bot_user_id
        self.allowed_users = tuple(allowed_users)
        self.users = dict(users or {})
        self._team_url = team_url
        self.replies: list[PostedReply] = []
        self.reaction_calls: list[tuple[str, str, str, str]] = []
        self.scan_calls = 0
        self.get_message_calls = 0

    def _root(self, channel: str, ts: str) -> _Root | None:
        for root in self._channels.get(channel, ()):
            if root.ts == ts:
                return root
        return None

    async def scan_channels(self, channels: Sequence[str]) -> SlackChannelScan:
        self.scan_calls += 1
        mentions: list[SlackMessage] = []
        threaded: list[SlackMessage] = []
        for channel in channels:
            for root in self._channels.get(channel, ()):
                message = root.snapshot()
                if not is_trackable_thread_root(message):
                    continue
                if is_allowed_request_message(message, self.bot_user_id, self.allowed_users, "root"):
                    mentions.append(message)
                elif root.replies:
                    threaded.append(message)
        return SlackChannelScan(mentions=mentions, threaded_roots=threaded)

    async def get_message(self, channel: str, ts: str) -> SlackMessage | None:
        self.get_message_calls += 1
        root = self._root(channel, ts)
        return root.snapshot() if root is not None else None

    async def team_url(self) -> str | None:
        return self._team_url

    async def get_thread(self, channel: str, ts: str) -> list[SlackThreadReply]:
        root = self._root(channel, ts)
        return list(root.replies) if root is not None else []

    async def get_thread_page(
        self, channel: str, ts: str, *, after_ts: str = "0", limit: int = 200, cursor: str | None = None
    ) -> SlackThreadPage:
        offset = 0
        if cursor is not None:
            if not cursor.isdigit():
                msg = f"invalid in-memory Slack thread cursor: {cursor}"
                raise ValueError(msg)
            offset = int(cursor)
        replies = sorted(
            (r for r in await self.get_thread(channel, ts) if float(r.ts) > float(after_ts)),
            key=lambda r: ts_sort_key(r.ts),
        )
        end = offset + max(limit, 1)
        return SlackThreadPage(replies=replies[offset:end], next_cursor=str(end) if end < len(replies) else None)

    async def get_user(self, user_id: str) -> SlackUser | None:
        return self.users.get(user_id)

    async def list_around(self, channel: str, ts: str, *, before: int, after: int) -> list[SlackMessage]:
        ordered = sorted(self._channels.get(channel, ()), key=lambda r: ts_sort_key(r.ts))
        index = next((i for i, root in enumerate(ordered) if root.ts == ts), None)
        if index is None:
            return []
        start, end = max(0, index - before + 1), min(len(ordered), index + 1 + after)
        return [root.snapshot() for root in ordered[start:end]]

    async def get_permalink(self, channel: str, ts: str) -> str | None:
        return permalink(self._team_url, channel, ts) if self._team_url and self._root(channel, ts) else None

    async def add_reaction(self, channel: str, ts: str, name: str) -> None:
        self.reaction_calls.append(("add", channel, ts, name))
        root = self._root(channel, ts)
        if root is not None and name not in root.bot_reactions:
            root.bot_reactions.append(name)

    async def remove_reaction(self, channel: str, ts: str, name: str) -> None:
        self.reaction_calls.append(("remove", channel, ts, name))
        root = self._root(channel, ts)
        if root is not None and name in root.bot_reactions:
            root.bot_reactions.remove(name)

    async def post_reply(
        self,
        channel: str,
        thread_ts: str,
        body: str,
        *,
        metadata: SlackMetadata | None = None,
        blocks: Sequence[Mapping[str, Any]] | None = None,
    ) -> str:
        text = strip_broadcast_mentions(body)
        self.replies.append(PostedReply(channel=channel, thread_ts=thread_ts, body=text))
        root = self._root(channel, thread_ts)
        latest = max([thread_ts, *(r.ts for r in root.replies)] if root is not None else [thread_ts], key=ts_sort_key)
        ts = _bump(latest)
        if root is not None:
            root.replies.append(SlackThreadReply(ts=ts, text=text, user=self.bot_user_id, metadata=metadata))
        return ts

    async def update_message(
        self,
        channel: str,
        ts: str,
        body: str,
        *,
        metadata: SlackMetadata | None = None,
        blocks: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        text = strip_broadcast_mentions(body)
        root = self._root(channel, ts)
        if root is not None:
            root.text = text
            return
        for candidate in self._channels.get(channel, ()):
            for index, reply in enumerate(candidate.replies):
                if reply.ts == ts:
                    changes: dict[str, Any] = {"text": text}
                    if metadata is not None:
                        changes["metadata"] = metadata
                    candidate.replies[index] = evolve(reply, **changes)
                    return
        msg = "slack chat.update failed: message_not_found"
        raise RuntimeError(msg)

    def edit_root(self, channel: str, ts: str, text: str) -> None:
        """Change a root's text as a human edit would (test helper)."""
        root = self._root(channel, ts)
        if root is not None:
            root.text = text

    def edit_reply(self, channel: str, root_ts: str, reply_ts: str, text: str) -> None:
        """Change a reply's text as a human edit would (test helper)."""
        root = self._root(channel, root_ts)
        if root is None:
            return
        for index, reply in enumerate(root.replies):
            if reply.ts == reply_ts:
                root.replies[index] = evolve(reply, text=text, edited=True)
