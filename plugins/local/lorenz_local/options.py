"""The board's configuration: the id prefix rule, ``tracker:`` options and ``tools.local`` options."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from attrs import frozen

from lorenz import Settings, reject_unknown_keys, reject_unknown_options, string_option

from .paths import DEFAULT_BOARD_DIR

__all__ = [
    "DEFAULT_ID_PREFIX",
    "PREFIX_PATTERN",
    "BoardConfig",
    "is_valid_prefix",
    "pack_board_config",
    "validate_pack_options",
]

DEFAULT_ID_PREFIX = "BOARD-"
PREFIX_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*", re.ASCII)
PREFIX_RULE = 'must start alphanumeric, then only letters, digits, "_" or "-"'
PACK_KEYS = ("path", "idPrefix", "id_prefix")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def is_valid_prefix(prefix: object) -> bool:
    return isinstance(prefix, str) and PREFIX_PATTERN.fullmatch(prefix) is not None


def json_text(value: object) -> str:
    """``value`` as a JSON literal, the way error messages quote ids and prefixes. A lone
    surrogate is written as its ``\\uXXXX`` escape: raw, it would make the message unencodable."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


@frozen(kw_only=True)
class BoardConfig:
    """Where a board lives (as configured, before resolution) and its id prefix."""

    path: str | None = None
    id_prefix: str = DEFAULT_ID_PREFIX


def validate_pack_options(options: Mapping[str, Any]) -> None:
    """Check ``tools.local``; raise ``ValueError`` naming the first bad ``tools.local.<key>``."""
    reject_unknown_keys(options, PACK_KEYS, "tools.local")
    for key, value in options.items():
        if value is None:
            continue
        if not isinstance(value, str):
            msg = f"tools.local.{key} must be a string"
            raise ValueError(msg)
        if key == "path" and not value.strip():
            msg = f"tools.local.{key} must not be empty"
            raise ValueError(msg)
        if key != "path" and not is_valid_prefix(value):
            msg = f"tools.local.{key} {json_text(value)} is invalid: {PREFIX_RULE}"
            raise ValueError(msg)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def pack_board_config(settings: Settings) -> BoardConfig:
    """The pack's board: ``tools.local`` first, then the tracker's options when ``local`` dispatches."""
    pack = (settings.tool_options or {}).get("local") or {}
    tracker = settings.tracker.options if settings.tracker.kind == "local" else {}
    path = _str(pack.get("path"))
    if path is None:
        path = _str(tracker.get("path"))
    prefix = _str(pack.get("idPrefix")) or _str(pack.get("id_prefix")) or _str(tracker.get("idPrefix"))
    return BoardConfig(path=path, id_prefix=prefix or DEFAULT_ID_PREFIX)


def parse_tracker_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """``tracker:`` options of kind ``local`` → ``{"path", "idPrefix"}`` with defaults filled in."""
    reject_unknown_options(options, ("path", "idPrefix"), "local")
    path = string_option(options, "path")
    prefix = string_option(options, "idPrefix")
    if prefix is None:
        prefix = DEFAULT_ID_PREFIX
    if not is_valid_prefix(prefix):
        msg = f"tracker.id_prefix {json_text(prefix)} is invalid: {PREFIX_RULE}"
        raise ValueError(msg)
    return {"path": DEFAULT_BOARD_DIR if path is None else path, "idPrefix": prefix}
