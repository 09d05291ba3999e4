"""What discovery produces: the plugins that loaded, those that failed, and the filled registries."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from attrs import frozen

from .registry import ToolRegistry, TrackerRegistry

if TYPE_CHECKING:
    from lorenz.extensions import CatalogProvider, PluginCommand, RecordSinkProvider
    from lorenz.middleware import MiddlewareProvider

__all__ = ["Discovery", "Mounts", "PluginFailure", "PluginInfo", "PluginLifespan"]


@frozen(kw_only=True)
class Mounts:
    """What a workflow mounts, as read before discovery: a surveyed plugin is imported in the host
    only when it provides one of ``packs`` unisolated, or the ``tracker``."""

    packs: frozenset[str] = frozenset()
    tracker: str | None = None
    #: ``server.middleware``: a plugin providing one (a middleware, catalog shaper or call-record
    #: sink) runs in the host.
    middleware: frozenset[str] = frozenset()


@frozen(kw_only=True)
class PluginInfo:
    """A loaded plugin and what it registered."""

    name: str
    distribution: str | None = None
    version: str | None = None
    packs: tuple[str, ...] = ()
    trackers: tuple[str, ...] = ()
    #: The call middleware it provides (``lorenz_call_middleware``), by name.
    middleware: tuple[str, ...] = ()
    #: Its catalog shapers (``lorenz_catalog``), call-record sinks (``lorenz_call_record``) and
    #: ``lorenz`` commands (``lorenz_register_commands``), by name.
    catalog: tuple[str, ...] = ()
    sinks: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()

    @property
    def extensions(self) -> tuple[str, ...]:
        """The names ``server.middleware`` may list to turn on what it provides."""
        return tuple(dict.fromkeys((*self.middleware, *self.catalog, *self.sinks)))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "packs": list(self.packs),
            "trackers": list(self.trackers),
        }
        for key in ("middleware", "catalog", "sinks", "commands"):
            if getattr(self, key):
                out[key] = list(getattr(self, key))
        return out


@frozen(kw_only=True)
class PluginLifespan:
    """A plugin's ``lorenz_startup`` and ``lorenz_shutdown`` implementations, each ``f(settings)``."""

    plugin: str
    startup: Callable[[Any], Any] | None = None
    shutdown: Callable[[Any], Any] | None = None


@frozen(kw_only=True)
class PluginFailure:
    """A plugin (or one of its contributions) that could not be loaded.

    ``traceback`` is the redacted traceback when plugin code raised (``lorenz plugins -v``).
    """

    group: str
    name: str
    distribution: str | None
    version: str | None
    error: str
    traceback: str | None = None

    @property
    def origin(self) -> str:
        """``acme-pack 1.0``, or the group for an in-process plugin."""
        if self.distribution is None:
            return self.group
        return f"{self.distribution} {self.version}" if self.version else self.distribution

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "error": self.error,
            "traceback": self.traceback,
        }


@frozen(kw_only=True)
class Discovery:
    """The outcome of discovery: filled registries, what loaded, what failed, and the
    distributions ``LORENZ_DISABLE_PLUGINS`` left out."""

    tools: ToolRegistry
    trackers: TrackerRegistry
    plugins: tuple[PluginInfo, ...] = ()
    failures: tuple[PluginFailure, ...] = ()
    disabled: tuple[str, ...] = ()
    #: The ``server.isolated_packs`` discovery ran with: plugins it left unimported for them.
    isolate: tuple[str, ...] = ()
    #: What the workflow mounted when discovery ran (``None``: not known, every plugin it surveyed
    #: and the host needs for an unisolated pack or a tracker was imported).
    mounts: Mounts | None = None
    #: Plugins uninstalled while ``lorenz serve`` ran (``name`` is the pack each had registered):
    #: a workflow still mounting one gets a pack failure naming it rather than a load error.
    gone: tuple[PluginFailure, ...] = ()
    #: The call middleware installed plugins provide (active only when a workflow names one).
    middleware: tuple[MiddlewareProvider, ...] = ()
    #: The catalog shapers and call-record sinks they provide (active likewise).
    catalog: tuple[CatalogProvider, ...] = ()
    sinks: tuple[RecordSinkProvider, ...] = ()
    #: The ``lorenz`` subcommands they provide.
    commands: tuple[PluginCommand, ...] = ()
    #: The lifespan hooks of each plugin that has any (run for the plugins a workflow uses).
    lifespan: tuple[PluginLifespan, ...] = ()
    #: Plugins whose code changed on disk but cannot be imported afresh in this process: the
    #: server reports them (degraded) until it is restarted.
    restart_needed: tuple[PluginFailure, ...] = ()

    def gone_pack(self, name: str) -> PluginFailure | None:
        """The uninstalled plugin that had registered pack ``name``, if one did."""
        return next((failure for failure in self.gone if failure.name == name), None)

    def failure_for_pack(self, name: str) -> PluginFailure | None:
        """The failure that explains why pack ``name`` is missing: its plugin (entry point) of that
        name failed, or a clash over the name was refused."""
        for failure in self.failures:
            if failure.name == name or f'pack name "{name}"' in failure.error:
                return failure
        return None
