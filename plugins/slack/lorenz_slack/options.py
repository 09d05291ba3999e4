"""The ``slack`` tracker's options: parsing (``tracker.*`` keys), typed access and dispatch checks."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from attrs import field, frozen

from lorenz import (
    Settings,
    TrackerContext,
    reject_unknown_options,
    resolve_configured_secret,
    resolve_env_reference,
    string_list_option,
    string_option,
)

__all__ = [
    "CONFIG_ALIASES",
    "DEFAULT_EMOJI_STATES",
    "DEFAULT_ENDPOINT",
    "DEFAULT_MARKER_EMOJI",
    "ENV_FALLBACKS",
    "SlackOptions",
    "parse_slack_options",
    "project_url",
    "slack_endpoint",
    "slack_options",
    "status_emoji_map",
    "validate_slack_dispatch",
]

DEFAULT_ENDPOINT = "https://slack.com/api"
DEFAULT_MARKER_EMOJI = "robot_face"
DEFAULT_REPLY_LOOKBACK_DAYS = 2.0
DEFAULT_EMOJI_STATES: Mapping[str, str] = {"eyes": "In Progress", "white_check_mark": "Done", "x": "Cancelled"}
ENV_FALLBACKS: Mapping[str, str] = {"api_key": "SLACK_BOT_TOKEN"}
CONFIG_ALIASES: Mapping[str, str] = {
    "bot_user_id": "botUserId",
    "app_token": "appToken",
    "emoji_states": "emojiStates",
    "marker_emoji": "markerEmoji",
    "reply_lookback_days": "replyLookbackDays",
    "scan_lookback_days": "scanLookbackDays",
    "reconcile_interval_ms": "reconcileIntervalMs",
}
_KNOWN = ("channels", "users", *CONFIG_ALIASES.values())
_NUMBERS = ("replyLookbackDays", "scanLookbackDays", "reconcileIntervalMs")


@frozen(kw_only=True)
class SlackOptions:
    """Typed view of ``settings.tracker.options`` for the slack tracker."""

    channels: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    bot_user_id: str | None = None
    app_token: str | None = field(default=None, repr=False)
    emoji_states: Mapping[str, str] = field(factory=dict)
    marker_emoji: str = DEFAULT_MARKER_EMOJI
    reply_lookback_days: float = DEFAULT_REPLY_LOOKBACK_DAYS
    scan_lookback_days: float = 0.0
    reconcile_interval_ms: float = 900_000.0

    @property
    def bot(self) -> str | None:
        """The bot user id, or ``None`` when missing or blank."""
        return self.bot_user_id if self.bot_user_id and self.bot_user_id.strip() else None


def _id_list(options: Mapping[str, Any], key: str, env: Mapping[str, str]) -> list[str]:
    values = string_list_option(options, key) or []
    return [resolved for resolved in (resolve_env_reference(v, env) for v in values) if resolved]


def _secret(options: Mapping[str, Any], key: str, fallback_env: str, context: TrackerContext) -> str | None:
    value = string_option(options, key)
    if context.resolve_secret is not None:
        resolved = context.resolve_secret(value, fallback_env)
    else:
        resolved = resolve_configured_secret(value, context.env, fallback_env_name=fallback_env)
    return resolved or None


def _number(options: Mapping[str, Any], key: str) -> float | None:
    value = options.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        msg = f"tracker.{key} must be a non-negative number"
        raise ValueError(msg)
    return value


def _emoji_states(options: Mapping[str, Any]) -> dict[str, str] | None:
    value = options.get("emojiStates")
    if value is None:
        return None
    if not isinstance(value, Mapping):
        msg = "tracker.emoji_states must be a mapping of emoji name to state name"
        raise ValueError(msg)
    out: dict[str, str] = {}
    for emoji in sorted(value, key=str):
        state = value[emoji]
        if not isinstance(state, str):
            msg = f"tracker.emoji_states.{emoji} must be a string"
            raise ValueError(msg)
        out[str(emoji)] = state
    return out


def parse_slack_options(options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
    """Validate the provider options (already aliased to camelCase) into the stored bag.

    ``emojiStates`` is stored with sorted keys, so YAML key order never changes the options'
    identity; it is merged over :data:`DEFAULT_EMOJI_STATES` when used.
    """
    reject_unknown_options(options, _KNOWN, "slack")
    out: dict[str, Any] = {
        "channels": _id_list(options, "channels", context.env),
        "users": _id_list(options, "users", context.env),
    }
    bot = _secret(options, "botUserId", "SLACK_BOT_USER_ID", context)
    if bot is not None:
        out["botUserId"] = bot
    app_token = _secret(options, "appToken", "SLACK_APP_TOKEN", context)
    if app_token is not None:
        out["appToken"] = app_token
    emoji_states = _emoji_states(options)
    if emoji_states is not None:
        out["emojiStates"] = emoji_states
    marker = string_option(options, "markerEmoji")
    if marker is not None:
        out["markerEmoji"] = marker
    for key in _NUMBERS:
        number = _number(options, key)
        if number is not None:
            out[key] = number
    return out


def _str_tuple(value: object) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        return tuple(item for item in value if isinstance(item, str))
    return ()


def slack_options(settings: Settings) -> SlackOptions:
    """The typed options of these settings (defaults for anything absent)."""
    raw = settings.tracker.options or {}
    emoji = raw.get("emojiStates")
    marker = raw.get("markerEmoji")
    numbers = {key: raw.get(key) for key in _NUMBERS}
    bot = raw.get("botUserId")
    app_token = raw.get("appToken")
    return SlackOptions(
        channels=_str_tuple(raw.get("channels")),
        users=_str_tuple(raw.get("users")),
        bot_user_id=bot if isinstance(bot, str) else None,
        app_token=app_token if isinstance(app_token, str) and app_token else None,
        emoji_states=dict(emoji) if isinstance(emoji, Mapping) else {},
        marker_emoji=marker if isinstance(marker, str) and marker else DEFAULT_MARKER_EMOJI,
        reply_lookback_days=_float(numbers["replyLookbackDays"], DEFAULT_REPLY_LOOKBACK_DAYS),
        scan_lookback_days=_float(numbers["scanLookbackDays"], 0.0),
        reconcile_interval_ms=_float(numbers["reconcileIntervalMs"], 900_000.0),
    )


def _float(value: object, default: float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return default


def status_emoji_map(settings: Settings) -> dict[str, str]:
    """Emoji name → state name: the defaults, overridden and extended by ``emoji_states``.

    Iteration order is defaults first, so :func:`emoji_for_state` prefers a default emoji.
    """
    return {**DEFAULT_EMOJI_STATES, **slack_options(settings).emoji_states}


def slack_endpoint(settings: Settings) -> str:
    """The Web API base URL, trailing slashes stripped."""
    return (settings.tracker.endpoint or DEFAULT_ENDPOINT).rstrip("/")


def validate_slack_dispatch(settings: Settings) -> None:
    """Raise ``ValueError`` with the first reason this tracker cannot dispatch (five checks, in order)."""
    tracker = settings.tracker
    options = slack_options(settings)
    if not tracker.api_key:
        msg = "tracker.api_key (or SLACK_BOT_TOKEN) is required for the slack tracker"
        raise ValueError(msg)
    if tracker.assignee:
        msg = (
            "tracker.assignee is not supported by the slack tracker; remove it "
            "(slack issues have no assignee to filter on)"
        )
        raise ValueError(msg)
    if not options.channels:
        msg = "tracker.channels is required for the slack tracker"
        raise ValueError(msg)
    if options.bot is None:
        msg = (
            "tracker.bot_user_id (or SLACK_BOT_USER_ID) is required for the slack tracker so issue "
            "creation is scoped to the bot's own mentions; without it any human-to-human mention in a "
            "watched channel would spawn an agent"
        )
        raise ValueError(msg)
    if options.marker_emoji in status_emoji_map(settings):
        msg = f"tracker.marker_emoji '{options.marker_emoji}' must not also map to a workflow state"
        raise ValueError(msg)


def project_url(settings: Settings) -> str | None:
    """Slack's redirect to the first watched channel."""
    channels = slack_options(settings).channels
    if not channels:
        return None
    return f"https://slack.com/app_redirect?channel={quote(channels[0], safe='')}"
