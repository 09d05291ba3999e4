"""The ``tools:`` map → ``Settings.tool_options``."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from lorenz.sandbox.permissions import Permissions, parse_permissions

from ._kinds import camel_to_snake
from .errors import ConfigError
from .secrets import SecretRecorder, is_secret_key, resolve_secret_source, unset_reference

__all__ = ["parse_tool_options", "parse_tool_permissions"]

#: The key of ``tools.<pack>`` the host reads itself: what the operator grants a sandboxed pack.
PERMISSIONS_KEY = "permissions"


def parse_tool_options(
    raw: Mapping[str, Mapping[str, Any]],
    *,
    env: Mapping[str, str],
    record_secret: SecretRecorder,
    unset: dict[str, str],
) -> dict[str, dict[str, Any]] | None:
    """Deep-copy each pack's options, resolving top-level strings (``$VAR``, ``op://``).

    A string that resolves to nothing is dropped (an unset ``$VAR`` noted in ``unset`` as
    ``tools.<pack>.<key>``); values under secret-looking keys are recorded.
    ``None`` when the map is empty. Pack names are checked later, by ``validate_dispatch_config``.
    """
    if not raw:
        return None
    parsed: dict[str, dict[str, Any]] = {}
    for pack, options in raw.items():
        slice_: dict[str, Any] = {}
        for key, value in options.items():
            if key == PERMISSIONS_KEY:
                continue  # the host's, not the pack's (parse_tool_permissions)
            if not isinstance(value, str):
                slice_[key] = copy.deepcopy(value)
                continue
            resolved, from_op = resolve_secret_source(value, env)
            if not resolved:
                if name := unset_reference(value, env):
                    unset[f"tools.{pack}.{camel_to_snake(str(key))}"] = name
                continue
            if from_op or is_secret_key(str(key)):
                record_secret(resolved)
            slice_[key] = resolved
        parsed[pack] = slice_
    return parsed


def parse_tool_permissions(raw: Mapping[str, Mapping[str, Any]]) -> dict[str, Permissions]:
    """Each ``tools.<pack>.permissions`` map; ``ConfigError`` naming the key at fault."""
    out: dict[str, Permissions] = {}
    for pack, options in (raw or {}).items():
        if PERMISSIONS_KEY in options:
            try:
                out[pack] = parse_permissions(options[PERMISSIONS_KEY], f"tools.{pack}.permissions")
            except ValueError as exc:
                raise ConfigError(str(exc)) from None
    return out
