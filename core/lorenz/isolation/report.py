"""What a mounted pack may reach, as ``lorenz check`` and the landing page show it: what the pack
declares, what the operator adds in ``tools.<key>.permissions`` and, for a sandboxed pack, the
policy its processes actually run under (paths resolved, the hosts the egress proxy lets through).

Display only: nothing here judges whether a pack declared what it needs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from attrs import frozen

from lorenz.plugins.declared import depends_on_settings, permissions_of
from lorenz.sandbox.command import SandboxedCommand
from lorenz.sandbox.permissions import Permissions

if TYPE_CHECKING:
    from lorenz.contracts import ToolProvider
    from lorenz.plugins.model import Discovery
    from lorenz.settings.model import Settings

__all__ = ["PackPolicy", "pack_policies", "pack_policy"]


@frozen(kw_only=True)
class PackPolicy:
    """One mounted pack's permissions, for people and for ``--json``."""

    pack: str
    #: ``server.sandboxed_packs`` names it.
    sandboxed: bool
    #: The kernel confines it (``False`` when not sandboxed, or run after ``sandbox_fallback: warn``).
    confined: bool
    #: What the pack declares (``None``: nothing, or computed from settings it has not been given yet).
    declared: Permissions | None
    #: Its permissions are a function of its settings.
    depends_on_settings: bool = False
    #: The operator's additions (``tools.<key>.permissions``).
    added: Permissions | None = None
    #: What its sandboxed processes run under (``None``: not sandboxed).
    effective: Permissions | None = None
    #: The private temporary directory of a confined pack.
    scratch: str | None = None
    #: Accesses the sandbox refused since the pack started.
    denials: int = 0
    #: A sandboxed program's runtime directories (read-only) and the name of their preset.
    runtime: tuple[str, ...] = ()
    preset: str | None = None

    def effective_dict(self) -> dict[str, Any] | None:
        """The effective policy with its paths resolved: what the proxy and the kernel enforce."""
        if self.effective is None:
            return None
        return {
            "network": list(self.effective.network),
            "read": list(self.effective.read_paths()),
            "write": list(self.effective.write_paths()),
            "env": list(self.effective.env),
            "subprocess": self.effective.subprocess,
            "scratch": self.scratch,
            **({"runtime": list(self.runtime), "preset": self.preset} if self.preset or self.runtime else {}),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "sandboxed": self.sandboxed,
            "confined": self.confined,
            "declared": None if self.declared is None else self.declared.to_dict(),
            "dependsOnSettings": self.depends_on_settings,
            "added": None if self.added is None else self.added.to_dict(),
            "effective": self.effective_dict(),
            "denials": self.denials,
        }

    def describe_declared(self) -> str:
        if self.declared is not None:
            return self.declared.describe()
        if self.depends_on_settings:
            return "computed from its settings when it starts"
        return "nothing"

    def lines(self) -> list[str]:
        """``lorenz check``'s account of a sandboxed pack: the effective policy, then its origins."""
        how = "confined by Landlock and the egress proxy" if self.confined else "NOT confined (sandbox_fallback: warn)"
        out = [f"sandboxed {self.pack} ({how}):"]
        effective = self.effective_dict() or {}
        for key, label in (
            ("network", "network (through the proxy)"),
            ("read", "read"),
            ("write", "write"),
            ("env", "env"),
        ):
            out.append(f"  {label}: {', '.join(effective.get(key) or []) or '-'}")
        out.append(f"  subprocess: {'yes' if effective.get('subprocess') else 'no'}")
        if self.preset or self.runtime:
            out.append(f"  runtime (preset {self.preset or '-'}, read-only): {', '.join(self.runtime) or '-'}")
        out.append(f"  declared by the pack: {self.describe_declared()}")
        if self.added is not None:
            out.append(f"  added in tools.{self.pack}.permissions: {self.added.describe()}")
        return out


def pack_policy(pack: ToolProvider, settings: Settings, discovery: Discovery | None = None) -> PackPolicy:
    """``pack``'s policy as mounted: a sandboxed (isolated) pack's from its running supervisor, an
    unsandboxed one's from what it declares. ``discovery`` holds the stand-ins of packs the host
    never imported (their declarations as the survey read them)."""
    supervisor = getattr(pack, "supervisor", None)
    sandboxing = getattr(supervisor, "sandboxing", None)
    plan = getattr(supervisor, "plan", None)
    key = str(getattr(plan, "instance", None) or pack.name)
    added = settings.tool_permissions.get(key)
    provider = str(getattr(pack, "provider", None) or getattr(plan, "pack", None) or pack.name)
    source: object = getattr(pack, "inner", None) or pack  # an instance declares what its pack does
    if supervisor is not None and discovery is not None:
        source = discovery.tools.get(provider) or pack
    dependent = depends_on_settings(source) or bool(getattr(source, "permissions_depend_on_settings", False))
    computed: Permissions | None = getattr(sandboxing, "computed", None)
    declared = computed if computed is not None else _declared(source, settings, in_host=supervisor is None)
    program = _sandboxed_program(source, pack, settings)
    if program is not None:
        return PackPolicy(
            pack=pack.name,
            sandboxed=True,
            confined=True,
            declared=declared,
            depends_on_settings=dependent,
            added=added,
            effective=program.sandbox.permissions,
            scratch=program.sandbox.temp_dir,
            runtime=program.sandbox.runtime_paths,
            preset=program.preset,
        )
    if sandboxing is None:
        return PackPolicy(
            pack=pack.name,
            sandboxed=False,
            confined=False,
            declared=declared,
            depends_on_settings=dependent,
            added=added,
        )
    running = sandboxing.sandbox
    return PackPolicy(
        pack=pack.name,
        sandboxed=True,
        confined=running is not None,
        declared=declared,
        depends_on_settings=dependent,
        added=added,
        effective=sandboxing.permissions,
        scratch=None if running is None else running.temp_dir,
        denials=sandboxing.denials,
    )


def _sandboxed_program(source: object, pack: ToolProvider, settings: Settings) -> SandboxedCommand | None:
    """The confinement of the program a pack runs itself (``sandboxed(settings)``: an MCP server
    under ``sandbox: true``), seen through an instance's view of the settings."""
    hook = getattr(source, "sandboxed", None)
    if not callable(hook):
        return None
    view = getattr(pack, "view", None)
    found = hook(view(settings) if callable(view) else settings)
    return found if isinstance(found, SandboxedCommand) else None


def _declared(source: object, settings: Settings, *, in_host: bool) -> Permissions | None:
    """What ``source`` declares; computed from ``settings`` only for a pack already in the host."""
    try:
        return permissions_of(source, settings if in_host else None)
    except ValueError:
        return None


def pack_policies(
    packs: Iterable[ToolProvider], settings: Settings, discovery: Discovery | None = None
) -> dict[str, PackPolicy]:
    """Each of ``packs``'s :class:`PackPolicy`, by name."""
    return {pack.name: pack_policy(pack, settings, discovery) for pack in packs}
