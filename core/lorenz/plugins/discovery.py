"""Plugin discovery: entry points in ``lorenz.tool_packs``, each loaded in isolation.

A plugin that fails in any way (an import that raises, a core requirement this core does not meet,
a malformed hook, registrations that break the contracts) becomes a :class:`PluginFailure`; the
others still load. ``LORENZ_LOAD_PLUGINS`` is the allow-list, ``LORENZ_DISABLE_PLUGINS`` the
deny-list. A name clash keeps the name with the distribution shipped with Lorenz, and refuses it
for both when neither is; the order of installation never matters.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

import pluggy
from attrs import evolve

from lorenz import hookspecs
from lorenz.contracts import ToolProvider, TrackerProvider
from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.middleware import MiddlewareProvider
from lorenz.redact import redact_text, redacted_traceback
from lorenz.results import error_message

from .checks import (
    core_requirement_problem,
    is_first_party,
    normalize_distribution,
    pack_shape_problem,
    tracker_shape_problem,
)
from .clashes import DISABLE_PLUGINS_ENV, Contribution, settle
from .containment import PluginError, call_plugin, describe_exception
from .model import Discovery, Mounts, PluginFailure, PluginInfo
from .registry import ToolRegistry, TrackerRegistry
from .skill_roots import note_plugin

if TYPE_CHECKING:
    from .hint import SandboxHint

__all__ = [
    "DISABLE_PLUGINS_ENV",
    "LOAD_PLUGINS_ENV",
    "build_registries",
    "discover",
    "load_entry_points",
    "load_plugin",
    "make_manager",
]

LOAD_PLUGINS_ENV = "LORENZ_LOAD_PLUGINS"

Origins = Mapping[str, tuple[str | None, str | None]]


def make_manager() -> pluggy.PluginManager:
    """A fresh plugin manager with Lorenz's hookspecs (no plugins loaded)."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def _dist_of(ep: EntryPoint) -> tuple[str | None, str | None, list[str] | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None, None
    meta = dist.metadata  # parsed anew on every access: read the three headers from one parse
    return meta.get("Name"), meta.get("Version"), meta.get_all("Requires-Dist") or dist.requires


def _names(env: Mapping[str, str], key: str) -> set[str] | None:
    raw = env.get(key)
    if raw is None:
        return None
    return {normalize_distribution(part.strip()) for part in raw.split(",") if part.strip()}


def _owner(name: str, dist: str | None, version: str | None) -> str:
    if dist is None:
        return f"plugin {name}"
    return f"plugin {name} ({dist} {version})" if version else f"plugin {name} ({dist})"


def _failure(group: str, name: str, dist: str | None, version: str | None, exc: BaseException) -> PluginFailure:
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
    owner = _owner(entry_point, dist, version)
    try:
        plugin = call_plugin(owner, "import", load)
        call_plugin(owner, "registering its hooks", pm.register, plugin, name=name)
    except PluginError as exc:  # a broken plugin must never stop the others
        return _failure(group, entry_point, dist, version, exc)
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
    failed_surveys: list[tuple[EntryPoint, str | None, str | None, PluginFailure]] | None = None,
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
    workflow mounts is found nowhere else.
    """
    env = os.environ if env is None else env
    plain = not isolate and not unimported and mounts is not None
    allowed, denied = _names(env, LOAD_PLUGINS_ENV), _names(env, DISABLE_PLUGINS_ENV) or set()
    loaded: dict[str, tuple[str | None, str | None]] = {}
    failures: list[PluginFailure] = []
    disabled: dict[str, None] = {}
    found = [(ep, *_dist_of(ep)) for ep in entry_points(group=group)]
    found.sort(key=lambda item: (normalize_distribution(item[1] or ""), item[0].name))
    accepted: list[tuple[EntryPoint, str | None, str | None]] = []
    for ep, dist, version, requires in found:
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
    return loaded, failures, list(disabled)


def _given(obj: object) -> Callable[[], object]:
    return lambda: obj


def _unknown_hook_failures(pm: pluggy.PluginManager, origins: Origins) -> list[PluginFailure]:
    """Plugins implementing a hook that does not exist (a typo such as ``lorenz_register_trakers``)."""
    failures = []
    for name, plugin in list(pm.list_name_plugin()):
        if plugin is None:
            continue
        dist, version = origins.get(name, (None, None))
        try:
            unknown = call_plugin(_owner(name, dist, version), "listing its hooks", _unknown_hooks, pm, plugin)
        except PluginError as exc:
            failures.append(_failure(ENTRY_POINT_GROUP, name, dist, version, exc))
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
    owner = _owner(name, dist, version)
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
            all_failures.append(_failure(ENTRY_POINT_GROUP, name, dist, version, exc))
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
    ``server.isolated_packs``, ``sandbox`` its ``server.sandboxed_packs``, ``mounts`` what it mounts;
    ``unimported``: import no third-party plugin here (see :func:`load_entry_points`).
    """
    pm = make_manager()
    origins: dict[str, tuple[str | None, str | None]] = {}
    failures: list[PluginFailure] = []
    disabled: list[str] = []
    failed_surveys: list[tuple[EntryPoint, str | None, str | None, PluginFailure]] = []
    if entry_points_enabled:
        origins, failures, disabled = load_entry_points(
            pm,
            env=env,
            isolate=isolate,
            sandbox=sandbox,
            unimported=unimported,
            mounts=mounts,
            failed_surveys=failed_surveys,
        )
    for index, plugin in enumerate(plugins):
        if pm.is_registered(plugin):
            continue
        name = getattr(plugin, "__name__", None) or f"{type(plugin).__name__}-{index}"
        try:
            call_plugin(_owner(name, None, None), "registering its hooks", pm.register, plugin, name=name)
        except PluginError as exc:
            failures.append(_failure("in-process", name, None, None, exc))
    discovery = build_registries(
        pm, origins=origins, failures=[*failures, *(f for *_, f in failed_surveys)], disabled=disabled
    )
    if failed_surveys and mounts is not None and _unprovided(discovery, mounts):
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


def _unprovided(discovery: Discovery, mounts: Mounts) -> bool:
    """Whether a pack, tracker or middleware ``mounts`` names is missing from ``discovery``."""
    if any(discovery.tools.get(name) is None for name in mounts.packs if name != mounts.tracker):
        return True
    if mounts.tracker is not None and discovery.trackers.get(mounts.tracker) is None:
        return True
    return bool(mounts.middleware - {provider.name.strip() for provider in discovery.middleware})
