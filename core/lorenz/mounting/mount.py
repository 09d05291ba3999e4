"""Mounting: which packs a workflow mounts, their flat tool namespace, and routing a call.

:func:`mount` degrades instead of dying: a pack whose plugin failed to load, whose ``tool_specs``
raises or returns something that is not a list of :class:`~lorenz.ToolSpec`, or whose
``validate_options`` raises anything but the ``ValueError`` the contract uses to name a bad key, is
left out and reported as a :class:`PackFailure`; the rest mount. What stays an error is a broken
request: an unknown pack name, a bad option, two packs declaring one tool name.

A pack whose tools someone else lists (``dynamic_tools``: an upstream MCP server's) cannot break the
request: a tool of it the host cannot serve under its name (not a valid name, taken by another
pack, a ``rename`` of a tool it does not list) is dropped and reported (:attr:`Mounted.dropped`),
its other tools mount. The packs whose tools are their own claim their names first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from lorenz.contracts import ToolContext, ToolProvider, ToolSpec
from lorenz.plugins.containment import PluginError, call_plugin
from lorenz.plugins.registry import RegistryError, ToolRegistry, TrackerRegistry
from lorenz.redact import redact_text, redacted_traceback
from lorenz.results import ToolResult, error_message, unsupported_tool_failure
from lorenz.settings.errors import ConfigError
from lorenz.settings.model import Settings, ToolInstance
from lorenz.settings.suggest import did_you_mean, shown

from .instances import InstancePack, check_served_names, instance_settings
from .model import Mounted, MountError, PackFailure
from .offers import OfferCollision, offered
from .policy import switched_off
from .tool_names import claim_names, dynamic, log_dropped

if TYPE_CHECKING:
    from lorenz.plugins.model import Discovery

__all__ = [
    "Isolation",
    "checked_tool_specs",
    "execute_mounted_tool",
    "mount",
    "mounted_pack_names",
    "mounted_packs",
    "mounted_skill_sources",
    "mounted_tool_specs",
]


class Isolation(Protocol):
    """Puts packs in processes of their own (:class:`lorenz.isolation.pool.IsolationPool`)."""

    def prepare(self, packs: Sequence[ToolProvider], settings: Settings, discovery: Discovery) -> None:
        """Start the processes of the isolated ones among the packs about to be mounted, all at once."""
        ...

    def pack(
        self, pack: ToolProvider, settings: Settings, discovery: Discovery, *, instance: str | None = None
    ) -> ToolProvider:
        """What to mount for ``pack`` (itself, or a proxy of its processes); ``instance``: the
        ``tools:`` key it serves when that is not its own name (its processes are its own).
        Raises ``ConfigError`` when the pack refuses its options, anything else when it cannot
        start."""
        ...


def mounted_pack_names(settings: Settings, tools: ToolRegistry, trackers: TrackerRegistry) -> list[str]:
    """The packs to mount, first-seen order: the tracker's defaults, then every ``tools:`` key.

    A tracker without ``default_tool_packs`` (or an unregistered kind) falls back to a pack
    named like ``tracker.kind``, if one is registered. A tracker returning ``[]`` mounts none.
    Raises :class:`~lorenz.plugins.containment.PluginError` when the tracker's hook raises.
    """
    names: dict[str, None] = {}
    kind = settings.tracker.kind
    tracker = trackers.get(kind)
    hook = getattr(tracker, "default_tool_packs", None) if tracker is not None else None
    defaults = None
    if callable(hook):
        defaults = call_plugin(f"tracker {kind}", "default_tool_packs", lambda: _names(hook(settings)))
    if defaults is not None:
        for name in defaults:
            names.setdefault(name, None)
    elif kind is not None and tools.get(kind) is not None:
        names.setdefault(kind, None)
    for name in settings.tool_options or {}:
        names.setdefault(name, None)
    return list(names)


def _names(value: Any) -> list[str] | None:
    if value is None:
        return None
    names = list(value)
    if not all(isinstance(name, str) for name in names):
        msg = f"default_tool_packs must return pack names (strings), got {names!r:.80}"
        raise TypeError(msg)
    return names


def mounted_packs(settings: Settings, tools: ToolRegistry, trackers: TrackerRegistry) -> list[ToolProvider]:
    """The mounted packs themselves (an instance wrapped as :class:`InstancePack`); an unregistered
    name raises ``unsupported tool pack: …``."""
    packs: list[ToolProvider] = []
    for name in mounted_pack_names(settings, tools, trackers):
        instance = settings.tool_instances.get(name)
        pack = _provider_pack(tools, name, instance)
        packs.append(pack if instance is None or instance.plain else InstancePack(instance, pack))
    return packs


def _never_imported(name: str, provider: str, source: Any, settings: Settings) -> str:
    """Why the pack ``tools.<name>`` (served by ``provider``) runs in the host unimported: its
    plugin was surveyed for another ``server.isolated_packs``, or the tracker named it by default
    only once it had the settings (discovery imports what it names before it has them)."""
    if name in (settings.tool_options or {}):
        return f"pack {provider} is no longer isolated but was never imported here; restart the host"
    return (
        f"tracker {settings.tracker.kind} mounts pack {name} by default (default_tool_packs), but names it only"
        f" with this workflow's settings, so discovery surveyed {source.label} without"
        f" importing it: add `{name}: {{}}` under `tools:` to mount it"
    )


def _provider_pack(tools: ToolRegistry, name: str, instance: ToolInstance | None) -> ToolProvider:
    """The pack serving ``tools.<name>``; unknown: ``unsupported tool pack`` (with a did-you-mean
    naming ``tools.<name>.provider`` for an instance)."""
    if instance is None or instance.provider == name:
        return tools.require(name)
    pack = tools.get(instance.provider)
    if pack is None:
        known = tools.names()
        msg = (
            f"tools.{name}.provider: unsupported tool pack: {shown(instance.provider)}"
            f"{did_you_mean(instance.provider, known)} (known tool packs: {', '.join(known) or 'none'})"
        )
        raise RegistryError(msg)
    return pack


def mounted_tool_specs(packs: Sequence[ToolProvider], settings: Settings) -> list[ToolSpec]:
    """All tools of ``packs`` in one flat namespace; a name two packs declare raises
    :class:`MountError`."""
    owner: dict[str, str] = {}
    specs: list[ToolSpec] = []
    for pack in packs:
        for spec in pack.tool_specs(settings):
            _claim(owner, spec.name, pack.name)
            specs.append(spec)
    return specs


def _claim(owner: dict[str, str], tool: str, pack: str, providers: Mapping[str, str] | None = None) -> bool:
    """Record ``pack`` as declaring ``tool``; False when it already did, MountError for another pack.
    ``providers``: ``{tools: key: the pack serving it}``, for the message."""
    first = owner.setdefault(tool, pack)
    if first != pack:
        msg = f'tool name collision: {tool} is declared by both the "{first}" and "{pack}" packs'
        served_by = providers or {}
        provider = served_by.get(pack, pack)
        if served_by.get(first, first) == provider:
            msg += f' (both are instances of the "{provider}" pack)'
        msg += f"; serve one under other names with prefix: or rename: (tools: {{{pack}: {{prefix: {pack}_}}}})"
        raise MountError(msg)
    return True


def checked_tool_specs(pack: ToolProvider, settings: Settings) -> list[ToolSpec]:
    """``pack.tool_specs(settings)`` as a list, refusing anything that is not a :class:`ToolSpec`."""
    specs = list(pack.tool_specs(settings))
    for spec in specs:
        if not isinstance(spec, ToolSpec):
            msg = f"tool_specs returned a {type(spec).__name__}, not a ToolSpec"
            raise TypeError(msg)
    return specs


def _validate_options(pack: ToolProvider, name: str, options: Mapping[str, Any]) -> None:
    """The pack's ``validate_options``: its ``ValueError`` is a config error naming the key."""
    validate = getattr(pack, "validate_options", None)
    if not callable(validate):
        if options:
            msg = f'tools.{name} is not supported by the "{name}" pack'
            raise ConfigError(msg)
        return
    try:
        call_plugin(f"pack {name}", "validate_options", validate, options)
    except PluginError as exc:
        if isinstance(exc.original, ValueError):
            raise ConfigError(error_message(exc.original)) from exc.original
        raise


def mount(settings: Settings, discovery: Discovery, isolation: Isolation | None = None) -> Mounted:
    """Mount the workflow's packs, leaving out (and reporting) the ones that are broken.

    With ``isolation``, each pack ``server.isolated_packs`` names is started in processes of its
    own and a proxy is mounted in its place. Raises ``RegistryError`` for an unknown pack name,
    ``ConfigError`` for options a pack refuses, and :class:`MountError` for a tool name (or a
    resource URI, template or prompt name) two packs declare.
    """
    tools, trackers = discovery.tools, discovery.trackers
    failures: list[PackFailure] = []
    try:
        names = mounted_pack_names(settings, tools, trackers)
    except PluginError as exc:
        failures.append(_pack_failure(str(settings.tracker.kind), exc, settings))
        names = list(settings.tool_options or {})
    packs: list[ToolProvider] = []
    listed: list[list[ToolSpec]] = []
    #: What of a ``dynamic_tools`` pack is left out: ``(pack, (kind, name), why)``.
    left_out: list[tuple[str, tuple[str, str], str]] = []
    declared: dict[str, str] = {}
    instances = settings.tool_instances
    providers = {name: instances[name].provider if name in instances else name for name in names}
    if isolation is not None:  # instances start when mounted, each with its own options
        plain = [tools.get(name) for name in names if name not in instances]
        isolation.prepare([pack for pack in plain if pack is not None], settings, discovery)
    for name in names:
        instance = instances.get(name)
        provider = providers[name]
        pack = tools.get(provider)
        if pack is None:
            gone = discovery.gone_pack(provider)
            if gone is not None:
                failures.append(PackFailure(pack=name, error=f"pack {provider} is not available: {gone.error}"))
                continue
            failure = discovery.failure_for_pack(provider)
            if failure is None:
                _provider_pack(tools, name, instance)  # raises: unsupported tool pack, listing the known ones
                continue
            error = (
                f"pack {provider} is not available: plugin {failure.name} ({failure.origin}) failed: {failure.error}"
            )
            failures.append(PackFailure(pack=name, error=error))
            continue
        if isolation is not None:
            try:
                if instance is None or instance.plain:
                    pack = isolation.pack(pack, settings, discovery)
                else:
                    view = instance_settings(settings, instance)
                    pack = isolation.pack(pack, view, discovery, instance=name)
            except ConfigError as exc:
                if instance is None or instance.plain:
                    raise
                raise ConfigError(InstancePack(instance, pack).reworded(str(exc))) from exc
            except Exception as exc:  # it cannot start: left out, like a pack whose tool_specs raised
                failures.append(PackFailure(pack=name, error=redact_text(error_message(exc), settings.secrets)))
                continue
        source = getattr(pack, "isolation_source", None)
        if source is not None:  # still a stand-in: discovery surveyed its plugin, never imported it here
            failures.append(PackFailure(pack=name, error=_never_imported(name, provider, source, settings)))
            continue
        if instance is not None and not instance.plain:
            pack = InstancePack(instance, pack)
        try:
            _validate_options(pack, name, (settings.tool_options or {}).get(name, {}))
            pack_specs = call_plugin(f"pack {name}", "tool_specs", checked_tool_specs, pack, settings)
            if isinstance(pack, InstancePack):
                own = call_plugin(f"pack {name}", "tool_specs", _own_names, pack, settings)
                prompts = _own_prompts(pack, settings) if pack.instance.rename else ()
                for tool, problem in check_served_names(pack, own, prompts, lenient=dynamic(pack)):
                    left_out.append((name, ("tool", tool), problem))
        except PluginError as exc:
            failures.append(_pack_failure(name, exc, settings))
            continue
        packs.append(pack)
        listed.append(pack_specs)
    specs, owners = claim_names(packs, listed, declared, lambda t, p: _claim(declared, t, p, providers), left_out)
    try:
        offers = offered(packs, settings, left_out)
    except OfferCollision as exc:  # a URI or prompt name two packs declare fails here, like a tool name
        raise MountError(str(exc)) from None
    dropped = [PackFailure(pack=p, item=item, error=redact_text(e, settings.secrets)) for p, item, e in left_out]
    for drop in dropped:
        log_dropped(drop.pack, str(drop.item), drop.error)
    disabled = switched_off(packs, specs, owners, settings)
    return Mounted(
        packs=tuple(packs),
        specs=tuple(spec for spec in specs if spec.name not in disabled),
        owners={name: pack for name, pack in owners.items() if name not in disabled},
        failures=tuple(failures),
        disabled=disabled,
        offers=offers,
        dropped=tuple(dropped),
    )


def _own_names(pack: InstancePack, settings: Settings) -> list[str]:
    """Every tool the instance's pack has under these settings, enabled or disabled, by its own name."""
    view = pack.view(settings)
    names = [spec.name for spec in checked_tool_specs(pack.inner, view)]
    hook = getattr(pack.inner, "disabled_tools", None)
    if callable(hook):
        names += [str(getattr(entry, "name", "")) for entry in hook(view)]
    return names


def _own_prompts(pack: InstancePack, settings: Settings) -> list[str]:
    """The names of the instance's pack's own prompts (none when it has none, or its hook fails)."""
    hook = getattr(pack.inner, "prompt_specs", None)
    try:
        return [str(getattr(spec, "name", "")) for spec in hook(pack.view(settings))] if callable(hook) else []
    except Exception:  # its offers fail again, and are reported, when the mount collects them
        return []


def _pack_failure(name: str, exc: PluginError, settings: Settings) -> PackFailure:
    return PackFailure(
        pack=name,
        error=redact_text(str(exc), settings.secrets),
        traceback=redacted_traceback(exc.original, settings.secrets),
    )


async def execute_mounted_tool(
    packs: Sequence[ToolProvider], name: str, input: Any, context: ToolContext
) -> ToolResult:
    """Run ``name`` of the first of ``packs`` declaring it, as the MCP host runs a call
    (:func:`lorenz.toolcall.call.call_tool`: arguments checked, within the tool timeout, the result
    checked). Never raises: whatever the pack raises becomes a failure result and an unknown name
    lists every tool of ``packs``."""
    from lorenz.toolcall.call import ToolTable, call_tool  # anyio: only when a tool runs
    from lorenz.toolcall.execution import ToolRunner, failure_from_exception  # anyio: only when a tool runs

    owners: dict[str, ToolProvider] = {}
    specs: list[ToolSpec] = []
    for pack in sorted(packs, key=dynamic):  # the packs whose tools are their own claim names first
        try:
            pack_specs = call_plugin(f"pack {pack.name}", "tool_specs", checked_tool_specs, pack, context.settings)
        except PluginError as exc:
            return failure_from_exception(exc, context)
        for spec in pack_specs:
            if spec.name not in owners:
                owners[spec.name] = pack
                specs.append(spec)
        if name in owners:
            break

    def unsupported(tool: str) -> ToolResult:
        return unsupported_tool_failure(tool, [spec.name for spec in specs])

    tools = ToolTable(settings=context.settings, specs=specs, owners=owners, unsupported=unsupported)
    return (await call_tool(tools, name, input, lambda: context, ToolRunner())).result


def _skills_of(pack: ToolProvider) -> list[str]:
    return [str(skill) for skill in getattr(pack, "skills", None) or ()]


def mounted_skill_sources(packs: Sequence[ToolProvider]) -> list[str]:
    """The skill directories of the mounted packs, de-duplicated, first occurrence kept (a pack whose
    ``skills`` raises, whatever it raises, contributes none)."""
    seen: dict[str, None] = {}
    for pack in packs:
        try:
            skills = call_plugin(f"pack {pack.name}", "skills", _skills_of, pack)
        except PluginError:
            continue
        for skill in skills:
            seen.setdefault(skill, None)
    return list(seen)
