"""Deprecated config shapes: warnings, never errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import frozen

from ._kinds import camel_to_snake, normalize_aliases
from .tracker import CORE_TRACKER_KEYS

__all__ = ["FLAT_TRACKER_DETAIL", "ConfigDeprecation", "collect_config_deprecations", "format_config_deprecation"]

FLAT_TRACKER_DETAIL = (
    "Provider options under `tracker` (flat shape) are deprecated; move them into a `trackers.<name>` "
    "bundle with `provider:` selected by `tracker.kind`."
)


@frozen(kw_only=True)
class ConfigDeprecation:
    """One deprecated key and what to write instead."""

    config_path: str
    replacement: str
    detail: str | None = None


def collect_config_deprecations(raw: Mapping[str, Any]) -> list[ConfigDeprecation]:
    """Deprecated keys in a raw workflow config, in order; malformed sections yield nothing.

    Provider options placed directly under ``tracker:`` (the flat shape) should move into a
    ``trackers.<name>`` bundle.
    """
    selector = raw.get("tracker")
    bundles = raw.get("trackers")
    if not isinstance(selector, Mapping):
        return []
    bundles = bundles if isinstance(bundles, Mapping) else {}
    kind = selector.get("kind")
    kind = kind.strip() if isinstance(kind, str) else ""
    if kind and kind in bundles:
        return []
    name = kind or "<name>"
    found: list[ConfigDeprecation] = []
    for key in normalize_aliases(selector, CORE_TRACKER_KEYS):
        if key in CORE_TRACKER_KEYS:
            continue
        snake = camel_to_snake(str(key))
        found.append(
            ConfigDeprecation(
                config_path=f"tracker.{snake}",
                replacement=f"trackers.{name}.{snake}",
                detail=FLAT_TRACKER_DETAIL,
            )
        )
    return found


def format_config_deprecation(deprecation: ConfigDeprecation) -> str:
    """```<path>` is deprecated; use `<replacement>` instead.`` plus the detail, if any."""
    text = f"`{deprecation.config_path}` is deprecated; use `{deprecation.replacement}` instead."
    return f"{text} {deprecation.detail}" if deprecation.detail else text
