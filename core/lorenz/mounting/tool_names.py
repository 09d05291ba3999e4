"""The tools of a pack whose tools someone else lists (its ``dynamic_tools``, an upstream MCP
server's) that the host cannot serve under their names: why each is dropped, logged once."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from lorenz.contracts import ToolProvider, ToolSpec
from lorenz.settings.tools import TOOL_NAME_RE

__all__ = ["claim_names", "dropped_problem", "dynamic", "log_dropped", "shown_name"]

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


def log_dropped(pack: str, item: str, error: str) -> None:
    """Log a dropped tool (or prompt, or resource), once per pack, item and reason."""
    key = (pack, item, error)
    if key in _logged:
        return
    if len(_logged) >= _REMEMBERED:
        _logged.pop(next(iter(_logged)))
    _logged[key] = None
    import logging  # only when something is dropped: listing commands stay free of logging

    logging.getLogger("lorenz.host").warning("lorenz: pack %s: %s", pack, error)


def claim_names(
    packs: Sequence[ToolProvider],
    listed: Sequence[Sequence[ToolSpec]],
    declared: dict[str, str],
    claim: Callable[[str, str], object],
    dropped: list[tuple[str, tuple[str, str], str]],
) -> tuple[list[ToolSpec], dict[str, ToolProvider]]:
    """The served tools of ``packs`` (``listed``: each one's specs) and their packs, in mount order.

    The packs whose tools are their own claim their names first (``claim(tool, pack)`` records one
    in ``declared``, raising for a name another pack has); a dynamic pack's tool it cannot serve is
    appended to ``dropped`` as ``(pack, ("tool", name), why)``.
    """
    kept: dict[int, list[ToolSpec]] = {}
    for index in sorted(range(len(packs)), key=lambda i: dynamic(packs[i])):
        pack, mine = packs[index], kept.setdefault(index, [])
        for spec in listed[index]:
            problem = dropped_problem(spec.name, pack.name, declared) if dynamic(pack) else None
            if problem is not None:
                dropped.append((pack.name, ("tool", shown_name(spec.name)), problem))
                continue
            claim(spec.name, pack.name)
            mine.append(spec)
    specs: list[ToolSpec] = []
    owners: dict[str, ToolProvider] = {}
    for index, pack in enumerate(packs):
        for spec in kept[index]:
            if spec.name not in owners:  # a pack repeating one of its own names serves it once
                owners[spec.name] = pack
                specs.append(spec)
    return specs, owners
