"""The thread fold: an issue's status comes from the bot's ``status:`` replies in its thread.

Reactions are only a visible mirror. Humans steer with ``@bot !done``-style commands; a bare
re-mention reopens a finished issue.
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from attrs import evolve, field, frozen

from lorenz import Settings

from .ids import ts_sort_key
from .mapping import SlackRequest, first_active_state, is_terminal_state, state_from_reactions
from .models import (
    STATUS_METADATA_EVENT,
    TRACKING_METADATA_EVENT,
    WORKPAD_METADATA_EVENT,
    SlackMessage,
    SlackThreadReply,
)
from .options import slack_options, status_emoji_map
from .provenance import is_allowed_author, is_request_message, is_trackable_thread_root, strip_leading_mention

__all__ = [
    "BOT_STATUS_PREFIX",
    "STANDARD_STATES",
    "StatusEvent",
    "ThreadState",
    "Tracking",
    "Workpad",
    "is_aside_text",
    "observe_thread",
    "parse_status_command",
    "resolve_state_name",
    "sort_replies",
    "state_from_thread",
]

BOT_STATUS_PREFIX = "status:"
STANDARD_STATES = ("Todo", "In Progress", "Done", "Cancelled")
_BOT_STATUS = re.compile(r"^status:\s*(.+?)\s*$", re.IGNORECASE)
_STATUS_COMMAND = re.compile(r"^status:?\s+(.+)$", re.IGNORECASE)
_ASIDE = re.compile(r"^!aside(?:\s|$)", re.IGNORECASE)
_FIRST_SEEN_CAP = 10_000


@frozen(kw_only=True)
class StatusEvent:
    """One status change in the thread's audit trail."""

    ts: str
    state: str
    actor: str | None = None

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ts": self.ts, "state": self.state}
        if self.actor is not None:
            out["actor"] = self.actor
        return out


@frozen(kw_only=True)
class Tracking:
    """The bot's tracking record: how the thread became an issue."""

    origin: Literal["root", "reply"]
    request_ts: str | None = None


@frozen(kw_only=True)
class Workpad:
    """The bot's in-place workpad message."""

    ts: str
    plan: str | None = None
    note: str | None = None

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ts": self.ts}
        if self.plan is not None:
            out["plan"] = self.plan
        if self.note is not None:
            out["note"] = self.note
        return out


def _events(value: Iterable[StatusEvent]) -> tuple[StatusEvent, ...]:
    return tuple(value)


@frozen(kw_only=True)
class ThreadState:
    """A folded thread: its state, status audit trail, request, tracking record and workpad."""

    state: str
    events: tuple[StatusEvent, ...] = field(default=(), converter=_events)
    request: SlackRequest | None = None
    tracking: Tracking | None = None
    workpad: Workpad | None = None


def resolve_state_name(name: object, settings: Settings) -> str | None:
    """The configured casing of a state name (active, terminal, then the standard four)."""
    if not isinstance(name, str) or not name.strip():
        return None
    wanted = name.strip().lower()
    pool = (*settings.tracker.active_states, *settings.tracker.terminal_states, *STANDARD_STATES)
    for state in pool:
        if state.strip().lower() == wanted:
            return state
    return None


_KEYWORDS: tuple[tuple[frozenset[str], str | None], ...] = (
    (frozenset({"done", "complete", "completed", "finished"}), "Done"),
    (frozenset({"cancel", "cancelled", "canceled", "stop"}), "Cancelled"),
    (frozenset({"reopen", "rework", "retry"}), None),
    (frozenset({"in progress", "start", "started", "wip"}), "In Progress"),
    (frozenset({"todo", "backlog"}), "Todo"),
)


def parse_status_command(text: str, bot: str | None, settings: Settings) -> str | None:
    """The state a ``@bot !<command>`` reply asks for, or ``None`` (the mention must lead)."""
    trimmed = text.strip()
    rest = strip_leading_mention(trimmed, bot)
    if rest == trimmed:
        return None
    first = rest.split("\n", 1)[0].strip()
    if not first.startswith("!"):
        return None
    body = first[1:].strip().rstrip(".!?").strip()
    match = _STATUS_COMMAND.match(body)
    if match is not None:
        return resolve_state_name(match.group(1), settings)
    lowered = body.lower()
    for words, target in _KEYWORDS:
        if lowered in words:
            if target is None:
                return first_active_state(settings)
            return resolve_state_name(target, settings) or target
    return None


def is_aside_text(text: str, bot: str | None) -> bool:
    """``!aside …`` (optionally after the bot mention): context for the agent, never a status input."""
    rest = strip_leading_mention(text.strip(), bot)
    return _ASIDE.match(rest.split("\n", 1)[0].strip()) is not None


def sort_replies(replies: Sequence[SlackThreadReply]) -> list[SlackThreadReply]:
    """Replies in exact timestamp order (stable; invalid timestamps last)."""

    def key(reply: SlackThreadReply) -> tuple[int, tuple[int, str, str]]:
        try:
            return 0, ts_sort_key(reply.ts)
        except ValueError:
            return 1, (0, "", "")

    return sorted(replies, key=key)


def _tracking(reply: SlackThreadReply) -> Tracking | None:
    payload = reply.metadata.payload if reply.metadata is not None else {}
    origin = payload.get("origin")
    if origin == "root":
        return Tracking(origin="root")
    request_ts = payload.get("request_ts")
    if origin == "reply" and isinstance(request_ts, str) and request_ts:
        return Tracking(origin="reply", request_ts=request_ts)
    return None


def _workpad(reply: SlackThreadReply) -> Workpad:
    payload: Mapping[str, Any] = reply.metadata.payload if reply.metadata is not None else {}
    plan, note = payload.get("plan"), payload.get("note")
    return Workpad(
        ts=reply.ts, plan=plan if isinstance(plan, str) else None, note=note if isinstance(note, str) else None
    )


def _bot_status(reply: SlackThreadReply, text: str, bot: str, settings: Settings) -> StatusEvent | None:
    metadata = reply.metadata
    if metadata is not None and metadata.event_type == STATUS_METADATA_EVENT:
        state = resolve_state_name(metadata.payload.get("state"), settings)
        if state is not None:
            actor = metadata.payload.get("actor")
            return StatusEvent(ts=reply.ts, state=state, actor=actor if isinstance(actor, str) else bot)
    match = _BOT_STATUS.match(text.strip())
    if match is not None:
        state = resolve_state_name(match.group(1), settings)
        if state is not None:
            return StatusEvent(ts=reply.ts, state=state, actor=bot)
    return None


def state_from_thread(root: SlackMessage, replies: Sequence[SlackThreadReply], settings: Settings) -> ThreadState:
    """Fold a thread into its state, audit trail, request, tracking record and workpad."""
    options = slack_options(settings)
    bot, users, marker = options.bot, options.users, options.marker_emoji
    ordered = sort_replies(replies)
    root_is_mention = is_request_message(root, bot, "root")
    root_can_anchor = is_trackable_thread_root(root)
    tracking: Tracking | None = None
    if bot is not None:
        for reply in ordered:
            event_type = reply.metadata.event_type if reply.metadata is not None else None
            if reply.user == bot and event_type == TRACKING_METADATA_EVENT:
                tracking = _tracking(reply)
                break
    marked = marker in root.bot_reactions
    marker_records_reply_origin = not root_is_mention and root_can_anchor and tracking is None and marked
    seeking_request = root_can_anchor and not root_is_mention and (tracking is None or tracking.origin != "root")

    inputs: list[tuple[StatusEvent, bool]] = []  # (event, is_explicit_status)
    request: SlackRequest | None = None
    workpad: Workpad | None = None
    for reply in ordered:
        text = reply.first_seen_text if reply.first_seen_text is not None else reply.text
        if bot is not None and reply.user == bot:
            event_type = reply.metadata.event_type if reply.metadata is not None else None
            if event_type == TRACKING_METADATA_EVENT:
                continue
            if event_type == WORKPAD_METADATA_EVENT:
                workpad = _workpad(reply)
                continue
            event = _bot_status(reply, text, bot, settings)
            if event is not None:
                inputs.append((event, True))
            continue
        if not is_request_message(reply, bot, "reply", text=text) or is_aside_text(text, bot):
            continue
        command = parse_status_command(text, bot, settings)
        if seeking_request and request is None:
            seen_status = any(explicit for _, explicit in inputs)
            if (
                (tracking is not None and tracking.origin == "reply" and tracking.request_ts == reply.ts)
                or (marker_records_reply_origin and command is None and not seen_status)
                or (tracking is None and not marked and command is None and is_allowed_author(reply.user, users))
            ):
                request = SlackRequest(ts=reply.ts, text=reply.text, user=reply.user)
            continue
        if command is not None:
            inputs.append((StatusEvent(ts=reply.ts, state=command, actor=reply.user), True))
        else:
            inputs.append((StatusEvent(ts=reply.ts, state="", actor=reply.user), False))

    if root_is_mention:
        state = (
            first_active_state(settings)
            if marked
            else state_from_reactions(root.bot_reactions, status_emoji_map(settings), settings)
        )
    else:
        state = "Todo"
    any_status = any(explicit for _, explicit in inputs)
    seen_status = False
    events: list[StatusEvent] = []
    for event, explicit in inputs:
        if explicit:
            state = event.state
            seen_status = True
            events.append(event)
        elif (seen_status or not any_status) and is_terminal_state(state, settings):
            state = first_active_state(settings)
            events.append(evolve(event, state=state))
    return ThreadState(state=state, events=events, request=request, tracking=tracking, workpad=workpad)


_first_seen: weakref.WeakKeyDictionary[object, dict[str, str]] = weakref.WeakKeyDictionary()


def observe_thread(
    transport: object, channel: str, root_ts: str, replies: Sequence[SlackThreadReply]
) -> list[SlackThreadReply]:
    """Attach the first text this transport saw for each reply, so edits never change a command."""
    try:
        ledger = _first_seen.setdefault(transport, {})
    except TypeError:  # not weak-referenceable: no ledger
        return list(replies)
    out: list[SlackThreadReply] = []
    for reply in replies:
        key = f"{channel}:{root_ts}:{reply.ts}"
        seen = ledger.get(key)
        if seen is None:
            if len(ledger) >= _FIRST_SEEN_CAP:
                ledger.clear()
            seen = reply.first_seen_text if reply.first_seen_text is not None else reply.text
            ledger[key] = seen
        out.append(reply if reply.first_seen_text is not None else evolve(reply, first_seen_text=seen))
    return out
