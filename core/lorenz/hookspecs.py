"""Hook specifications for Lorenz plugins.

A plugin is a module (or any object) carrying functions marked with :data:`lorenz.hookimpl`,
named by an entry point in the ``lorenz.tool_packs`` group (``acme = "lorenz_acme.plugin"``).
Hooks follow the ``register`` callback shape: the host passes a ``register`` function and the
plugin calls it once per thing it contributes. An implementation may accept a subset of the
arguments a spec documents.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .contracts import ToolProvider, TrackerProvider
    from .middleware import MiddlewareProvider

__all__ = ["ENTRY_POINT_GROUP", "PROJECT", "hookimpl", "hookspec"]

#: The entry-point group that names a distribution's plugin modules.
ENTRY_POINT_GROUP = "lorenz.tool_packs"
PROJECT = "lorenz"
hookspec = pluggy.HookspecMarker(PROJECT)
#: Marks a plugin function as the implementation of a Lorenz hook.
hookimpl = pluggy.HookimplMarker(PROJECT)


# -------------------------------------------------------------------------
# Registration hooks, called once when the host builds its registries
# -------------------------------------------------------------------------


@hookspec
def lorenz_register_tool_packs(register: Callable[[ToolProvider], None]) -> None:
    """Register the tool packs this plugin provides.

    Called once per discovery, before any workflow is mounted. Call ``register(pack)`` for each
    :class:`~lorenz.ToolProvider`; pack names share one namespace across all plugins.

    :param register: Adds one pack. Raises if another plugin already registered a different pack
        under the same name; the whole plugin is then reported as failed.

    Use in plugins: return nothing; do no I/O here (import heavy SDKs lazily, in the tools).
    """


@hookspec
def lorenz_register_trackers(register: Callable[[TrackerProvider], None]) -> None:
    """Register the tracker backends this plugin provides.

    Called once per discovery. Call ``register(tracker)`` for each
    :class:`~lorenz.TrackerProvider`; kinds share one namespace across all plugins. A tracker
    usually names its own pack in ``default_tool_packs``.

    :param register: Adds one tracker. Raises if the kind is taken by a different provider.

    Use in plugins: return nothing; do no I/O here.
    """


@hookspec
def lorenz_call_middleware(register: Callable[[MiddlewareProvider], None]) -> None:
    """Register the call middleware this plugin provides.

    Called once per discovery. Call ``register(provider)`` for each
    :class:`~lorenz.MiddlewareProvider`; names share one namespace across all plugins. Nothing
    runs until a workflow lists the name in ``server.middleware``: installing a distribution
    never changes what the host does. See docs/hooks.md.

    :param register: Adds one provider. Raises if the name is taken by a different provider.

    Use in plugins: return nothing; do no I/O here.
    """
