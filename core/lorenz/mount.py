"""Mounting: which packs a workflow mounts, their flat tool namespace, and routing a call."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .contracts import ToolContext, ToolProvider, ToolSpec
from .redact import redact_text
from .registry import ToolRegistry, TrackerRegistry
from .results import ToolResult, error_message, tool_failure, unsupported_tool_failure
from .settings.model import Settings

__all__ = [
    "MountError",
    "execute_mounted_tool",
    "mounted_pack_names",
    "mounted_packs",
    "mounted_skill_sources",
    "mounted_tool_specs",
]


class MountError(ValueError):
    """Two packs declare the same tool name."""


def mounted_pack_names(settings: Settings, tools: ToolRegistry, trackers: TrackerRegistry) -> list[str]:
    """The packs to mount, first-seen order: the tracker's defaults, then every ``tools:`` key.

    A tracker without ``default_tool_packs`` (or an unregistered kind) falls back to a pack
    named like ``tracker.kind``, if one is registered. A tracker returning ``[]`` mounts none.
    """
    names: dict[str, None] = {}
    kind = settings.tracker.kind
    tracker = trackers.get(kind)
    hook = getattr(tracker, "default_tool_packs", None) if tracker is not None else None
    defaults = hook(settings) if callable(hook) else None
    if defaults is not None:
        for name in defaults:
            names.setdefault(name, None)
    elif kind is not None and tools.get(kind) is not None:
        names.setdefault(kind, None)
    for name in settings.tool_options or {}:
        names.setdefault(name, None)
    return list(names)


def mounted_packs(settings: Settings, tools: ToolRegistry, trackers: TrackerRegistry) -> list[ToolProvider]:
    """The mounted packs themselves; an unregistered name raises ``unsupported tool pack: …``."""
    return [tools.require(name) for name in mounted_pack_names(settings, tools, trackers)]


def mounted_tool_specs(packs: Sequence[ToolProvider], settings: Settings) -> list[ToolSpec]:
    """All tools of ``packs`` in one flat namespace; a name two packs declare raises
    :class:`MountError`."""
    owner: dict[str, str] = {}
    specs: list[ToolSpec] = []
    for pack in packs:
        for spec in pack.tool_specs(settings):
            first = owner.setdefault(spec.name, pack.name)
            if first != pack.name:
                msg = f'tool name collision: {spec.name} is declared by both the "{first}" and "{pack.name}" packs'
                raise MountError(msg)
            specs.append(spec)
    return specs


def failure_from_exception(exc: BaseException, context: ToolContext | None) -> ToolResult:
    """The failure result for a pack that raised: its message with the workflow's secrets and
    credential-looking fragments redacted, since it goes to the agent."""
    settings = getattr(context, "settings", None)
    secrets = getattr(settings, "secrets", None) or ()
    return tool_failure(redact_text(error_message(exc), secrets))


async def execute_mounted_tool(
    packs: Sequence[ToolProvider], name: str, input: Any, context: ToolContext
) -> ToolResult:
    """Route a call to the first pack declaring ``name``. Never raises: an exception becomes a
    failure result and an unknown name lists every mounted tool."""
    every: list[str] = []
    for pack in packs:
        try:
            specs = pack.tool_specs(context.settings)
        except Exception as exc:
            return failure_from_exception(exc, context)
        if any(spec.name == name for spec in specs):
            try:
                result = await pack.execute_tool(name, input, context)
            except Exception as exc:
                return failure_from_exception(exc, context)
            if not isinstance(result, ToolResult):
                return tool_failure(f"tool {name} returned {type(result).__name__}, not a ToolResult")
            return result
        every.extend(spec.name for spec in specs)
    return unsupported_tool_failure(name, every)


def mounted_skill_sources(packs: Sequence[ToolProvider]) -> list[str]:
    """The skill directories of the mounted packs, de-duplicated, first occurrence kept."""
    seen: dict[str, None] = {}
    for pack in packs:
        for skill in getattr(pack, "skills", None) or ():
            seen.setdefault(str(skill), None)
    return list(seen)
