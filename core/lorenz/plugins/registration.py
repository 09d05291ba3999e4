"""Registering discovered plugins: each plugin's registration hooks called on their own into fresh
registries (:func:`build_registries`).

A plugin whose hooks raise, implement a hook that does not exist, or register something that breaks
the contracts leaves nothing behind and becomes a :class:`PluginFailure`. A name two plugins claim
is settled by :func:`~lorenz.plugins.clashes.settle`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pluggy

from lorenz.contracts import ToolProvider, TrackerProvider
from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.middleware import MiddlewareProvider
from lorenz.redact import redact_text, redacted_traceback
from lorenz.results import error_message

from .checks import pack_shape_problem, tracker_shape_problem
from .clashes import Contribution, settle
from .containment import PluginError, call_plugin, describe_exception
from .model import Discovery, PluginFailure, PluginInfo
from .registry import ToolRegistry, TrackerRegistry
from .skill_roots import note_plugin

__all__ = ["Origins", "build_registries", "owner_label", "plugin_failure"]

#: ``{plugin name: (distribution, version)}``
Origins = Mapping[str, tuple[str | None, str | None]]


def owner_label(name: str, dist: str | None, version: str | None) -> str:
    """How errors name a plugin: ``plugin acme (acme-pack 1.0)``."""
    if dist is None:
        return f"plugin {name}"
    return f"plugin {name} ({dist} {version})" if version else f"plugin {name} ({dist})"


def plugin_failure(group: str, name: str, dist: str | None, version: str | None, exc: BaseException) -> PluginFailure:
    """A failure for plugin code that raised, its message naming what was being done."""
    # Shown by `lorenz plugins` and /healthz: the message may quote a secret of the environment.
    if not isinstance(exc, PluginError):  # a problem discovery found, not plugin code raising
        error = redact_text(error_message(exc))
        return PluginFailure(group=group, name=name, distribution=dist, version=version, error=error)
    described = describe_exception(exc.original)
    return PluginFailure(
        group=group,
        name=name,
        distribution=dist,
        version=version,
        error=redact_text(described if exc.action == "import" else f"{exc.action} raised {described}"),
        traceback=redacted_traceback(exc.original),
    )


def _unknown_hook_failures(pm: pluggy.PluginManager, origins: Origins) -> list[PluginFailure]:
    """Plugins implementing a hook that does not exist (a typo such as ``lorenz_register_trakers``)."""
    failures = []
    for name, plugin in list(pm.list_name_plugin()):
        if plugin is None:
            continue
        dist, version = origins.get(name, (None, None))
        try:
            unknown = call_plugin(owner_label(name, dist, version), "listing its hooks", _unknown_hooks, pm, plugin)
        except PluginError as exc:
            failures.append(plugin_failure(ENTRY_POINT_GROUP, name, dist, version, exc))
            continue
        failures.extend(
            PluginFailure(
                group=ENTRY_POINT_GROUP,
                name=name,
                distribution=dist,
                version=version,
                error=f"PluginValidationError: unknown hook {hook_name!r}",
            )
            for hook_name in unknown
        )
    return failures


def _unknown_hooks(pm: pluggy.PluginManager, plugin: object) -> list[str]:
    unknown = []
    for attr in dir(plugin):
        # Only what pluggy took as a hookimpl counts: `import json as lorenz_json` is not a hook.
        opts = pm.parse_hookimpl_opts(plugin, attr)
        if opts is None:
            continue
        hook_name = opts.get("specname") or attr
        caller = getattr(pm.hook, hook_name, None)
        if caller is None or not caller.has_spec():
            unknown.append(hook_name)
    return unknown


def _collect(
    pm: pluggy.PluginManager, name: str, plugin: object, dist: str | None, version: str | None
) -> Contribution:
    """Call one plugin's registration hooks and check what it registered; raises on any problem."""
    owner = owner_label(name, dist, version)
    packs: list[ToolProvider] = []
    kinds: list[TrackerProvider] = []
    middleware: list[MiddlewareProvider] = []
    hooks: dict[str, Callable[[Any], None]] = {
        "lorenz_register_trackers": kinds.append,
        "lorenz_register_tool_packs": packs.append,
        "lorenz_call_middleware": middleware.append,
    }
    for hook_name, register in hooks.items():
        call_plugin(owner, hook_name, _call_impls, pm, plugin, hook_name, register)
    problems = [tracker_shape_problem(tracker, owner) for tracker in kinds]
    problems += [pack_shape_problem(pack, owner) for pack in packs]
    problems += [_middleware_shape_problem(provider, owner) for provider in middleware]
    if any(problems):
        raise ValueError("; ".join(problem for problem in problems if problem))
    # Two different objects under one name within a plugin is the plugin's own bug: refuse it whole.
    scratch_tools, scratch_trackers = ToolRegistry(), TrackerRegistry()
    for tracker in kinds:
        scratch_trackers.register(tracker)
    for pack in packs:
        scratch_tools.register(pack)
        call_plugin(owner, "registration", note_plugin, pack, plugin)  # runs the pack's __hash__
    return Contribution(
        name=name,
        distribution=dist,
        version=version,
        packs=tuple(packs),
        trackers=tuple(kinds),
        middleware=tuple(middleware),
    )


def _middleware_shape_problem(provider: object, owner: str) -> str | None:
    name = getattr(provider, "name", None)
    if not isinstance(name, str) or not name.strip() or not callable(getattr(provider, "create", None)):
        return f"{owner}: a call middleware provider needs a non-blank str `name` and a `create(options, settings)`"
    return None


def build_registries(
    pm: pluggy.PluginManager,
    *,
    origins: Origins | None = None,
    failures: Iterable[PluginFailure] = (),
    disabled: Iterable[str] = (),
) -> Discovery:
    """Call every plugin's registration hooks, one plugin at a time, into fresh registries.

    A plugin whose hooks raise (anything) or whose contributions break the contracts leaves
    nothing behind and is reported. Clashing names are then settled as the module docstring says.
    """
    origins = dict(origins or {})
    all_failures = list(failures)
    bad = _unknown_hook_failures(pm, origins)
    all_failures.extend(bad)
    bad_names = {failure.name for failure in bad}
    contributions: list[Contribution] = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None or name in bad_names:
            continue
        dist, version = origins.get(name, (None, None))
        try:
            contributions.append(_collect(pm, name, plugin, dist, version))
        except Exception as exc:
            all_failures.append(plugin_failure(ENTRY_POINT_GROUP, name, dist, version, exc))
    pack_claims: dict[str, list[tuple[Contribution, Any]]] = {}
    tracker_claims: dict[str, list[tuple[Contribution, Any]]] = {}
    middleware_claims: dict[str, list[tuple[Contribution, Any]]] = {}
    for contribution in contributions:
        for pack in contribution.packs:
            pack_claims.setdefault(pack.name.strip(), []).append((contribution, pack))
        for tracker in contribution.trackers:
            tracker_claims.setdefault(tracker.kind.strip(), []).append((contribution, tracker))
        for provider in contribution.middleware:
            middleware_claims.setdefault(provider.name.strip(), []).append((contribution, provider))
    pack_winners, pack_losers = settle(pack_claims, "pack name")
    tracker_winners, tracker_losers = settle(tracker_claims, "tracker kind")
    middleware_winners, middleware_losers = settle(middleware_claims, "middleware name")
    for loser, message in [*tracker_losers, *pack_losers, *middleware_losers]:
        all_failures.append(
            PluginFailure(
                group=ENTRY_POINT_GROUP,
                name=loser.name,
                distribution=loser.distribution,
                version=loser.version,
                error=message,
            )
        )
    tools, trackers = ToolRegistry(), TrackerRegistry()
    middleware: list[MiddlewareProvider] = []
    infos: list[PluginInfo] = []
    for contribution in contributions:
        kept_trackers = [t for t in contribution.trackers if tracker_winners.get(t.kind.strip()) is t]
        kept_packs = [p for p in contribution.packs if pack_winners.get(p.name.strip()) is p]
        kept_middleware = [m for m in contribution.middleware if middleware_winners.get(m.name.strip()) is m]
        middleware.extend(kept_middleware)
        for tracker in kept_trackers:
            trackers.register(tracker)
        for pack in kept_packs:
            tools.register(pack)
        if not kept_packs and not kept_trackers and not kept_middleware and contribution.name not in origins:
            continue  # an in-process helper object with no registrations
        infos.append(
            PluginInfo(
                name=contribution.name,
                distribution=contribution.distribution,
                version=contribution.version,
                packs=tuple(p.name.strip() for p in kept_packs),
                trackers=tuple(t.kind.strip() for t in kept_trackers),
                middleware=tuple(m.name.strip() for m in kept_middleware),
            )
        )
    return Discovery(
        tools=tools,
        trackers=trackers,
        plugins=tuple(infos),
        failures=tuple(all_failures),
        disabled=tuple(disabled),
        middleware=tuple(middleware),
    )


def _call_impls(pm: pluggy.PluginManager, plugin: object, hook_name: str, register: Callable[[Any], None]) -> None:
    """Call ``plugin``'s implementation of ``hook_name`` (if any) with the ``register`` callback."""
    caller = getattr(pm.hook, hook_name)
    for impl in caller.get_hookimpls():
        if impl.plugin is plugin:
            kwargs = {arg: register for arg in impl.argnames if arg == "register"}
            impl.function(**kwargs)
