"""Helpers a tracker's ``parse_options`` uses to validate its provider options.

Keys are printed as the provider sees them, after its ``config_aliases`` ran (``tracker.idPrefix``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from .errors import ConfigError
from .suggest import did_you_mean, shown, unknown_keys

__all__ = [
    "UnknownOptionsError",
    "check_url",
    "reject_unknown_keys",
    "reject_unknown_options",
    "string_list_option",
    "string_option",
    "unknown_options_message",
]


def unknown_options_message(kind: str, unknown: Sequence[str], candidates: Iterable[str]) -> str:
    """``unsupported tracker option(s) for kind "<kind>": a (did you mean "b"?), c``."""
    return f'unsupported tracker option(s) for kind "{kind}": {unknown_keys(unknown, candidates)}'


class UnknownOptionsError(ConfigError):
    """Provider options the provider does not know; the core re-words it in the workflow's spelling."""

    def __init__(self, kind: str, unknown: Sequence[str], known: Sequence[str]) -> None:
        super().__init__(unknown_options_message(kind, unknown, known))
        self.kind = kind
        self.unknown = tuple(unknown)
        self.known = tuple(known)


def reject_unknown_options(options: Mapping[str, Any], known: Iterable[str], kind: str) -> None:
    """Raise :class:`UnknownOptionsError` (``unsupported tracker option(s) for kind "<kind>": a, b``,
    each with the closest known key) for keys not in ``known``.

    ``known`` are the keys as ``parse_options`` sees them (after ``config_aliases``); when a
    workflow is parsed the suggestions also cover the core tracker keys, spelled as aliased.
    """
    allowed = list(known)
    unknown = [str(key) for key in options if key not in allowed]
    if unknown:
        raise UnknownOptionsError(kind, unknown, allowed)


def reject_unknown_keys(options: Mapping[str, Any], known: Sequence[str], label: str) -> None:
    """Raise ``<label>.<key> is not supported (known keys: a, b)``, or ``… (did you mean "a"?)``
    when one is close, for the first key not in ``known`` (a pack's ``validate_options``)."""
    for key in options:
        if key not in known:
            hint = did_you_mean(str(key), known) or f" (known keys: {', '.join(known)})"
            msg = f"{label}.{shown(str(key))} is not supported{hint}"
            raise ConfigError(msg)


def check_url(value: str, label: str) -> str:
    """``value`` when it is an ``http``/``https`` URL with a host, else ``<label> must be an http(s) URL``."""
    try:
        parts = urlsplit(value)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname) and not any(c.isspace() for c in value)
    except ValueError:  # "http://[::1" and the like
        valid = False
    if not valid:
        hint = " ($VAR is not expanded in this key)" if value.startswith("$") else ""
        msg = f"{label} must be an http(s) URL with a host{hint}"
        raise ConfigError(msg)
    return value


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
