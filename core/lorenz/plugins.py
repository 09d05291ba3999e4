"""Plugin discovery: entry points in ``lorenz.tool_packs``, each loaded in isolation.

A plugin that fails to import, declares a malformed hook, or raises while registering is
recorded as a :class:`PluginFailure`; the others still load. ``LORENZ_LOAD_PLUGINS`` (a
comma-separated list of distribution names, empty for none) limits which distributions load.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pluggy
from attrs import frozen

from . import hookspecs
from .contracts import ToolProvider, TrackerProvider
from .registry import ToolRegistry, TrackerRegistry
from .results import error_message

if sys.version_info >= (3, 12):
    from importlib.metadata import EntryPoint, entry_points
else:  # the backport has the same API and the `.dist` attribute on 3.11
    from importlib_metadata import EntryPoint, entry_points

__all__ = [
    "ENTRY_POINT_GROUP",
    "LOAD_PLUGINS_ENV",
    "Discovery",
    "PluginFailure",
    "PluginInfo",
    "build_registries",
    "discover",
    "load_entry_points",
    "make_manager",
]

ENTRY_POINT_GROUP = "lorenz.tool_packs"
LOAD_PLUGINS_ENV = "LORENZ_LOAD_PLUGINS"


@frozen(kw_only=True)
class PluginInfo:
    """A loaded plugin and what it registered."""

    name: str
    distribution: str | None = None
    version: str | None = None
    packs: tuple[str, ...] = ()
    trackers: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "packs": list(self.packs),
            "trackers": list(self.trackers),
        }


@frozen(kw_only=True)
class PluginFailure:
    """A plugin that could not be loaded or failed while registering."""

    group: str
    name: str
    distribution: str | None
    version: str | None
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "error": self.error,
        }


@frozen(kw_only=True)
class Discovery:
    """The outcome of discovery: filled registries, what loaded, and what failed."""

    tools: ToolRegistry
    trackers: TrackerRegistry
    plugins: tuple[PluginInfo, ...] = ()
    failures: tuple[PluginFailure, ...] = ()


def make_manager() -> pluggy.PluginManager:
    """A fresh plugin manager with Lorenz's hookspecs (no plugins loaded)."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _dist_of(ep: EntryPoint) -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    return dist.metadata["Name"] or dist.name, dist.version


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _allowed(env: Mapping[str, str]) -> set[str] | None:
    raw = env.get(LOAD_PLUGINS_ENV)
    if raw is None:
        return None
    return {_normalize(part.strip()) for part in raw.split(",") if part.strip()}


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {error_message(exc)}"


def load_entry_points(
    pm: pluggy.PluginManager,
    *,
    group: str = ENTRY_POINT_GROUP,
    env: Mapping[str, str] | None = None,
) -> tuple[dict[str, tuple[str | None, str | None]], list[PluginFailure]]:
    """Load and register every entry point of ``group``, each in its own ``try``.

    Returns ``({plugin name: (distribution, version)}, failures)``. Plugin names are
    ``<entry point name>`` namespaced by distribution when two distributions share one.
    """
    allowed = _allowed(os.environ if env is None else env)
    loaded: dict[str, tuple[str | None, str | None]] = {}
    failures: list[PluginFailure] = []
    for ep in entry_points(group=group):
        dist, version = _dist_of(ep)
        if allowed is not None and (dist is None or _normalize(dist) not in allowed):
            continue
        name = ep.name if pm.get_plugin(ep.name) is None else f"{dist}:{ep.name}"
        try:
            plugin = ep.load()
            pm.register(plugin, name=name)
        except Exception as exc:  # a broken plugin must never stop the others
            failures.append(
                PluginFailure(group=group, name=ep.name, distribution=dist, version=version, error=_describe(exc))
            )
            continue
        loaded[name] = (dist, version)
    return loaded, failures


def _unknown_hook_failures(
    pm: pluggy.PluginManager, origins: Mapping[str, tuple[str | None, str | None]]
) -> list[PluginFailure]:
    """Plugins implementing a hook that does not exist (a typo such as ``lorenz_register_trakers``)."""
    failures = []
    for name, plugin in list(pm.list_name_plugin()):
        if plugin is None:
            continue
        for attr in dir(plugin):
            # Only what pluggy took as a hookimpl counts: `import json as lorenz_json` is not a hook.
            opts = pm.parse_hookimpl_opts(plugin, attr)
            if opts is None:
                continue
            hook_name = opts.get("specname") or attr
            caller = getattr(pm.hook, hook_name, None)
            if caller is None or not caller.has_spec():
                dist, version = origins.get(name, (None, None))
                failures.append(
                    PluginFailure(
                        group=ENTRY_POINT_GROUP,
                        name=name,
                        distribution=dist,
                        version=version,
                        error=f"PluginValidationError: unknown hook {hook_name!r}",
                    )
                )
    return failures


def build_registries(
    pm: pluggy.PluginManager,
    *,
    origins: Mapping[str, tuple[str | None, str | None]] | None = None,
    failures: Iterable[PluginFailure] = (),
) -> Discovery:
    """Call every plugin's registration hooks, one plugin at a time, into fresh registries.

    What a plugin registers is committed only when all of its hooks succeed, so a plugin that
    raises halfway leaves nothing behind and is reported as a failure.
    """
    origins = dict(origins or {})
    tools = ToolRegistry()
    trackers = TrackerRegistry()
    infos: list[PluginInfo] = []
    all_failures = list(failures)
    bad = _unknown_hook_failures(pm, origins)
    all_failures.extend(bad)
    bad_names = {failure.name for failure in bad}
    for name, plugin in pm.list_name_plugin():
        if plugin is None or name in bad_names:
            continue
        dist, version = origins.get(name, (None, None))
        packs: list[ToolProvider] = []
        kinds: list[TrackerProvider] = []
        try:
            _call_impls(pm, plugin, "lorenz_register_trackers", kinds.append)
            _call_impls(pm, plugin, "lorenz_register_tool_packs", packs.append)
            # Validate everything (clashes within this plugin too, via scratch registries) before
            # committing anything, so a failed plugin leaves the registries untouched.
            scratch_tools, scratch_trackers = ToolRegistry(), TrackerRegistry()
            for tracker in kinds:
                scratch_trackers.register(tracker)
                _check_free(trackers.get(str(tracker.kind).strip()), tracker, "tracker provider", "kind")
            for pack in packs:
                scratch_tools.register(pack)
                _check_free(tools.get(str(pack.name).strip()), pack, "tool provider", "name")
            for tracker in kinds:
                trackers.register(tracker)
            for pack in packs:
                tools.register(pack)
        except Exception as exc:
            all_failures.append(
                PluginFailure(
                    group=ENTRY_POINT_GROUP, name=name, distribution=dist, version=version, error=_describe(exc)
                )
            )
            continue
        if not packs and not kinds and name not in origins:
            continue  # an in-process helper object with no registrations
        infos.append(
            PluginInfo(
                name=name,
                distribution=dist,
                version=version,
                packs=tuple(str(p.name).strip() for p in packs),
                trackers=tuple(str(t.kind).strip() for t in kinds),
            )
        )
    return Discovery(tools=tools, trackers=trackers, plugins=tuple(infos), failures=tuple(all_failures))


def _check_free(existing: object, new: object, noun: str, key: str) -> None:
    if existing is not None and existing is not new:
        label = getattr(new, "name" if key == "name" else "kind", "")
        msg = f"{noun} already registered for {key}: {str(label).strip()}"
        raise ValueError(msg)


def _call_impls(pm: pluggy.PluginManager, plugin: object, hook_name: str, register: Callable[[Any], None]) -> None:
    """Call ``plugin``'s implementation of ``hook_name`` (if any) with the ``register`` callback."""
    caller = getattr(pm.hook, hook_name)
    for impl in caller.get_hookimpls():
        if impl.plugin is plugin:
            kwargs = {arg: register for arg in impl.argnames if arg == "register"}
            impl.function(**kwargs)


def discover(
    *,
    plugins: Iterable[object] = (),
    entry_points_enabled: bool = True,
    env: Mapping[str, str] | None = None,
) -> Discovery:
    """Discover installed plugins (and any given in-process ``plugins``) into fresh registries.

    ``plugins`` are registered as they are, after the installed ones: this is how tests add a
    pack without installing anything.
    """
    pm = make_manager()
    origins: dict[str, tuple[str | None, str | None]] = {}
    failures: list[PluginFailure] = []
    if entry_points_enabled:
        origins, failures = load_entry_points(pm, env=env)
    for index, plugin in enumerate(plugins):
        name = getattr(plugin, "__name__", None) or f"{type(plugin).__name__}-{index}"
        try:
            pm.register(plugin, name=name)
        except Exception as exc:
            failures.append(
                PluginFailure(group="in-process", name=name, distribution=None, version=None, error=_describe(exc))
            )
    return build_registries(pm, origins=origins, failures=failures)
