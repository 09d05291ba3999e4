"""The runtime client the daemon polls: tracked Slack threads as normalised issues."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from attrs import evolve

from lorenz import Issue, Settings

from .fold import ThreadState, observe_thread, state_from_thread
from .ids import issue_id, split_issue_id
from .mapping import emoji_for_state, slack_message_to_issue
from .models import SlackChannelScan, SlackMessage
from .options import slack_options, status_emoji_map
from .provenance import is_allowed_author, is_request_message
from .transport import SlackTransport
from .trust import ensure_tracking_record, mirror_status_reaction, require_tracked_message

__all__ = ["SCAN_CACHE_TTL", "SlackTrackerClient"]

SCAN_CACHE_TTL = 10.0
_CACHE_CAP = 5000
_LOG = logging.getLogger("lorenz_slack")


class SlackTrackerClient:
    """Polls the watched channels for tracked threads; status comes from each thread's fold.

    Writes it makes on its own: a tracking record and the marker reaction once a thread is
    authoritative, and (in the background, serialized) the reaction mirror of each new state.
    """

    def __init__(
        self,
        settings: Settings,
        transport: SlackTransport,
        *,
        now: Callable[[], float] | None = None,
    ) -> None:
        self._settings = settings
        self.transport = transport
        self._options = slack_options(settings)
        self._emoji_map = status_emoji_map(settings)
        self._now = now or time.monotonic
        wall = time.time() if now is None else now()
        self._reply_floor = wall - self._options.reply_lookback_days * 86400
        self._scan: tuple[float, tuple[str, ...], SlackChannelScan] | None = None
        self._threads: dict[str, tuple[tuple[Any, ...], ThreadState]] = {}
        self._mirrored: dict[str, str] = {}
        self._heal_tail: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ polling

    async def fetch_candidate_issues(self) -> list[Issue]:
        """Tracked issues in the active states."""
        return await self.fetch_issues_by_states(self._settings.tracker.active_states)

    async def fetch_issues_by_states(self, states: Sequence[str]) -> list[Issue]:
        """Tracked issues whose state is one of ``states`` (case-insensitive)."""
        wanted = {state.strip().lower() for state in states}
        scan = await self._scan_cached()
        team_url = await self.transport.team_url()
        issues = await self._tracked_issues(scan, team_url)
        return [issue for issue in issues if issue.state.strip().lower() in wanted]

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        """The tracked issues with these ids, in the requested order (always a fresh scan)."""
        wanted = [value for value in ids if split_issue_id(value) is not None]
        if not wanted:
            return []
        scan = await self._scan_cached(force=True)
        team_url = await self.transport.team_url()
        index = {issue_id(root.channel, root.ts): root for root in self._tracked_roots(scan)}
        bot, marker = self._options.bot, self._options.marker_emoji
        out: list[Issue] = []
        for value in wanted:
            root = index.get(value)
            if root is None:
                channel, ts = split_issue_id(value) or ("", "")
                try:
                    root = await require_tracked_message(self._settings, self.transport, channel, ts)
                except Exception as exc:
                    _LOG.debug("slack refresh skipped %s: %s", value, exc)
                    continue
            thread = await self._thread_state(root)
            is_root_request = is_request_message(root, bot, "root")
            vouched = (
                is_allowed_author(root.user, self._options.users)
                or marker in root.bot_reactions
                or any(emoji in self._emoji_map for emoji in root.bot_reactions)
            )
            if (is_root_request and vouched) or thread.request is not None:
                out.append(self._issue(root, thread, team_url))
        return out

    async def acknowledge_issue_receipt(self, issue: Issue) -> bool:
        """Put the marker reaction on the issue's root (its state stays as it is)."""
        parts = split_issue_id(issue.id)
        if parts is None:
            msg = f"invalid Slack issue id '{issue.id}'"
            raise ValueError(msg)
        await self.transport.add_reaction(parts[0], parts[1], self._options.marker_emoji)
        return True

    async def flush_status_mirror_heals(self) -> None:
        """Wait for every queued reaction-mirror heal."""
        while self._heal_tail is not None and not self._heal_tail.done():
            with contextlib.suppress(Exception):
                await self._heal_tail

    async def aclose(self) -> None:
        """Finish background work (the reaction mirror queue)."""
        await self.flush_status_mirror_heals()

    # ------------------------------------------------------------------ internals

    async def _scan_cached(self, *, force: bool = False) -> SlackChannelScan:
        channels = self._options.channels
        cached = self._scan
        if not force and cached is not None and cached[1] == channels and self._now() - cached[0] < SCAN_CACHE_TTL:
            return cached[2]
        scan = await self.transport.scan_channels(channels)
        self._scan = (self._now(), channels, scan)
        return scan

    def _tracked_roots(self, scan: SlackChannelScan) -> list[SlackMessage]:
        marker = self._options.marker_emoji
        return [*scan.mentions, *(root for root in scan.threaded_roots if marker in root.bot_reactions)]

    async def _thread_state(self, root: SlackMessage) -> ThreadState:
        if not root.reply_count:
            return state_from_thread(root, [], self._settings)
        key = issue_id(root.channel, root.ts)
        signature = (root.text, root.latest_reply, root.reply_count, tuple(sorted(root.bot_reactions)))
        cached = self._threads.get(key)
        if cached is not None and cached[0] == signature:
            return cached[1]
        replies = await self.transport.get_thread(root.channel, root.ts)
        observed = observe_thread(self.transport, root.channel, root.ts, replies)
        state = state_from_thread(root, observed, self._settings)
        if len(self._threads) >= _CACHE_CAP:
            self._threads.clear()
        self._threads[key] = (signature, state)
        return state

    def _issue(self, root: SlackMessage, thread: ThreadState, team_url: str | None) -> Issue:
        return slack_message_to_issue(
            root,
            self._settings,
            bot=self._options.bot,
            state=thread.state,
            team_url=team_url,
            request=thread.request,
        )

    async def _tracked_issues(self, scan: SlackChannelScan, team_url: str | None) -> list[Issue]:
        bot, marker = self._options.bot, self._options.marker_emoji
        roots = self._tracked_roots(scan)
        for root in scan.threaded_roots:
            if marker in root.bot_reactions or root.latest_reply is None:
                continue
            try:
                fresh = float(root.latest_reply) > self._reply_floor
            except ValueError:
                continue
            if fresh and (await self._thread_state(root)).request is not None:
                roots.append(root)
        issues: list[Issue] = []
        for root in roots:
            is_root_request = is_request_message(root, bot, "root")
            marked = marker in root.bot_reactions
            if is_root_request and not marked and not is_allowed_author(root.user, self._options.users):
                continue
            thread = await self._thread_state(root)
            if not is_root_request and thread.request is None:
                continue
            if thread.request is not None or thread.events:
                root = await self._record_tracking(root, thread, marked)
            self._schedule_heal(root, thread.state)
            issues.append(self._issue(root, thread, team_url))
        return issues

    async def _record_tracking(self, root: SlackMessage, thread: ThreadState, marked: bool) -> SlackMessage:
        tracking = thread.tracking
        if tracking is None:
            try:
                tracking = await ensure_tracking_record(self._settings, self.transport, root, thread)
            except Exception as exc:  # retried next poll
                _LOG.warning("slack tracking record for %s:%s failed: %s", root.channel, root.ts, exc)
                return root
            # The thread and the scan changed under us: read both afresh next time.
            self._threads.pop(issue_id(root.channel, root.ts), None)
            self._scan = None
        if tracking is None or marked:
            return root
        marker = self._options.marker_emoji
        self._scan = None
        try:
            await self.transport.add_reaction(root.channel, root.ts, marker)
        except Exception as exc:
            _LOG.warning("slack marker reaction for %s:%s failed: %s", root.channel, root.ts, exc)
            return root
        return evolve(
            root,
            bot_reactions=(*root.bot_reactions, marker),
            reactions=tuple(dict.fromkeys((*root.reactions, marker))),
        )

    def _schedule_heal(self, root: SlackMessage, state: str) -> None:
        key = issue_id(root.channel, root.ts)
        if self._mirrored.get(key) == state:
            return
        target = emoji_for_state(state, self._emoji_map)
        observed = tuple(root.bot_reactions)
        stale = any(emoji in self._emoji_map and emoji != target for emoji in observed)
        missing = target is not None and target not in observed
        if len(self._mirrored) >= _CACHE_CAP:
            self._mirrored.clear()
        self._mirrored[key] = state
        if not (stale or missing):
            return

        async def heal() -> None:
            try:
                await mirror_status_reaction(self._settings, self.transport, root.channel, root.ts, state, observed)
            except Exception:
                self._mirrored.pop(key, None)
                raise

        self._enqueue(heal)

    def _enqueue(self, job: Callable[[], Coroutine[Any, Any, None]]) -> None:
        previous = self._heal_tail

        async def run() -> None:
            if previous is not None:
                with contextlib.suppress(Exception):
                    await previous
            try:
                await job()
            except Exception as exc:
                _LOG.warning("slack reaction mirror heal failed: %s", exc)

        self._heal_tail = asyncio.get_running_loop().create_task(run())
