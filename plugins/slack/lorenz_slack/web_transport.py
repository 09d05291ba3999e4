"""The Slack transport over the Web API: channel scans, threads, users, reactions and replies.

:class:`~.web_api.SlackWebApi` makes each call; this class pages, reconciles and maps the answers.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from lorenz import Settings, redact_text, report_progress

from .models import (
    SlackChannelScan,
    SlackMessage,
    SlackMetadata,
    SlackThreadPage,
    SlackThreadReply,
    SlackUser,
)
from .options import slack_options
from .provenance import is_allowed_request_message, is_trackable_thread_root
from .rows import next_cursor, opt_str, sort_messages, to_message, to_thread_reply
from .sanitize import strip_broadcast_mentions
from .transport import SlackTransportError
from .web_api import Clock, SlackWebApi, Sleep

__all__ = ["SlackWebTransport", "clear_team_url_cache"]

_TEAM_URLS: dict[tuple[str, str], str] = {}
_TEAM_URL_CAP = 64


def clear_team_url_cache() -> None:
    """Forget every cached ``auth.test`` team URL."""
    _TEAM_URLS.clear()


class SlackWebTransport(SlackWebApi):
    """:class:`~.transport.SlackTransport` over the Slack Web API.

    ``http`` is the host's client; without one each request opens a short-lived client.
    ``sleep``/``now`` are injectable for tests; ``max_history_pages`` caps every paging loop.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        http: httpx.AsyncClient | None = None,
        sleep: Sleep | None = None,
        now: Clock | None = None,
        logger: logging.Logger | None = None,
        max_history_pages: int = 500,
    ) -> None:
        self._options = slack_options(settings)
        super().__init__(settings, http=http, sleep=sleep, now=now, logger=logger)
        self.max_history_pages = max_history_pages
        self._warned_no_bot = False

    # ------------------------------------------------------------------ reads

    async def scan_channels(self, channels: Sequence[str]) -> SlackChannelScan:
        """Root requests and other threaded roots of every channel, scanned concurrently.

        Fails closed without a bot user id. A channel that fails contributes nothing; all failing
        raises.
        """
        bot = self._options.bot
        if bot is None:
            if not self._warned_no_bot:
                self._warned_no_bot = True
                self._warn(
                    "slack tracker: bot_user_id (SLACK_BOT_USER_ID) is not set; refusing to scan mentions "
                    "(fail closed). Set tracker.bot_user_id so only the bot's own mentions create issues."
                )
            return SlackChannelScan()
        pages = [0]  # extra history pages across the channels scanned concurrently: one rising count
        outcomes = await asyncio.gather(*(self._scan_channel(c, bot, pages) for c in channels), return_exceptions=True)
        mentions: list[SlackMessage] = []
        threaded: list[SlackMessage] = []
        failures: list[str] = []
        for channel, outcome in zip(channels, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                if not isinstance(outcome, Exception):
                    raise outcome
                failures.append(f"{channel}: {outcome}")
                self._warn(
                    f"slack tracker: channel {channel} scan failed before completing; "
                    f"discarding its partial results this poll: {outcome}"
                )
                continue
            mentions.extend(outcome.mentions)
            threaded.extend(outcome.threaded_roots)
        if channels and len(failures) == len(channels):
            msg = f"slack conversations.history failed for all channels: {'; '.join(failures)}"
            raise SlackTransportError(redact_text(msg, self._secrets))
        return SlackChannelScan(mentions=mentions, threaded_roots=threaded, extra_pages=pages[0])

    def _oldest(self) -> str | None:
        days = self._options.scan_lookback_days
        if days <= 0:
            return None
        now_s = self._now() if self._now is not None else time.time()
        return str(int(now_s - days * 86400))

    async def _scan_channel(self, channel: str, bot: str, pages: list[int]) -> SlackChannelScan:
        mentions: list[SlackMessage] = []
        threaded: list[SlackMessage] = []
        params: dict[str, str] = {"channel": channel, "limit": "200"}
        oldest = self._oldest()
        if oldest is not None:
            params["oldest"] = oldest
        cursor: str | None = None
        for page in range(self.max_history_pages):
            page_params = dict(params) if cursor is None else {**params, "cursor": cursor}
            payload = await self.call("conversations.history", params=page_params)
            for raw in payload.get("messages") or ():
                if not isinstance(raw, Mapping) or not isinstance(raw.get("ts"), str):
                    continue
                message = to_message(channel, raw, bot)
                if not is_trackable_thread_root(message):
                    continue
                if is_allowed_request_message(message, bot, self._options.users, "root"):
                    mentions.append(message)
                elif message.reply_count:
                    threaded.append(message)
            cursor = next_cursor(payload)
            if cursor is None:
                break
            pages[0] += 1  # another page to read: say how far the scan got
            await report_progress(pages[0], None, f"reading page {page + 2} of {channel}'s history")
        else:
            self._warn(
                f"slack tracker: channel {channel} history scan hit the {self.max_history_pages}-page safety "
                "cap with more pages remaining; truncating scan. Older bot mentions in this channel may be "
                "missed this poll."
            )
        return SlackChannelScan(mentions=mentions, threaded_roots=threaded)

    async def get_message(self, channel: str, ts: str) -> SlackMessage | None:
        """The channel message at exactly ``ts`` (a point read of history), or ``None``."""
        payload = await self.call(
            "conversations.history",
            params={"channel": channel, "latest": ts, "inclusive": "true", "limit": "1"},
        )
        for raw in payload.get("messages") or ():
            if isinstance(raw, Mapping) and raw.get("ts") == ts:
                return to_message(channel, raw, self._options.bot)
        return None

    async def team_url(self) -> str | None:
        """The workspace URL from ``auth.test`` (cached per endpoint and token; failures not cached)."""
        key = (self._base, self._token)
        cached = _TEAM_URLS.get(key)
        if cached is not None:
            return cached
        try:
            payload = await self.call("auth.test", params={})
        except SlackTransportError:
            return None
        url = payload.get("url")
        url = url.rstrip("/") if isinstance(url, str) else ""
        if not url:
            return None
        if len(_TEAM_URLS) >= _TEAM_URL_CAP:
            _TEAM_URLS.clear()
        _TEAM_URLS[key] = url
        return url

    async def get_user(self, user_id: str) -> SlackUser | None:
        """A user's profile, or ``None`` for any error (unknown user included)."""
        try:
            payload = await self.call("users.info", params={"user": user_id})
        except SlackTransportError:
            return None
        raw = payload.get("user")
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str):
            return None
        profile = raw.get("profile")
        display = profile.get("display_name") if isinstance(profile, Mapping) else None
        is_bot = raw.get("is_bot")
        return SlackUser(
            id=raw["id"],
            name=opt_str(raw.get("name")),
            real_name=opt_str(raw.get("real_name")),
            display_name=display if isinstance(display, str) and display else None,
            is_bot=is_bot if isinstance(is_bot, bool) else None,
        )

    async def list_around(self, channel: str, ts: str, *, before: int, after: int) -> list[SlackMessage]:
        """Up to ``before`` messages ending at ``ts`` (inclusive) and ``after`` following it, ascending."""
        calls = []
        if before > 0:
            calls.append({"channel": channel, "latest": ts, "inclusive": "true", "limit": str(before)})
        if after > 0:
            calls.append({"channel": channel, "oldest": ts, "inclusive": "false", "limit": str(after)})
        payloads = await asyncio.gather(*(self.call("conversations.history", params=p) for p in calls))
        merged: dict[str, SlackMessage] = {}
        for payload in payloads:
            for raw in payload.get("messages") or ():
                if isinstance(raw, Mapping) and isinstance(raw.get("ts"), str):
                    merged[raw["ts"]] = to_message(channel, raw, self._options.bot)
        return sort_messages(list(merged.values()))

    async def get_thread_page(
        self, channel: str, ts: str, *, after_ts: str = "0", limit: int = 200, cursor: str | None = None
    ) -> SlackThreadPage:
        """One page of replies after ``after_ts`` (the root dropped), with Slack's next cursor."""
        params = {
            "channel": channel,
            "ts": ts,
            "oldest": after_ts,
            "inclusive": "false",
            "limit": str(min(max(limit, 1), 200)),
            "include_all_metadata": "true",
        }
        if cursor is not None:
            params["cursor"] = cursor
        payload = await self.call("conversations.replies", params=params)
        replies = [
            to_thread_reply(raw)
            for raw in payload.get("messages") or ()
            if isinstance(raw, Mapping) and isinstance(raw.get("ts"), str) and raw.get("ts") != ts
        ]
        return SlackThreadPage(replies=replies, next_cursor=next_cursor(payload))

    async def get_thread(self, channel: str, ts: str) -> list[SlackThreadReply]:
        """Every reply of a thread (root excluded, ascending), following cursors up to the page cap."""
        replies: list[SlackThreadReply] = []
        cursor: str | None = None
        for _page in range(self.max_history_pages):
            page = await self.get_thread_page(channel, ts, after_ts="0", limit=200, cursor=cursor)
            replies.extend(page.replies)
            cursor = page.next_cursor
            if cursor is None:
                return replies
        self._warn(
            f"slack tracker: thread {channel}:{ts} hit the {self.max_history_pages}-page safety cap with more "
            "replies remaining; returning a truncated thread."
        )
        return replies

    # ------------------------------------------------------------------ writes

    async def add_reaction(self, channel: str, ts: str, name: str) -> None:
        """Add the bot's reaction (already present counts as success)."""
        await self.call("reactions.add", body={"channel": channel, "timestamp": ts, "name": name})

    async def remove_reaction(self, channel: str, ts: str, name: str) -> None:
        """Remove the bot's reaction (already absent counts as success)."""
        await self.call("reactions.remove", body={"channel": channel, "timestamp": ts, "name": name})

    async def post_reply(
        self,
        channel: str,
        thread_ts: str,
        body: str,
        *,
        metadata: SlackMetadata | None = None,
        blocks: Sequence[Mapping[str, Any]] | None = None,
    ) -> str:
        """Post a sanitised thread reply; returns its ts.

        Never retried on an ambiguous outcome: when the post carried a metadata ``seq`` the thread
        is checked for it first (at-most-once delivery).
        """
        payload: dict[str, Any] = {"channel": channel, "thread_ts": thread_ts, "text": strip_broadcast_mentions(body)}
        if blocks is not None:
            payload["blocks"] = list(blocks)
        if metadata is not None:
            payload["metadata"] = metadata.to_wire()
        try:
            answer = await self.call("chat.postMessage", body=payload)
        except SlackTransportError as exc:
            seq = metadata.payload.get("seq") if metadata is not None else None
            if not exc.ambiguous or metadata is None or not isinstance(seq, str) or not seq:
                raise
            self._warn(
                f"slack chat.postMessage outcome unknown ({exc}); checking the metadata marker before surfacing failure"
            )
            found = await self._find_marker(channel, thread_ts, metadata.event_type, seq)
            if found is None:
                raise
            return found
        ts = answer.get("ts")
        return ts if isinstance(ts, str) else ""

    async def _find_marker(self, channel: str, thread_ts: str, event_type: str, seq: str) -> str | None:
        bot = self._options.bot
        cursor: str | None = None
        for _page in range(self.max_history_pages):
            page = await self.get_thread_page(channel, thread_ts, after_ts="0", limit=200, cursor=cursor)
            for reply in page.replies:
                md = reply.metadata
                if md is None or reply.user != bot:
                    continue
                if md.event_type == event_type and md.payload.get("seq") == seq:
                    return reply.ts
            cursor = page.next_cursor
            if cursor is None:
                return None
        msg = (
            f"slack conversations.replies reconciliation for {channel}:{thread_ts} hit the "
            f"{self.max_history_pages}-page safety cap with more replies remaining"
        )
        raise SlackTransportError(msg)

    async def update_message(
        self,
        channel: str,
        ts: str,
        body: str,
        *,
        metadata: SlackMetadata | None = None,
        blocks: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        """Edit a message in place (sanitised text)."""
        payload: dict[str, Any] = {"channel": channel, "ts": ts, "text": strip_broadcast_mentions(body)}
        if blocks is not None:
            payload["blocks"] = list(blocks)
        if metadata is not None:
            payload["metadata"] = metadata.to_wire()
        await self.call("chat.update", body=payload)

    async def get_permalink(self, channel: str, ts: str) -> str | None:
        """Slack's own permalink for a message (``chat.getPermalink``), or ``None`` on error."""
        try:
            payload = await self.call("chat.getPermalink", params={"channel": channel, "message_ts": ts})
        except SlackTransportError:
            return None
        link = payload.get("permalink")
        return link if isinstance(link, str) and link else None
