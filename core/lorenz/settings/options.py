"""Helpers a tracker's ``parse_options`` uses to validate its provider options.

Keys are printed as the provider sees them, after its ``config_aliases`` ran (``tracker.idPrefix``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ConfigError

__all__ = ["reject_unknown_options", "string_list_option", "string_option"]


def reject_unknown_options(options: Mapping[str, Any], known: Iterable[str], kind: str) -> None:
    """Raise ``unsupported tracker option(s) for kind "<kind>": a, b`` for keys not in ``known``."""
    allowed = set(known)
    unknown = [key for key in options if key not in allowed]
    if unknown:
        msg = f'unsupported tracker option(s) for kind "{kind}": {", ".join(unknown)}'
        raise ConfigError(msg)


def string_option(options: Mapping[str, Any], key: str) -> str | None:
    """The string at ``key``; ``None`` when absent or null, else ``tracker.<key> must be a string``."""
    value = options.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        msg = f"tracker.{key} must be a string"
        raise ConfigError(msg)
    return value


def string_list_option(options: Mapping[str, Any], key: str) -> list[str] | None:
    """A copy of the list of strings at ``key``; ``None`` when absent, null or empty.

    Anything else raises ``tracker.<key> must be a list of strings``.
    """
    value = options.get(key)
    if value is None:
        return None
    if not isinstance(value, list | tuple) or not all(isinstance(item, str) for item in value):
        msg = f"tracker.{key} must be a list of strings"
        raise ConfigError(msg)
    return list(value) or None
