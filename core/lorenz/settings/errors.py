"""The one error type the settings layer raises."""

from __future__ import annotations

__all__ = ["ConfigError"]


class ConfigError(ValueError):
    """A workflow or its configuration is invalid; the message names the key at fault."""
