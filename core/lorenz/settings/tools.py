"""The ``tools:`` map → ``Settings.tool_options`` and ``Settings.tool_instances``.

An entry's host keys (``provider``, ``prefix``, ``rename``) say which pack serves it and under
which names; they are taken out here, so a pack only ever sees its own options.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from lorenz.sandbox.permissions import Permissions, parse_permissions

from ._kinds import camel_to_snake
from .errors import ConfigError
from .model import ToolInstance
from .secrets import SecretRecorder, is_secret_key, resolve_secret_source, unset_reference
from .suggest import quoted

__all__ = [
    "HOST_KEYS",
    "TOOL_NAME_RE",
    "parse_tool_instances",
    "parse_tool_options",
    "parse_tool_permissions",
    "reword_for_instance",
]

#: The keys of a ``tools:`` entry the host reads; every other key is the pack's. The first three
#: make the entry an instance; ``permissions`` is what the operator grants a sandboxed pack.
HOST_KEYS = ("provider", "prefix", "rename", "permissions")
_INSTANCE_KEYS = HOST_KEYS[:3]
PERMISSIONS_KEY = "permissions"
#: What a served tool name may be (the MCP tool-name rule).
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_PREFIX_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def reword_for_instance(text: str, provider: str, key: str) -> str:
    """A pack's message naming ``tools.<provider>``, naming the instance's ``tools.<key>`` instead."""
    if provider == key:
        return text
    return re.sub(rf"\btools\.{re.escape(provider)}(?=[.:\s\"]|$)", f"tools.{key}", text)


def parse_tool_instances(raw: Mapping[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, ToolInstance]]:
    """``(the entries without their host keys, {key: ToolInstance})`` for the entries that set one.

    Raises :class:`ConfigError` naming the key (``tools.jira_ops.prefix must be …``).
    """
    options: dict[str, dict[str, Any]] = {}
    instances: dict[str, ToolInstance] = {}
    for key, entry in raw.items():
        entry = entry if isinstance(entry, Mapping) else {}
        options[key] = {k: v for k, v in entry.items() if k not in HOST_KEYS}
        if not any(k in entry for k in _INSTANCE_KEYS):
            continue
        instances[key] = ToolInstance(
            key=key,
            provider=_provider(key, entry.get("provider", key)),
            prefix=_prefix(key, entry.get("prefix", "")),
            rename=_rename(key, entry.get("rename", {})),
        )
    return options, instances


def _provider(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        msg = f"tools.{key}.provider must be the name of an installed tool pack, got {value!r:.60}"
        raise ConfigError(msg)
    return value.strip()


def _prefix(key: str, value: Any) -> str:
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or not _PREFIX_RE.match(value):
        msg = f"tools.{key}.prefix must be letters, digits, '_', '-' or '.' (at most 64), got {quoted(str(value))[:70]}"
        raise ConfigError(msg)
    return value


def _rename(key: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        msg = f"tools.{key}.rename must map a tool's name to the name it is served as ({{old: new}})"
        raise ConfigError(msg)
    out: dict[str, str] = {}
    for old, new in value.items():
        if not isinstance(new, str) or not TOOL_NAME_RE.match(new):
            msg = (
                f"tools.{key}.rename.{old}: {quoted(str(new))[:70]} is not a valid tool name "
                "(1-128 letters, digits, '_', '-' or '.')"
            )
            raise ConfigError(msg)
        out[str(old)] = new
    return out


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
