"""The Slack transport contract: what the tracker client and the tool pack need from Slack.

:class:`~.web_transport.SlackWebTransport` is the Web API implementation,
:class:`~.memory.InMemorySlackTransport` the in-memory one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from .models import (
    SlackChannelScan,
    SlackMessage,
    SlackMetadata,
    SlackThreadPage,
    SlackThreadReply,
    SlackUser,
)

__all__ = ["SlackApiError", "SlackTransport", "SlackTransportError"]


class SlackTransportError(RuntimeError):
    """A Slack call failed. ``ambiguous`` means the request may have been applied anyway; ``status``
    is the HTTP status that ended the retries (429, 5xx) and ``retry_after`` its ``Retry-After`` in
    seconds, when Slack sent one; ``timed_out`` that no answer came in time."""

    def __init__(
        self,
        message: str,
        *,
        ambiguous: bool = False,
        status: int | None = None,
        retry_after: float | None = None,
        timed_out: bool = False,
    ) -> None:
        super().__init__(message)
        self.ambiguous = ambiguous
        self.status = status
        self.retry_after = retry_after
        self.timed_out = timed_out


class SlackApiError(SlackTransportError):
    """Slack answered ``ok: false``; ``code`` is its ``error`` string (or the HTTP status)."""

    def __init__(self, method: str, code: str) -> None:
        super().__init__(f"slack {method} failed: {code}")
        self.method = method
        self.code = code


class SlackTransport(Protocol):
    """What the tracker client and the tool pack need from Slack."""

    async def scan_channels(self, channels: Sequence[str]) -> SlackChannelScan: ...

    async def get_message(self, channel: str, ts: str) -> SlackMessage | None: ...

    async def team_url(self) -> str | None: ...

    async def get_thread(self, channel: str, ts: str) -> list[SlackThreadReply]: ...

    async def get_thread_page(
        self, channel: str, ts: str, *, after_ts: str = "0", limit: int = 200, cursor: str | None = None
    ) -> SlackThreadPage: ...

    async def get_user(self, user_id: str) -> SlackUser | None: ...

    async def list_around(self, channel: str, ts: str, *, before: int, after: int) -> list[SlackMessage]: ...

    async def get_permalink(self, channel: str, ts: str) -> str | None: ...

    async def add_reaction(self, channel: str, ts: str, name: str) -> None: ...

    async def remove_reaction(self, channel: str, ts: str, name: str) -> None: ...

    async def post_reply(
        self,
        channel: str,
        thread_ts: str,
        body: str,
        *,
        metadata: SlackMetadata | None = None,
        blocks: Sequence[Mapping[str, Any]] | None = None,
    ) -> str: ...

    async def update_message(
        self,
        channel: str,
        ts: str,
        body: str,
        *,
        metadata: SlackMetadata | None = None,
        blocks: Sequence[Mapping[str, Any]] | None = None,
    ) -> None: ...
