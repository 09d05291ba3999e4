"""``server.catalog`` (issue 43): the budget a caller's tools/list fits, validated like every section."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from lorenz.plugins.registry import TrackerRegistry
from lorenz.settings import ConfigError, Settings, parse_config
from lorenz.settings.model import CatalogSettings


def _parse(catalog: Any) -> Settings:
    config: Mapping[str, Any] = {"tracker": {"kind": "local"}, "server": {"catalog": catalog}}
    return parse_config(config, env={}, trackers=TrackerRegistry(), base_dir=Path())


def test_a_catalog_section_is_read() -> None:
    settings = _parse({"budget_tokens": 4000, "pinned": ["local_*"], "search": False})
    assert settings.server.catalog == CatalogSettings(budget_tokens=4000, pinned=("local_*",), search=False)
    assert _parse({"maxTools": 12}).server.catalog == CatalogSettings(max_tools=12)


def test_no_catalog_section_serves_every_tool() -> None:
    config: Mapping[str, Any] = {"tracker": {"kind": "local"}}
    assert parse_config(config, env={}, trackers=TrackerRegistry(), base_dir=Path()).server.catalog is None


@pytest.mark.parametrize(
    ("catalog", "message"),
    [
        (
            {"budget_token": 10},
            'server.catalog contains unsupported keys: budget_token (did you mean "budget_tokens"?)',
        ),
        ({"max_tools": 5, "pined": ["a"]}, 'server.catalog contains unsupported keys: pined (did you mean "pinned"?)'),
        ({"budget_tokens": 0}, "server.catalog.budget_tokens must be a positive integer"),
        ({"max_tools": "10"}, "server.catalog.max_tools must be a positive integer"),
        ({"max_tools": 5, "search": "yes"}, "server.catalog.search must be a boolean"),
        ({"max_tools": 5, "pinned": [""]}, "server.catalog.pinned.0 must be a tool name or glob, not empty"),
        (
            {"pinned": ["a"]},
            "server.catalog must set budget_tokens, max_tools or both: the budget each caller's list fits",
        ),
        ("small", "server.catalog must be a map"),
    ],
)
def test_a_bad_catalog_section_names_the_key(catalog: Any, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        _parse(catalog)
    assert str(info.value) == message
