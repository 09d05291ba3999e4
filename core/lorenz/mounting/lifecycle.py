"""A served configuration's packs: attached when it is built, detached when it stops being served,
and asked for their health while it is (the optional ``attach``/``detach``/``health``/``starting``
members).

Every call runs inside the plugin seam: a pack whose hook raises is logged, never a host failure.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from lorenz.contracts import PackInstance, ToolProvider
from lorenz.plugins.containment import PluginError, call_plugin
from lorenz.redact import redact_text
from lorenz.settings.model import Settings

from .model import PackFailure

__all__ = ["attach_packs", "detach_packs", "pack_health", "packs_starting"]

logger = logging.getLogger("lorenz.host")


def _instances(
    packs: Sequence[ToolProvider],
    settings: Settings,
    changed: Callable[[], None],
    updated: Callable[[str], None] = lambda uri: None,
) -> list[PackInstance]:
    return [
        PackInstance(name=pack.name, settings=settings, tools_changed=changed, resource_updated=updated)
        for pack in packs
    ]


def _each(
    packs: Sequence[ToolProvider],
    hook: str,
    settings: Settings,
    changed: Callable[[], None],
    updated: Callable[[str], None] = lambda uri: None,
) -> None:
    for pack, instance in zip(packs, _instances(packs, settings, changed, updated), strict=True):
        method = getattr(pack, hook, None)
        if not callable(method):
            continue
        try:
            call_plugin(f"pack {pack.name}", hook, method, instance)
        except PluginError as exc:
            logger.warning("lorenz: %s", redact_text(str(exc), settings.secrets))


def attach_packs(
    packs: Sequence[ToolProvider],
    settings: Settings,
    changed: Callable[[], None],
    updated: Callable[[str], None] = lambda uri: None,
) -> None:
    """Tell each pack that a configuration mounting it is about to be served (``changed``: its
    tools changed; ``updated``: a resource of it changed)."""
    _each(packs, "attach", settings, changed, updated)


def detach_packs(packs: Sequence[ToolProvider], settings: Settings) -> None:
    """Tell each pack that a configuration mounting it is no longer served."""
    _each(packs, "detach", settings, lambda: None)


def pack_health(packs: Sequence[ToolProvider], settings: Settings) -> list[PackFailure]:
    """The mounted packs that say something is wrong with them now."""
    failures = []
    for pack, instance in zip(packs, _instances(packs, settings, lambda: None), strict=True):
        method = getattr(pack, "health", None)
        if not callable(method):
            continue
        try:
            problem = call_plugin(f"pack {pack.name}", "health", method, instance)
        except PluginError as exc:
            problem = str(exc)
        if problem:
            failures.append(PackFailure(pack=pack.name, error=redact_text(str(problem), settings.secrets)))
    return failures


def packs_starting(packs: Sequence[ToolProvider], settings: Settings) -> list[str]:
    """The mounted packs still starting (a server that has neither listed its tools nor failed)."""
    starting = []
    for pack, instance in zip(packs, _instances(packs, settings, lambda: None), strict=True):
        method = getattr(pack, "starting", None)
        if not callable(method):
            continue
        try:
            if call_plugin(f"pack {pack.name}", "starting", method, instance):
                starting.append(pack.name)
        except PluginError as exc:
            logger.warning("lorenz: %s", redact_text(str(exc), settings.secrets))
    return starting
