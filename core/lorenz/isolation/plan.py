"""Which packs run isolated, where their process imports them from, and what it is told.

``server.isolated_packs`` names packs, or ``"*"`` for every pack whose distribution is not shipped
with Lorenz (:func:`lorenz.plugins.checks.is_first_party`; a ``-p`` plugin module counts as not
shipped). A child gets only the settings slice its pack needs (:func:`pack_settings`) and the
secrets found in that slice, for redaction; environment variables holding the workflow's other
secrets are left out of its environment.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from attrs import evolve, frozen

from lorenz.plugins.checks import is_first_party
from lorenz.plugins.declared import permissions_of
from lorenz.plugins.hint import isolation_hint
from lorenz.plugins.paths import plugin_files
from lorenz.sandbox.host import PackSandbox
from lorenz.sandbox.permissions import Permissions
from lorenz.sandbox.policy import Sandbox
from lorenz.settings.model import ServerSettings, Settings, TrackerSettings

from .protocol import CONVERTER, Launch, Source

if TYPE_CHECKING:
    from lorenz.contracts import ToolProvider
    from lorenz.plugins.model import Discovery

__all__ = [
    "ALL_THIRD_PARTY",
    "Plan",
    "effective_permissions",
    "is_isolated",
    "is_sandboxed",
    "isolation_hint",
    "pack_settings",
    "plan_for",
    "sandboxing_for",
    "source_of",
]

#: The ``server.isolated_packs`` entry meaning every pack not shipped with Lorenz.
ALL_THIRD_PARTY = "*"


def is_isolated(pack: str, distribution: str | None, isolated: Sequence[str], instance: str | None = None) -> bool:
    """Whether ``server.isolated_packs`` (``isolated``) puts ``pack`` (serving the ``tools:`` key
    ``instance``, if given) in a process of its own."""
    if instance is not None and instance in isolated:
        return True
    return pack in isolated or (ALL_THIRD_PARTY in isolated and not is_first_party(distribution))


def source_of(pack: ToolProvider, discovery: Discovery) -> Source | None:
    """Where a child imports ``pack`` from (``None``: it came from an object handed to discovery
    in-process, which no other process can import)."""
    source = getattr(pack, "isolation_source", None)
    if isinstance(source, Source):
        return source
    for info in discovery.plugins:
        if pack.name not in info.packs:
            continue
        if info.distribution is not None:
            entry_point = info.name.removeprefix(f"{info.distribution}:")
            return Source(distribution=info.distribution, version=info.version, entry_point=entry_point)
        module = sys.modules.get(info.name)
        if module is not None and getattr(module, "__spec__", None) is not None:
            return Source(module=info.name)
    return None


def pack_settings(settings: Settings, pack: str, *, own_tracker: bool) -> Settings:
    """What an isolated pack's process is told: its own ``tools.<pack>`` map, the tracker in full
    only when the same distribution provides it (else its kind and states, no endpoint or key), the
    limits that bound its calls (no token, no other server key), and the secrets found in what is
    left (for redaction). What is not here cannot restart its processes on a reload either."""
    tracker = settings.tracker
    if not own_tracker:
        tracker = TrackerSettings(
            kind=tracker.kind,
            active_states=tracker.active_states,
            terminal_states=tracker.terminal_states,
            dispatch=tracker.dispatch,
        )
    server = settings.server
    options = (settings.tool_options or {}).get(pack)
    sliced = Settings(
        tracker=tracker,
        tool_options={pack: options} if options is not None else None,
        server=ServerSettings(
            tool_timeout_seconds=server.tool_timeout_seconds,
            max_result_bytes=server.max_result_bytes,
            pack_memory_mb=server.pack_memory_mb,
        ),
        workflow_path=settings.workflow_path,
        base_dir=settings.base_dir,
    )
    strings = list(_strings(CONVERTER.unstructure(sliced)))
    return evolve(sliced, secrets=frozenset(s for s in settings.secrets if any(s in text for text in strings)))


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


@frozen(kw_only=True)
class Plan:
    """How to run one isolated pack: the same plan means the same processes (a reload keeps them)."""

    pack: str
    #: The ``tools:`` key the pack serves when it is not its own name (one process set each).
    instance: str | None = None
    source: Source
    #: The settings slice, unstructured (JSON data).
    settings: Mapping[str, Any]
    memory_mb: int | None
    processes: int
    #: Every secret of the workflow: the host redacts the child's stderr with all of them.
    secrets: frozenset[str]
    #: Environment variables the child does not get (they hold secrets outside its slice).
    withheld: frozenset[str]
    #: What it may reach when ``server.sandboxed_packs`` confines it (``None``: not sandboxed).
    permissions: Permissions | None = None
    #: ``server.sandbox_fallback``: what to do where the kernel cannot confine it.
    sandbox_fallback: str = "fail"
    #: Its permissions are a function of its settings that only a child may compute (the host
    #: never imported it): ``permissions`` holds the operator's additions until then.
    computes_permissions: bool = False

    @property
    def timeout(self) -> float:
        """``server.tool_timeout_seconds``, as the pack's settings slice has it."""
        return float(self.settings["server"]["tool_timeout_seconds"])

    @property
    def key(self) -> str:
        return json.dumps(
            [
                self.pack,
                self.instance,
                CONVERTER.unstructure(self.source),
                self.settings,
                self.memory_mb,
                self.processes,
                CONVERTER.unstructure(self.permissions),
                self.sandbox_fallback,
                self.computes_permissions,
            ],
            sort_keys=True,
        )

    def launch(self, sandbox: Sandbox | None = None) -> Launch:
        return Launch(
            sandbox=sandbox,
            mode="serve",
            source=self.source,
            pack=self.pack,
            settings=self.settings,
            memory_mb=self.memory_mb,
            sys_path=tuple(sys.path),
        )


def plan_for(
    pack: ToolProvider, settings: Settings, discovery: Discovery, env: Mapping[str, str], instance: str | None = None
) -> Plan | None:
    """The :class:`Plan` for ``pack`` (serving the ``tools:`` key ``instance``, if given) when
    ``server.isolated_packs`` isolates it; ``None`` when it runs in the host. Raises ``ValueError``
    when it is isolated but no process can import it."""
    server = settings.server
    source = source_of(pack, discovery)
    distribution = source.distribution if source is not None else None
    if not is_isolated(pack.name, distribution, server.isolated_packs, instance):
        return None
    if is_sandboxed(pack.name, distribution, server, instance) and getattr(pack, "sandboxes_itself", False) is True:
        return None  # it confines the third party's program it runs, in the host (``sandboxed(settings)``)
    if source is None:
        msg = (
            f"pack {pack.name} cannot run isolated (server.isolated_packs): it was handed to the host as an "
            "object, not installed as a distribution nor given as an importable -p module"
        )
        raise ValueError(msg)
    tracker_dist = next(
        (info.distribution for info in discovery.plugins if settings.tracker.kind in info.trackers), None
    )
    own_tracker = distribution is not None and tracker_dist == distribution
    sliced = pack_settings(settings, pack.name, own_tracker=own_tracker)
    others = settings.secrets - sliced.secrets
    withheld = frozenset(name for name, value in env.items() if any(secret in value for secret in others))
    sandboxed = is_sandboxed(pack.name, distribution, server, instance)
    return Plan(
        pack=pack.name,
        instance=instance,
        source=source,
        settings=CONVERTER.unstructure(sliced),
        memory_mb=server.pack_memory_mb,
        processes=server.pack_processes,
        secrets=settings.secrets,
        withheld=withheld,
        permissions=effective_permissions(pack, settings, sliced, instance) if sandboxed else None,
        sandbox_fallback=server.sandbox_fallback,
        computes_permissions=sandboxed and bool(getattr(pack, "permissions_depend_on_settings", False)),
    )


def is_sandboxed(pack: str, distribution: str | None, server: ServerSettings, instance: str | None = None) -> bool:
    """Whether ``server.sandboxed_packs`` confines ``pack`` (serving ``instance``) to its permissions."""
    return is_isolated(pack, distribution, server.sandboxed_packs, instance)


def effective_permissions(
    pack: ToolProvider, settings: Settings, sliced: Settings | None = None, instance: str | None = None
) -> Permissions:
    """What ``pack`` declares, widened by the operator's ``tools.<key>.permissions`` (the key the
    pack is mounted under: ``instance`` or its own name). Permissions computed from settings see
    ``sliced`` (what its process is told), else ``settings``; raises ``ValueError`` when computing
    them fails."""
    declared = permissions_of(pack, sliced or settings) or Permissions()
    granted = settings.tool_permissions.get(instance or pack.name)
    return declared.widened(granted) if granted is not None else declared


def sandboxing_for(plan: Plan) -> PackSandbox | None:
    """The host's side of ``plan``'s sandbox, when ``server.sandboxed_packs`` confines it."""
    if plan.permissions is None:
        return None
    base_dir = plan.settings.get("base_dir")
    return PackSandbox(
        plan.pack,
        plan.permissions,
        fallback=plan.sandbox_fallback,
        workflow_dir=str(base_dir) if base_dir else None,
        sys_path=sys.path,
        plugin_files=plugin_files(plan.source.entry_point, plan.source.distribution),
    )
