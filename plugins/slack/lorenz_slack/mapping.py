"""Mapping thread roots to query rows and normalised issues; reaction-derived state."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from lorenz import Issue, Settings, default_state_type, normalize_issue

from .ids import created_at, issue_id, issue_identifier, permalink
from .models import SlackMessage
from .options import status_emoji_map
from .provenance import strip_leading_mention

__all__ = [
    "SlackRequest",
    "derive_labels",
    "emoji_for_state",
    "first_active_state",
    "is_terminal_state",
    "slack_message_to_issue",
    "slack_message_to_row",
    "slack_title",
    "state_from_reactions",
]

_TOKEN = re.compile(r"<[^>]*>")
_HASHTAG = re.compile(r"(?:^|(?<=\s))#([a-z0-9][a-z0-9_-]*)", re.IGNORECASE)
_RANKS = {"canceled": 4, "completed": 3, "started": 2, "backlog": 1, "unstarted": 1, "triage": 1}


@frozen(kw_only=True)
class SlackRequest:
    """The reply that asked the bot, for a thread tracked from a reply mention."""

    ts: str
    text: str
    user: str | None = None

    def to_record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ts": self.ts, "text": self.text}
        if self.user is not None:
            out["user"] = self.user
        return out


def derive_labels(text: str) -> list[str]:
    """``#tags`` that start a word, lower-cased and de-duplicated; Slack ``<…>`` tokens ignored."""
    plain = _TOKEN.sub(" ", text)
    labels: list[str] = []
    for match in _HASHTAG.finditer(plain):
        label = match.group(1).lower()
        if label not in labels:
            labels.append(label)
    return labels


def _lower(states: Sequence[str]) -> set[str]:
    return {state.strip().lower() for state in states}


def is_terminal_state(state: str, settings: Settings) -> bool:
    """Configured terminal, or a default ``completed``/``canceled`` name."""
    if state.strip().lower() in _lower(settings.tracker.terminal_states):
        return True
    return default_state_type(state) in ("completed", "canceled")


def first_active_state(settings: Settings) -> str:
    """The state a reopened issue returns to."""
    active = settings.tracker.active_states
    return active[0] if active else "Todo"


def _rank(state: str, settings: Settings) -> int:
    state_type = default_state_type(state)
    if state_type is not None:
        return _RANKS[state_type]
    lowered = state.strip().lower()
    if lowered in _lower(settings.tracker.terminal_states):
        return 3
    if lowered in _lower(settings.tracker.active_states):
        return 2
    return 0


def state_from_reactions(reactions: Sequence[str], emoji_map: Mapping[str, str], settings: Settings) -> str:
    """The highest-ranked mapped state (cancelled > done > started > todo; ties: earliest), else Todo."""
    best: tuple[int, str] | None = None
    for name in reactions:
        state = emoji_map.get(name)
        if state is None:
            continue
        rank = _rank(state, settings)
        if best is None or rank > best[0]:
            best = (rank, state)
    return best[1] if best is not None else "Todo"


def emoji_for_state(state: str, emoji_map: Mapping[str, str]) -> str | None:
    """The first emoji (defaults first) mapped to ``state``, compared case-insensitively."""
    wanted = state.strip().lower()
    for emoji, mapped in emoji_map.items():
        if mapped.strip().lower() == wanted:
            return emoji
    return None


def slack_title(root: SlackMessage, bot: str | None, request: SlackRequest | None = None) -> str:
    """First line of the request (or root) text without the leading bot mention; the ts if empty."""
    text = request.text if request is not None else root.text
    first = text.split("\n", 1)[0].strip()
    title = strip_leading_mention(first, bot).strip()
    return title or root.ts


def slack_message_to_row(
    root: SlackMessage,
    settings: Settings,
    *,
    bot: str | None,
    team_url: str | None = None,
    state: str | None = None,
    request: SlackRequest | None = None,
) -> dict[str, Any]:
    """The ``slack_query`` row of a tracked root."""
    if state is None:
        state = state_from_reactions(root.bot_reactions, status_emoji_map(settings), settings)
    label_text = root.text if request is None else f"{root.text}\n{request.text}"
    row: dict[str, Any] = {
        "issueId": issue_id(root.channel, root.ts),
        "channel": root.channel,
        "ts": root.ts,
        "title": slack_title(root, bot, request),
        "state": state,
        "stateType": default_state_type(state) or "backlog",
        "labels": derive_labels(label_text),
        "text": root.text,
        "reactions": list(root.reactions),
    }
    if team_url:
        row["url"] = permalink(team_url, root.channel, root.ts)
    return row


def slack_message_to_issue(
    root: SlackMessage,
    settings: Settings,
    *,
    bot: str | None,
    state: str,
    team_url: str | None = None,
    request: SlackRequest | None = None,
) -> Issue:
    """The normalised :class:`~lorenz.Issue` of a tracked root."""
    row = slack_message_to_row(root, settings, bot=bot, team_url=team_url, state=state, request=request)
    description = root.text if request is None else f"{request.text}\n\n(thread root) {root.text}"
    record: dict[str, Any] = {
        "id": row["issueId"],
        "identifier": issue_identifier(root.channel, root.ts),
        "title": row["title"],
        "description": description,
        "state": state,
        "state_type": row["stateType"],
        "labels": row["labels"],
        "issue_event_cursor": request.ts if request is not None else "0",
        "created_at": created_at(root.ts),
        "raw": root.to_record(),
    }
    if "url" in row:
        record["url"] = row["url"]
    return normalize_issue(record)
