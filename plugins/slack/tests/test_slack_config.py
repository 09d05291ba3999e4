"""The slack tracker's options, defaults, aliases and dispatch validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lorenz import ConfigError, ToolRegistry, TrackerRegistry
from lorenz.testing import check_pack_settings, parse_config, validate_dispatch_config
from lorenz_slack.options import slack_options, status_emoji_map
from lorenz_slack.plugin import PACK, TRACKER

ENV = {"SLACK_BOT_TOKEN": "xoxb-test"}


def _registries() -> tuple[TrackerRegistry, ToolRegistry]:
    trackers, tools = TrackerRegistry(), ToolRegistry()
    trackers.register(TRACKER)
    tools.register(PACK)
    return trackers, tools


def parse(tracker: dict[str, Any], env: dict[str, str] | None = None, tools: dict[str, Any] | None = None) -> Any:
    config: dict[str, Any] = {"tracker": {"kind": "slack", **tracker}}
    if tools is not None:
        config["tools"] = tools
    return parse_config(config, env=ENV if env is None else env, trackers=_registries()[0], base_dir=Path.cwd())


def validate(settings: Any) -> None:
    trackers, tools = _registries()
    validate_dispatch_config(settings, trackers, tools)


def test_defaults_endpoint_token_channels_and_emoji_states() -> None:
    """A flat config gets the default endpoint, the env bot token, its channels and its emoji map."""
    settings = parse({"channels": ["C1", "C2"], "emoji_states": {"rocket": "Shipped"}, "bot_user_id": "U1"})
    assert settings.tracker.kind == "slack"
    assert settings.tracker.endpoint == "https://slack.com/api"
    assert settings.tracker.api_key == "xoxb-test"
    assert settings.tracker.options["channels"] == ["C1", "C2"]
    assert settings.tracker.options["emojiStates"] == {"rocket": "Shipped"}
    assert status_emoji_map(settings)["rocket"] == "Shipped"
    assert status_emoji_map(settings)["eyes"] == "In Progress"
    assert "xoxb-test" in settings.secrets


@pytest.mark.parametrize(
    ("value", "env", "expected"),
    [
        ("U_EXPLICIT", {}, "U_EXPLICIT"),
        (None, {"SLACK_BOT_USER_ID": "U_ENV"}, "U_ENV"),
        ("$SLACK_BOT_USER_ID", {"SLACK_BOT_USER_ID": "U_REF"}, "U_REF"),
        (None, {}, None),
    ],
)
def test_bot_user_id_resolution(value: str | None, env: dict[str, str], expected: str | None) -> None:
    """bot_user_id is explicit, a $VAR reference, or falls back to SLACK_BOT_USER_ID."""
    tracker: dict[str, Any] = {"channels": ["C1"]}
    if value is not None:
        tracker["bot_user_id"] = value
    settings = parse(tracker, {**ENV, **env})
    assert slack_options(settings).bot_user_id == expected


@pytest.mark.parametrize(
    ("value", "env", "expected"),
    [
        ("xapp-explicit", {}, "xapp-explicit"),
        (None, {"SLACK_APP_TOKEN": "xapp-env"}, "xapp-env"),
        ("$SLACK_APP_TOKEN", {"SLACK_APP_TOKEN": "xapp-ref"}, "xapp-ref"),
        (None, {}, None),
        (None, {"SLACK_APP_TOKEN": ""}, None),
    ],
)
def test_app_token_resolution(value: str | None, env: dict[str, str], expected: str | None) -> None:
    """app_token is explicit, a $VAR reference, the SLACK_APP_TOKEN fallback, or absent when empty."""
    tracker: dict[str, Any] = {"channels": ["C1"]}
    if value is not None:
        tracker["app_token"] = value
    assert slack_options(parse(tracker, {**ENV, **env})).app_token == expected


def test_scan_lookback_days_is_kept() -> None:
    """scan_lookback_days is stored as scanLookbackDays."""
    assert parse({"channels": ["C1"], "scan_lookback_days": 14}).tracker.options["scanLookbackDays"] == 14


@pytest.mark.parametrize(
    ("tracker", "message"),
    [
        ({"channels": ["C1"], "bogus": True}, 'unsupported tracker option(s) for kind "slack": bogus'),
        ({"channels": ["C1"], "emoji_states": {"rocket": 7}}, "tracker.emoji_states.rocket must be a string"),
        ({"channels": ["C1"], "emoji_states": ["rocket"]}, "tracker.emoji_states must be a mapping"),
        ({"channels": ["C1"], "reply_lookback_days": -1}, "tracker.replyLookbackDays must be a non-negative number"),
        ({"channels": "C1"}, "tracker.channels must be a list of strings"),
    ],
)
def test_option_errors(tracker: dict[str, Any], message: str) -> None:
    """Bad provider options fail parsing with the exact message."""
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(tracker)


def test_channel_and_user_references_resolve_and_drop_empties() -> None:
    """$VAR channel/user entries resolve; unresolved ones are dropped (and then channels are required)."""
    settings = parse(
        {"channels": ["$SLACK_CHANNEL_ID", "C2"], "users": ["$SLACK_USER_ID"], "bot_user_id": "U1"},
        {**ENV, "SLACK_CHANNEL_ID": "C1", "SLACK_USER_ID": "U_REF"},
    )
    assert slack_options(settings).channels == ("C1", "C2")
    assert slack_options(settings).users == ("U_REF",)
    unresolved = parse({"channels": ["$SLACK_CHANNEL_ID"], "users": ["$NOPE"], "bot_user_id": "U1"})
    assert slack_options(unresolved).channels == ()
    assert slack_options(unresolved).users == ()
    with pytest.raises(ConfigError, match="channels is required"):
        validate(unresolved)


def test_emoji_states_key_order_does_not_change_options() -> None:
    """emoji_states is stored with sorted keys, so YAML order never changes the options identity."""
    a = parse({"channels": ["C1"], "emoji_states": {"rocket": "Shipped", "wrench": "Rework"}})
    b = parse({"channels": ["C1"], "emoji_states": {"wrench": "Rework", "rocket": "Shipped"}})
    assert json.dumps(a.tracker.options) == json.dumps(b.tracker.options)
    assert list(a.tracker.options["emojiStates"]) == ["rocket", "wrench"]


@pytest.mark.parametrize(
    ("tracker", "env", "message"),
    [
        ({"channels": ["C1"], "bot_user_id": "U1"}, {}, "tracker.api_key (or SLACK_BOT_TOKEN) is required"),
        (
            {"channels": ["C1"], "bot_user_id": "U1", "assignee": "me"},
            ENV,
            "tracker.assignee is not supported by the slack tracker",
        ),
        ({"bot_user_id": "U1"}, ENV, "tracker.channels is required for the slack tracker"),
        (
            {"channels": ["C1"]},
            {**ENV, "SLACK_BOT_USER_ID": ""},
            "tracker.bot_user_id (or SLACK_BOT_USER_ID) is required",
        ),
        (
            {"channels": ["C1"], "bot_user_id": "U1", "marker_emoji": "eyes"},
            ENV,
            "tracker.marker_emoji 'eyes' must not also map to a workflow state",
        ),
    ],
)
def test_dispatch_validation_messages(tracker: dict[str, Any], env: dict[str, str], message: str) -> None:
    """validate_dispatch reports token, assignee, channels, bot id and marker problems, in that order."""
    settings = parse(tracker, env)
    with pytest.raises(ConfigError) as info:
        validate(settings)
    assert str(info.value).startswith(message)


def test_valid_dispatch_and_dm_channel() -> None:
    """A DM channel id with a bot id from the env validates; the project URL names the first channel."""
    settings = parse({"channels": ["D0123456789"]}, {**ENV, "SLACK_BOT_USER_ID": "U_ENV"})
    validate(settings)
    assert TRACKER.project_url(settings) == "https://slack.com/app_redirect?channel=D0123456789"
    assert TRACKER.default_tool_packs(settings) == ["slack"]


def test_tools_slack_accepts_no_keys() -> None:
    """Any key under tools.slack fails startup: the pack has no options."""
    settings = parse({"channels": ["C1"], "bot_user_id": "U1"}, tools={"slack": {"x": 1}})
    with pytest.raises(ConfigError, match='tools.slack is not supported by the "slack" pack'):
        validate(settings)


def test_pack_check_settings_needs_a_slack_tracker() -> None:
    """The pack's token and channels are the slack tracker's: beside another tracker it cannot work."""
    assert PACK.check_settings(parse({"channels": ["C1"], "bot_user_id": "U1"})) == []
    beside = parse_config(
        {"tracker": {"kind": "local"}, "tools": {"slack": {}}}, env=ENV, trackers=TrackerRegistry(), base_dir=Path()
    )
    assert check_pack_settings(beside, [PACK]) == [
        "pack slack: reads tracker.api_key, tracker.channels from a slack tracker, but tracker.kind is local"
    ]
