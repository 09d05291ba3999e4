"""The `tools:` map → `Settings.tool_options`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from lorenz.plugins.registry import TrackerRegistry
from lorenz.settings import ConfigError, Settings, parse_config


def parse(config: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Settings:
    return parse_config(config, env=env or {}, trackers=TrackerRegistry(), base_dir=Path())


@pytest.mark.parametrize("config", [{}, {"tools": {}}])
def test_missing_or_empty_tools_is_none(config: dict[str, Any]) -> None:
    """No `tools:` or `tools: {}` leaves tool_options None (item 75)."""
    assert parse(config).tool_options is None


def test_tools_are_deep_copied() -> None:
    """tool_options equals the input and later mutation of the config does not leak in (item 75)."""
    raw: dict[str, Any] = {"local": {"path": "/srv/pack-board", "id_prefix": "PACK-", "labels": ["a"]}}
    settings = parse({"tools": raw})
    assert settings.tool_options == {"local": {"path": "/srv/pack-board", "id_prefix": "PACK-", "labels": ["a"]}}
    raw["local"]["path"] = "/elsewhere"
    raw["local"]["labels"].append("b")
    raw["other"] = {}
    assert settings.tool_options == {"local": {"path": "/srv/pack-board", "id_prefix": "PACK-", "labels": ["a"]}}


def test_empty_pack_slice_is_kept() -> None:
    """`tools: {local: {}}` keeps the pack (it mounts it) with no options."""
    assert parse({"tools": {"local": {}}}).tool_options == {"local": {}}


def test_env_reference_resolves_and_is_recorded() -> None:
    """A `$VAR` string is resolved; secret-looking keys are recorded (item 76)."""
    settings = parse(
        {"tools": {"linear": {"api_key": "$PACK_KEY", "endpoint": "https://linear.example/graphql"}}},
        env={"PACK_KEY": "pack-secret"},
    )
    assert settings.tool_options == {"linear": {"api_key": "pack-secret", "endpoint": "https://linear.example/graphql"}}
    assert settings.secrets == frozenset({"pack-secret"})


def test_unresolved_and_empty_strings_are_dropped() -> None:
    """An unset `$VAR` and "" drop the key; other keys stay (item 76)."""
    settings = parse({"tools": {"linear": {"api_key": "$PACK_KEY", "path": "", "endpoint": "https://e.example"}}})
    assert settings.tool_options == {"linear": {"endpoint": "https://e.example"}}


def test_non_secret_keys_are_not_recorded() -> None:
    """A resolved non-secret value is not recorded for redaction."""
    settings = parse({"tools": {"local": {"path": "$BOARD"}}}, env={"BOARD": "/srv/board"})
    assert settings.tool_options == {"local": {"path": "/srv/board"}}
    assert settings.secrets == frozenset()


def test_nested_and_non_string_values_are_verbatim() -> None:
    """Nested strings are not resolved and non-strings are copied unchanged."""
    settings = parse({"tools": {"p": {"nested": {"token": "$T"}, "n": 5, "flag": False, "none": None}}}, env={"T": "x"})
    assert settings.tool_options == {"p": {"nested": {"token": "$T"}, "n": 5, "flag": False, "none": None}}


def test_no_provider_fallback_for_tools() -> None:
    """Provider env fallbacks never fill tool options."""
    settings = parse({"tools": {"linear": {"api_key": "$UNSET"}}}, env={"LINEAR_API_KEY": "k"})
    assert settings.tool_options == {"linear": {}}


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        ([], r"^tools must be a map$"),
        ("x", r"^tools must be a map$"),
        ({"local": "x"}, r"^tools\.local must be a map$"),
    ],
)
def test_shape_errors(tools: object, message: str) -> None:
    """`tools` and each pack slice must be maps."""
    with pytest.raises(ConfigError, match=message):
        parse({"tools": tools})


def test_a_pack_key_with_a_line_break_is_shown_escaped() -> None:
    """``tools: {"\\n": 1}`` names the key escaped, on one line."""
    with pytest.raises(ConfigError) as error:
        parse({"tools": {"\n": 1}})
    assert str(error.value) == 'tools."\\n" must be a map'
