"""Tool policy: which mounted tools are switched off, and what a call to one is told.

Two sources, shown alike (muted on the landing page with the reason, absent from ``tools/list``,
an ``isError`` result with the reason and how to enable it when called): the operator's
``server.disabled_tools`` globs in WORKFLOW.md, for any pack; and a typed pack's own disabled tools
(the optional ``disabled_tools(settings)`` hook of :class:`lorenz.authoring.Pack`).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from attrs import frozen

from lorenz.plugins.containment import PluginError, call_plugin
from lorenz.results import ToolResult, failure_result
from lorenz.settings.model import Settings

if TYPE_CHECKING:
    from lorenz.contracts import ToolProvider, ToolSpec

__all__ = ["DisabledEntry", "disabled_failure", "switched_off"]


@frozen(kw_only=True)
class DisabledEntry:
    """A tool that is switched off: its pack, what it would do, why it is off, how to turn it on."""

    name: str
    pack: str
    description: str
    reason: str
    hint: str | None = None
    since: str | None = None


def _operator_off(name: str, patterns: tuple[str, ...]) -> str | None:
    return next((pattern for pattern in patterns if fnmatch.fnmatchcase(name, pattern)), None)


def _pack_disabled(pack: Any, settings: Settings) -> list[DisabledEntry]:
    hook = getattr(pack, "disabled_tools", None)
    if not callable(hook):
        return []
    try:
        entries = call_plugin(f"pack {pack.name}", "disabled_tools", lambda: list(hook(settings)))
    except PluginError:
        return []  # a pack bug must not hide its other tools
    out = []
    for entry in entries:
        spec = getattr(entry, "spec", None)
        spec = spec() if callable(spec) else spec
        out.append(
            DisabledEntry(
                name=str(getattr(entry, "name", "")),
                pack=str(pack.name),
                description=str(getattr(spec, "description", "") or ""),
                reason=str(getattr(entry, "reason", "") or "disabled by its pack"),
                hint=getattr(entry, "hint", None),
                since=getattr(entry, "since", None),
            )
        )
    return out


def switched_off(
    packs: Iterable[ToolProvider], specs: Iterable[ToolSpec], owners: Mapping[str, ToolProvider], settings: Settings
) -> dict[str, DisabledEntry]:
    """The mounted tools switched off, by name: the packs' own, then ``server.disabled_tools``'."""
    patterns = tuple(settings.server.disabled_tools)
    disabled: dict[str, DisabledEntry] = {}
    for pack in packs:
        for entry in _pack_disabled(pack, settings):
            disabled.setdefault(entry.name, entry)
    if patterns:
        for spec in specs:
            pattern = _operator_off(spec.name, patterns)
            if pattern is not None:
                disabled[spec.name] = DisabledEntry(
                    name=spec.name,
                    pack=owners[spec.name].name,
                    description=spec.description,
                    reason=f"switched off by the operator (server.disabled_tools: {json.dumps(pattern)})",
                    hint=f"remove {json.dumps(pattern)} from server.disabled_tools in WORKFLOW.md",
                )
    return disabled


def disabled_failure(entry: DisabledEntry) -> ToolResult:
    """What a call to a switched-off tool gets: the reason, and how to enable it."""
    hint = f" To enable it: {entry.hint}" if entry.hint else ""
    return failure_result(
        f"Tool {json.dumps(entry.name)} is disabled: {entry.reason}.{hint}".replace("..", "."),
        reason="tool_disabled",
        recovery="Use another available tool; this one is turned off in this deployment.",
    )
