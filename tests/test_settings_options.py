"""Provider option helpers."""

from __future__ import annotations

import pytest

from lorenz.settings import ConfigError
from lorenz.settings.options import reject_unknown_options, string_list_option, string_option


def test_reject_unknown_options_lists_keys_in_order() -> None:
    """Unknown keys are reported in input order with the kind."""
    with pytest.raises(
        ConfigError, match=r'^unsupported tracker option\(s\) for kind "memory": project_slug, surprise$'
    ):
        reject_unknown_options({"project_slug": 1, "ok": 2, "surprise": 3}, ["ok"], "memory")
    reject_unknown_options({"ok": 1}, ("ok", "other"), "memory")


def test_string_option() -> None:
    """Absent or null is None, a string is returned, anything else names the key."""
    assert string_option({}, "path") is None
    assert string_option({"path": None}, "path") is None
    assert string_option({"path": "/b"}, "path") == "/b"
    with pytest.raises(ConfigError, match=r"^tracker\.idPrefix must be a string$"):
        string_option({"idPrefix": 5}, "idPrefix")


def test_string_list_option() -> None:
    """A list of strings is copied; empty collapses to None; anything else names the key."""
    original = ["ENG", "OPS"]
    copied = string_list_option({"projectKeys": original}, "projectKeys")
    assert copied == ["ENG", "OPS"]
    assert copied is not original
    assert string_list_option({"projectKeys": []}, "projectKeys") is None
    assert string_list_option({"projectKeys": None}, "projectKeys") is None
    assert string_list_option({}, "projectKeys") is None
    for bad in ("ENG", ["ENG", 1], {"a": "b"}):
        with pytest.raises(ConfigError, match=r"^tracker\.projectKeys must be a list of strings$"):
            string_list_option({"projectKeys": bad}, "projectKeys")


def test_helper_errors_are_value_errors() -> None:
    """Providers may let these propagate: ConfigError is a ValueError."""
    with pytest.raises(ValueError, match="must be a string"):
        string_option({"k": 1}, "k")
