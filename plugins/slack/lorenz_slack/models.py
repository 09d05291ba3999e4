"""The Slack records the transports hand out: history rows, thread replies, users, scans."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from attrs import field, frozen

__all__ = [
    "STATUS_METADATA_EVENT",
    "TRACKING_METADATA_EVENT",
    "WORKPAD_METADATA_EVENT",
    "SlackChannelScan",
    "SlackMessage",
    "SlackMetadata",
    "SlackThreadPage",
    "SlackThreadReply",
    "SlackUser",
]

STATUS_METADATA_EVENT = "lorenz_status"
TRACKING_METADATA_EVENT = "lorenz_tracking"
WORKPAD_METADATA_EVENT = "lorenz_workpad"


def _tuple(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


def _messages(value: Iterable[SlackMessage]) -> tuple[SlackMessage, ...]:
    return tuple(value)


def _replies(value: Iterable[SlackThreadReply]) -> tuple[SlackThreadReply, ...]:
    return tuple(value)


@frozen(kw_only=True)
class SlackMetadata:
    """Slack message metadata (``event_type`` + ``event_payload``)."""

    event_type: str
    payload: Mapping[str, Any] = field(factory=dict)

    def to_record(self) -> dict[str, Any]:
        return {"eventType": self.event_type, "payload": dict(self.payload)}

    def to_wire(self) -> dict[str, Any]:
        """The Web API form, ``{event_type, event_payload}``."""
        return {"event_type": self.event_type, "event_payload": dict(self.payload)}

    @classmethod
    def from_wire(cls, raw: object) -> SlackMetadata | None:
        if not isinstance(raw, Mapping):
            return None
        event_type, payload = raw.get("event_type"), raw.get("event_payload")
        if not isinstance(event_type, str) or not isinstance(payload, Mapping):
            return None
        return cls(event_type=event_type, payload=dict(payload))


@frozen(kw_only=True)
class SlackMessage:
    """A channel-history row (a thread root candidate).

    ``reactions`` lists every reaction name (any author); ``bot_reactions`` only those the bot
    itself added, which are the only ones that ever carry meaning.
    """

    channel: str
    ts: str
    text: str = ""
    user: str | None = None
    subtype: str | None = None
    is_bot: bool = False
    thread_ts: str | None = None
    reactions: tuple[str, ...] = field(default=(), converter=_tuple)
    bot_reactions: tuple[str, ...] = field(default=(), converter=_tuple)
    reply_count: int | None = None
    latest_reply: str | None = None

    def to_record(self) -> dict[str, Any]:
        """The camelCase form, absent optional fields left out."""
        out: dict[str, Any] = {"channel": self.channel, "ts": self.ts, "text": self.text}
        if self.subtype is not None:
            out["subtype"] = self.subtype
        if self.is_bot:
            out["isBot"] = True
        if self.thread_ts is not None:
            out["threadTs"] = self.thread_ts
        out["reactions"] = list(self.reactions)
        out["botReactions"] = list(self.bot_reactions)
        if self.user is not None:
            out["user"] = self.user
        if self.reply_count:
            out["replyCount"] = self.reply_count
        if self.latest_reply is not None:
            out["latestReply"] = self.latest_reply
        return out


@frozen(kw_only=True)
class SlackThreadReply:
    """One reply in a thread (the root excluded)."""

    ts: str
    text: str = ""
    user: str | None = None
    subtype: str | None = None
    is_bot: bool = False
    edited: bool = False
    metadata: SlackMetadata | None = None
    #: The text as first seen in this process; classification uses it so an edited ``!``
    #: command keeps its original meaning.
    first_seen_text: str | None = None
    deleted: bool = False

    def to_record(self) -> dict[str, Any]:
        """The camelCase form (``{ts, text, user?, subtype?, isBot?, edited?, metadata?}``)."""
        out: dict[str, Any] = {"ts": self.ts, "text": self.text}
        if self.user is not None:
            out["user"] = self.user
        if self.subtype is not None:
            out["subtype"] = self.subtype
        if self.is_bot:
            out["isBot"] = True
        if self.edited:
            out["edited"] = True
        if self.metadata is not None:
            out["metadata"] = self.metadata.to_record()
        return out


@frozen(kw_only=True)
class SlackThreadPage:
    replies: tuple[SlackThreadReply, ...] = field(default=(), converter=_replies)
    next_cursor: str | None = None


@frozen(kw_only=True)
class SlackUser:
    id: str
    name: str | None = None
    real_name: str | None = None
    display_name: str | None = None
    is_bot: bool | None = None

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id}
        for key, value in (
            ("name", self.name),
            ("realName", self.real_name),
            ("displayName", self.display_name),
            ("isBot", self.is_bot),
        ):
            if value is not None:
                out[key] = value
        return out


@frozen(kw_only=True)
class SlackChannelScan:
    """One scan of the watched channels: root requests, and other trackable roots with replies."""

    mentions: tuple[SlackMessage, ...] = field(default=(), converter=_messages)
    threaded_roots: tuple[SlackMessage, ...] = field(default=(), converter=_messages)
    #: History pages read beyond each channel's first (each one reported as progress), so a call's
    #: later progress counts on from them.
    extra_pages: int = 0
