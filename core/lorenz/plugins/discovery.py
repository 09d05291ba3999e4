"""Plugin discovery: entry points in ``lorenz.tool_packs``, each loaded in isolation, then registered
(:mod:`.registration`).

A plugin that fails in any way (an import that raises, a core requirement this core does not meet,
a malformed hook, registrations that break the contracts) becomes a :class:`PluginFailure`; the
others still load. ``LORENZ_LOAD_PLUGINS`` is the allow-list, ``LORENZ_DISABLE_PLUGINS`` the
deny-list. A name clash keeps the name with the distribution shipped with Lorenz, and refuses it
for both when neither is; the order of installation never matters.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import pluggy
from attrs import evolve

from lorenz import hookspecs
from lorenz.hookspecs import ENTRY_POINT_GROUP

from .checks import core_requirement_problem, is_first_party, normalize_distribution
from .clashes import DISABLE_PLUGINS_ENV
from .containment import PluginError, call_plugin
from .entry_index import PluginEntryPoint, plugin_entry_points
from .model import Discovery, Mounts, PluginFailure
from .mounted import StoodIn, tracker_defaults, unprovided
from .registration import build_registries, owner_label, plugin_failure

if TYPE_CHECKING:
    from .hint import SandboxHint

__all__ = [
    "DISABLE_PLUGINS_ENV",
    "LOAD_PLUGINS_ENV",
    "discover",
    "load_entry_points",
    "load_plugin",
    "make_manager",
]

LOAD_PLUGINS_ENV = "LORENZ_LOAD_PLUGINS"


def make_manager() -> pluggy.PluginManager:
    """A fresh plugin manager with Lorenz's hookspecs (no plugins loaded)."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _names(env: Mapping[str, str], key: str) -> set[str] | None:
    raw = env.get(key)
    if raw is None:
        return None
    return {normalize_distribution(part.strip()) for part in raw.split(",") if part.strip()}


def load_plugin(
    pm: pluggy.PluginManager,
    load: Callable[[], object],
    *,
    name: str,
    entry_point: str,
    dist: str | None,
    version: str | None,
    group: str = ENTRY_POINT_GROUP,
) -> PluginFailure | None:
    """Import one plugin (``load()``) and register it under ``name``; the failure when either raised."""
    owner = owner_label(entry_point, dist, version)
    try:
        plugin = call_plugin(owner, "import", load)
        call_plugin(owner, "registering its hooks", pm.register, plugin, name=name)
    except PluginError as exc:  # a broken plugin must never stop the others
        return plugin_failure(group, entry_point, dist, version, exc)
    return None


def load_entry_points(
    pm: pluggy.PluginManager,
    *,
    group: str = ENTRY_POINT_GROUP,
    env: Mapping[str, str] | None = None,
    isolate: Sequence[str] = (),
    sandbox: SandboxHint | None = None,
    unimported: bool = False,
    mounts: Mounts | None = None,
    failed_surveys: list[tuple[PluginEntryPoint, str | None, str | None, PluginFailure]] | None = None,
    stood_in: list[StoodIn] | None = None,
) -> tuple[dict[str, tuple[str | None, str | None]], list[PluginFailure], list[str]]:
    """Load and register every entry point of ``group``, each contained on its own.

    Returns ``({plugin name: (distribution, version)}, failures, disabled distributions)``, in a
    stable order (by distribution, then entry point). Plugin names are the entry point names,
    namespaced by distribution when two distributions share one. A distribution whose
    ``lorenz-core`` requirement excludes this core is reported and never imported.

    With ``isolate`` (``server.isolated_packs``), plugins not shipped with Lorenz are first
    imported in a child process each (:mod:`lorenz.isolation.survey`); one whose packs all run
    isolated, and that provides no tracker, is never imported here (a stand-in registers its packs);
    with ``mounts`` (what the workflow mounts), nor is one that provides none of its unisolated
    packs and not its tracker. With ``sandbox`` (``server.sandboxed_packs``) those children are
    confined. With ``unimported`` (a command that lists, lints or mounts what is installed), no
    plugin but the bundled ones is imported here at all: each is surveyed in a child confined to
    the strict policy (:mod:`lorenz.sandbox.discovery`) and stands in by stubs of its packs and
    trackers. With ``mounts`` but no ``isolate`` (a plain workflow), the same holds for every
    plugin it does not mount: the host imports a third-party plugin only for a pack, tracker or
    middleware the workflow names, surveys run under the strict policy, and a plugin whose survey
    failed goes to ``failed_surveys`` (when given) for :func:`discover` to import only if what the
    workflow mounts is found nowhere else. Each plugin registered by a stand-in goes to ``stood_in``
    (when given), for :func:`discover` to import when the workflow's tracker mounts its pack.
    """
    env = os.environ if env is None else env
    plain = not isolate and not unimported and mounts is not None
    allowed, denied = _names(env, LOAD_PLUGINS_ENV), _names(env, DISABLE_PLUGINS_ENV) or set()
    loaded: dict[str, tuple[str | None, str | None]] = {}
    failures: list[PluginFailure] = []
    disabled: dict[str, None] = {}
    found = sorted(plugin_entry_points(group), key=lambda ep: (normalize_distribution(ep.distribution or ""), ep.name))
    accepted: list[tuple[PluginEntryPoint, str | None, str | None]] = []
    for ep in found:
        dist, version, requires = ep.distribution, ep.version, ep.requires
        key = normalize_distribution(dist) if dist is not None else None
        if allowed is not None and (key is None or key not in allowed):
            continue
        if key is not None and key in denied:
            disabled.setdefault(dist or key, None)
            continue
        problem = core_requirement_problem(dist, version, requires) if dist is not None else None
        if problem is not None:
            failures.append(PluginFailure(group=group, name=ep.name, distribution=dist, version=version, error=problem))
            continue
        accepted.append((ep, dist, version))
    stand_ins: Mapping[int, object] = {}
    candidates = [(ep.name, dist, version, is_first_party(dist)) for ep, dist, version in accepted]
    third_party = not all(bundled for *_, bundled in candidates)
    if isolate or (third_party and (unimported or mounts is not None)):
        from lorenz.isolation.survey import stand_ins_for  # subprocess: only for third-party code

        stand_ins = stand_ins_for(candidates, isolate, sandbox, unimported=unimported, mounts=mounts)
    for index, (ep, dist, version) in enumerate(accepted):
        stand_in = stand_ins.get(index)
        if isinstance(stand_in, PluginFailure):  # it failed in its survey process: never imported here
            if plain and failed_surveys is not None:
                failed_surveys.append((ep, dist, version, stand_in))
            else:
                failures.append(stand_in)
            continue
        name = ep.name if pm.get_plugin(ep.name) is None else f"{dist}:{ep.name}"
        load = ep.load if stand_in is None else _given(stand_in)
        failure = load_plugin(pm, load, name=name, entry_point=ep.name, dist=dist, version=version, group=group)
        if failure is not None:
            failures.append(failure)
            continue
        loaded[name] = (dist, version)
        if stand_in is not None and stood_in is not None:
            stood_in.append(StoodIn(ep, dist, version, name, getattr(stand_in, "in_host", frozenset())))
    return loaded, failures, list(disabled)


def _given(obj: object) -> Callable[[], object]:
    return lambda: obj


def discover(
    *,
    plugins: Iterable[object] = (),
    entry_points_enabled: bool = True,
    env: Mapping[str, str] | None = None,
    isolate: Sequence[str] = (),
    sandbox: SandboxHint | None = None,
    unimported: bool = False,
    mounts: Mounts | None = None,
) -> Discovery:
    """Discover installed plugins (and any given in-process ``plugins``) into fresh registries.

    ``plugins`` are registered as they are, after the installed ones: this is how tests add a
    pack without installing anything. One that is already registered (an installed plugin's
    module given again with ``-p``) is taken once. ``isolate`` is the workflow's
    ``server.isolated_packs``, ``sandbox`` its ``server.sandboxed_packs``, ``mounts`` what it mounts
    (with the packs its tracker mounts by default, once the tracker is loaded:
    :mod:`lorenz.plugins.mounted`); ``unimported``: import no third-party plugin here (see
    :func:`load_entry_points`).
    """
    pm = make_manager()
    origins: dict[str, tuple[str | None, str | None]] = {}
    failures: list[PluginFailure] = []
    disabled: list[str] = []
    failed_surveys: list[tuple[PluginEntryPoint, str | None, str | None, PluginFailure]] = []
    stood_in: list[StoodIn] = []
    if entry_points_enabled:
        origins, failures, disabled = load_entry_points(
            pm,
            env=env,
            isolate=isolate,
            sandbox=sandbox,
            unimported=unimported,
            mounts=mounts,
            failed_surveys=failed_surveys,
            stood_in=stood_in,
        )
    for index, plugin in enumerate(plugins):
        if pm.is_registered(plugin):
            continue
        name = getattr(plugin, "__name__", None) or f"{type(plugin).__name__}-{index}"
        try:
            call_plugin(owner_label(name, None, None), "registering its hooks", pm.register, plugin, name=name)
        except PluginError as exc:
            failures.append(plugin_failure("in-process", name, None, None, exc))
    discovery = build_registries(
        pm, origins=origins, failures=[*failures, *(f for *_, f in failed_surveys)], disabled=disabled
    )
    defaults = tracker_defaults(discovery, mounts) - mounts.packs if mounts is not None and not unimported else None
    if mounts is not None and defaults:
        # The workflow mounts what its tracker mounts by default as if it named it: a plugin that
        # stood in for one of those packs, which runs here (not isolated), is imported after all.
        mounts = evolve(mounts, packs=mounts.packs | defaults)
        wanted = [plugin for plugin in stood_in if plugin.in_host & defaults]
        for plugin in wanted:
            pm.unregister(name=plugin.name)
            failure = load_plugin(
                pm,
                plugin.entry_point.load,
                name=plugin.name,
                entry_point=plugin.entry_point.name,
                dist=plugin.distribution,
                version=plugin.version,
            )
            if failure is not None:
                origins.pop(plugin.name, None)
                failures.append(failure)
        if wanted:
            discovery = build_registries(
                pm, origins=origins, failures=[*failures, *(f for *_, f in failed_surveys)], disabled=disabled
            )
    if failed_surveys and mounts is not None and unprovided(discovery, mounts):
        # The workflow mounts, unsandboxed, something only a plugin that failed its survey can
        # provide: import those here, as it asks (their survey errors give way to the outcome).
        for ep, dist, version, _ in failed_surveys:
            name = ep.name if pm.get_plugin(ep.name) is None else f"{dist}:{ep.name}"
            failure = load_plugin(pm, ep.load, name=name, entry_point=ep.name, dist=dist, version=version)
            if failure is None:
                origins[name] = (dist, version)
            else:
                failures.append(failure)
        discovery = build_registries(pm, origins=origins, failures=failures, disabled=disabled)
    return evolve(discovery, isolate=tuple(isolate), mounts=mounts)
