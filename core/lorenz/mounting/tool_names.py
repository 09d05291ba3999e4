"""The tools of a pack whose tools someone else lists (its ``dynamic_tools``, an upstream MCP
server's) that the host cannot serve under their names: why each is dropped, logged once."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from lorenz.contracts import ToolProvider
from lorenz.settings.tools import TOOL_NAME_RE

__all__ = ["dropped_problem", "dynamic", "log_dropped", "shown_name"]

logger = logging.getLogger("lorenz.host")

#: The drops already logged (a reload mounts them again); at most this many remembered.
_REMEMBERED = 1000
_logged: dict[tuple[str, str, str], None] = {}


def shown_name(name: str) -> str:
    """A third party's tool name as messages show it: at most 130 characters."""
    return name if len(name) <= 130 else name[:129] + "…"


def dynamic(pack: ToolProvider) -> bool:
    """Whether ``pack``'s tools are listed by a third party, so one it cannot serve is dropped."""
    return bool(getattr(pack, "dynamic_tools", False))


def dropped_problem(name: str, pack: str, declared: Mapping[str, str]) -> str | None:
    """Why the tool served as ``name`` by the dynamic ``pack`` cannot be served, or ``None``;
    ``declared``: ``{tool name: the pack that claimed it}`` so far."""
    if not TOOL_NAME_RE.match(name):
        return (
            f"tool {shown_name(name)!r} is not a valid tool name (1-128 letters, digits, '_', '-' or '.'); "
            "it is left out, the pack's other tools serve"
        )
    first = declared.get(name, pack)
    if first != pack:
        return (
            f'tool {name} is also declared by the "{first}" pack; it is left out (serve it under another '
            f"name with prefix: or rename: (tools: {{{pack}: {{prefix: {pack}_}}}}))"
        )
    return None


def log_dropped(pack: str, tool: str, error: str) -> None:
    """Log a dropped tool, once per pack, tool and reason."""
    key = (pack, tool, error)
    if key in _logged:
        return
    if len(_logged) >= _REMEMBERED:
        _logged.pop(next(iter(_logged)))
    _logged[key] = None
    logger.warning("lorenz: pack %s: %s", pack, error)
