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
    from collections.abc import Awaitable

    from .contracts import ToolProvider, TrackerProvider
    from .extensions import CatalogProvider, PluginCommand, RecordSinkProvider
    from .middleware import MiddlewareProvider
    from .settings.model import Settings

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


@hookspec
def lorenz_catalog(register: Callable[[CatalogProvider], None]) -> None:
    """Register the catalog shapers this plugin provides.

    Called once per discovery. Call ``register(provider)`` for each
    :class:`~lorenz.CatalogProvider`; active only when a workflow lists its name in
    ``server.middleware``. Each active shaper shapes ``tools/list`` per caller, in that list's
    order; a tool one leaves out cannot be called either. See docs/hooks.md.
    """


@hookspec
def lorenz_call_record(register: Callable[[RecordSinkProvider], None]) -> None:
    """Register the call-record sinks this plugin provides.

    Called once per discovery. Call ``register(provider)`` for each
    :class:`~lorenz.RecordSinkProvider`; active only when a workflow lists its name in
    ``server.middleware``. Each active sink gets every finished call's record, redacted as the
    call log is, off the call's path. See docs/hooks.md.
    """


@hookspec
def lorenz_register_commands(register: Callable[[PluginCommand], None]) -> None:
    """Register ``lorenz`` subcommands (:class:`~lorenz.PluginCommand`).

    Called once per discovery. ``lorenz --help`` lists them and ``lorenz <name>`` runs one;
    the built-in commands never do, and a name a built-in command has is never run. Import what a
    command needs inside its ``run``: registering it must cost nothing.
    """


# -------------------------------------------------------------------------
# Lifespan hooks, called in each serving process (worker)
# -------------------------------------------------------------------------


@hookspec
def lorenz_startup(settings: Settings) -> Awaitable[None] | None:
    """Called once per serving process as it starts, before it serves, with the live settings,
    for a plugin the workflow uses (it mounts its pack, dispatches with its tracker, or names its
    middleware). May be ``async``. Bounded in time; what it raises, or a hang, is logged and the
    host serves on. Open connections here (or lazily)."""


@hookspec
def lorenz_shutdown(settings: Settings) -> Awaitable[None] | None:
    """Called once per serving process as it stops, with the live settings, for each plugin
    :func:`lorenz_startup` was called for. May be ``async``; bounded and contained alike. Close
    connections here."""
