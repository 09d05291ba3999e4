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
from typing import TYPE_CHECKING, Any, cast

import pluggy
from attrs import evolve

from lorenz import hookspecs
from lorenz.contracts import ToolProvider, TrackerProvider
from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.redact import redact_text, redacted_traceback
from lorenz.results import error_message

from .checks import core_requirement_problem, is_first_party, normalize_distribution
from .clashes import DISABLE_PLUGINS_ENV, Contribution, settle
from .containment import PluginError, call_plugin, describe_exception
from .contributions import NAMED_HOOKS, collect
from .model import Discovery, Mounts, PluginFailure, PluginInfo, PluginLifespan
from .registry import ToolRegistry, TrackerRegistry

if TYPE_CHECKING:
    from lorenz.isolation.hint import SandboxHint

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
            contributions.append(collect(pm, _owner(name, dist, version), name, plugin, dist, version))
        except Exception as exc:
            all_failures.append(_failure(ENTRY_POINT_GROUP, name, dist, version, exc))
    nouns = {"packs": "pack name", "trackers": "tracker kind"}
    nouns.update({field: noun for field, noun, _ in NAMED_HOOKS.values()})
    winners: dict[str, dict[str, Any]] = {}
    for field, noun in nouns.items():
        claims: dict[str, list[tuple[Contribution, Any]]] = {}
        for contribution in contributions:
            for obj in getattr(contribution, field):
                claims.setdefault(_key(field, obj), []).append((contribution, obj))
        winners[field], losers = settle(claims, noun)
        all_failures.extend(
            PluginFailure(
                group=ENTRY_POINT_GROUP,
                name=loser.name,
                distribution=loser.distribution,
                version=loser.version,
                error=message,
            )
            for loser, message in losers
        )
    tools, trackers = ToolRegistry(), TrackerRegistry()
    kept_by_field: dict[str, list[Any]] = {field: [] for field in nouns}
    infos: list[PluginInfo] = []
    lifespan: list[PluginLifespan] = []
    for contribution in contributions:
        kept = {
            field: [obj for obj in getattr(contribution, field) if winners[field].get(_key(field, obj)) is obj]
            for field in nouns
        }
        for field, objs in kept.items():
            kept_by_field[field].extend(objs)
        for tracker in kept["trackers"]:
            trackers.register(cast(TrackerProvider, tracker))
        for pack in kept["packs"]:
            tools.register(cast(ToolProvider, pack))
        if not any(kept.values()) and contribution.name not in origins:
            continue  # an in-process helper object with no registrations
        infos.append(
            PluginInfo(
                name=contribution.name,
                distribution=contribution.distribution,
                version=contribution.version,
                **{field: tuple(_key(field, obj) for obj in objs) for field, objs in kept.items()},
            )
        )
        if contribution.startup is not None or contribution.shutdown is not None:
            lifespan.append(
                PluginLifespan(plugin=contribution.name, startup=contribution.startup, shutdown=contribution.shutdown)
            )
    return Discovery(
        tools=tools,
        trackers=trackers,
        plugins=tuple(infos),
        failures=tuple(all_failures),
        disabled=tuple(disabled),
        middleware=tuple(kept_by_field["middleware"]),
        catalog=tuple(kept_by_field["catalog"]),
        sinks=tuple(kept_by_field["sinks"]),
        commands=tuple(kept_by_field["commands"]),
        lifespan=tuple(lifespan),
    )


def _key(field: str, obj: Any) -> str:
    """The name a registration is known by: a tracker's kind, anything else's name, trimmed."""
    return str(obj.kind if field == "trackers" else obj.name).strip()


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
    return bool(mounts.middleware - {name for info in discovery.plugins for name in info.extensions})
