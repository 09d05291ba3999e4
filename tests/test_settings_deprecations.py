"""Deprecated config shapes are reported, never rejected."""

from __future__ import annotations

from lorenz.settings import ConfigDeprecation, collect_config_deprecations, format_config_deprecation


def paths(raw: dict[str, object]) -> list[list[str]]:
    return [[entry.config_path, entry.replacement] for entry in collect_config_deprecations(raw)]


def test_flat_provider_keys_are_flagged() -> None:
    """Each provider key under a flat `tracker:` is one entry; core keys are not."""
    raw = {"tracker": {"kind": "linear", "api_key": "k", "project_slugs": ["a"], "active_states": ["Todo"]}}
    assert paths(raw) == [["tracker.project_slugs", "trackers.linear.project_slugs"]]


def test_detail_explains_the_bundle_shape() -> None:
    """The detail says the flat shape is deprecated."""
    (entry,) = collect_config_deprecations({"tracker": {"kind": "linear", "project_slug": "x"}})
    assert entry.detail is not None
    assert "flat shape) are deprecated" in entry.detail


def test_without_kind_the_bundle_is_named_placeholder() -> None:
    """Without a kind the replacement uses `<name>`; camelCase keys are reported in snake_case."""
    assert paths({"tracker": {"baseUrl": "https://x"}}) == [["tracker.base_url", "trackers.<name>.base_url"]]


def test_bundle_shapes_produce_none() -> None:
    """Selecting a bundle is the supported shape."""
    raw = {"tracker": {"kind": "p", "id_prefix": "X-"}, "trackers": {"p": {"provider": "local", "path": "b"}}}
    assert collect_config_deprecations(raw) == []
    assert collect_config_deprecations({}) == []
    assert collect_config_deprecations({"tracker": "not a map"}) == []


def test_format() -> None:
    """The message names the old and new keys, then the detail."""
    entry = ConfigDeprecation(config_path="codex.command", replacement="agents.codex.bridge_command", detail="Why.")
    assert (
        format_config_deprecation(entry)
        == "`codex.command` is deprecated; use `agents.codex.bridge_command` instead. Why."
    )
    bare = ConfigDeprecation(config_path="a", replacement="b")
    assert format_config_deprecation(bare) == "`a` is deprecated; use `b` instead."
