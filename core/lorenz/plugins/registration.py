"""Registering discovered plugins: each plugin's registration hooks called on their own into fresh
registries (:func:`build_registries`).

A plugin whose hooks raise, implement a hook that does not exist, or register something that breaks
the contracts leaves nothing behind and becomes a :class:`PluginFailure`. A name two plugins claim
is settled by :func:`~lorenz.plugins.clashes.settle`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

import pluggy

from lorenz.contracts import ToolProvider, TrackerProvider
from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.redact import redact_text, redacted_traceback
from lorenz.results import error_message

from .clashes import Contribution, settle
from .containment import PluginError, call_plugin, describe_exception
from .contributions import NAMED_HOOKS, collect
from .model import Discovery, PluginFailure, PluginInfo, PluginLifespan
from .registry import ToolRegistry, TrackerRegistry

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
            contributions.append(collect(pm, owner_label(name, dist, version), name, plugin, dist, version))
        except Exception as exc:
            all_failures.append(plugin_failure(ENTRY_POINT_GROUP, name, dist, version, exc))
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
