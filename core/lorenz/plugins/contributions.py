"""One plugin's registrations: its ``register``-shaped hooks called, what they registered checked.

:func:`collect` calls a plugin's implementations of the declared hooks, and only those (pluggy's
hook callers, never an attribute probe), and refuses the whole plugin when a registration breaks
its contract. The named registrations (middleware, catalog shapers, call-record sinks, commands)
share a namespace per hook across plugins, settled by :func:`lorenz.plugins.clashes.settle`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

from lorenz.contracts import ToolProvider, TrackerProvider

from .checks import pack_shape_problem, tracker_shape_problem
from .clashes import Contribution
from .containment import call_plugin
from .registry import ToolRegistry, TrackerRegistry
from .skill_roots import note_plugin

__all__ = ["NAMED_HOOKS", "collect"]

#: The hooks whose registrations are named objects: ``{hook: (Contribution field, noun, what
#: each must have beside its str name)}``.
NAMED_HOOKS: dict[str, tuple[str, str, str]] = {
    "lorenz_call_middleware": ("middleware", "middleware name", "create"),
    "lorenz_catalog": ("catalog", "catalog shaper name", "create"),
    "lorenz_call_record": ("sinks", "call-record sink name", "create"),
    "lorenz_register_commands": ("commands", "command name", "run"),
}


def collect(
    pm: pluggy.PluginManager, owner: str, name: str, plugin: object, dist: str | None, version: str | None
) -> Contribution:
    """Call one plugin's registration hooks and check what it registered; raises on any problem."""
    packs: list[ToolProvider] = []
    kinds: list[TrackerProvider] = []
    named: dict[str, list[Any]] = {field: [] for field, _, _ in NAMED_HOOKS.values()}
    hooks: dict[str, Callable[[Any], None]] = {
        "lorenz_register_trackers": kinds.append,
        "lorenz_register_tool_packs": packs.append,
        **{hook: named[field].append for hook, (field, _, _) in NAMED_HOOKS.items()},
    }
    for hook_name, register in hooks.items():
        call_plugin(owner, hook_name, _call_impls, pm, plugin, hook_name, register)
    problems = [tracker_shape_problem(tracker, owner) for tracker in kinds]
    problems += [pack_shape_problem(pack, owner) for pack in packs]
    for hook_name, (field, noun, member) in NAMED_HOOKS.items():
        problems += [_named_shape_problem(obj, owner, hook_name, noun, member) for obj in named[field]]
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
        middleware=tuple(named["middleware"]),
        catalog=tuple(named["catalog"]),
        sinks=tuple(named["sinks"]),
        commands=tuple(named["commands"]),
        startup=_lifespan_impl(pm, plugin, "lorenz_startup"),
        shutdown=_lifespan_impl(pm, plugin, "lorenz_shutdown"),
    )


def _named_shape_problem(obj: object, owner: str, hook: str, noun: str, member: str) -> str | None:
    name = getattr(obj, "name", None)  # the declared member the namespace is keyed by
    if not isinstance(name, str) or not name.strip() or not callable(getattr(obj, member, None)):
        what = noun.removesuffix(" name")
        return f"{owner}: a {what} ({hook}) needs a non-blank str `name` and a callable `{member}`"
    return None


def _lifespan_impl(pm: pluggy.PluginManager, plugin: object, hook_name: str) -> Callable[[Any], Any] | None:
    """``plugin``'s own implementation of the lifespan hook ``hook_name`` as ``f(settings)``, if any."""
    caller = getattr(pm.hook, hook_name)
    impl = next((impl for impl in caller.get_hookimpls() if impl.plugin is plugin), None)
    if impl is None:
        return None
    function, wants = impl.function, "settings" in impl.argnames
    return lambda settings: function(settings=settings) if wants else function()


def _call_impls(pm: pluggy.PluginManager, plugin: object, hook_name: str, register: Callable[[Any], None]) -> None:
    """Call ``plugin``'s implementation of ``hook_name`` (if any) with the ``register`` callback."""
    caller = getattr(pm.hook, hook_name)
    for impl in caller.get_hookimpls():
        if impl.plugin is plugin:
            kwargs = {arg: register for arg in impl.argnames if arg == "register"}
            impl.function(**kwargs)
