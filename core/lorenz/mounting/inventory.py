"""Every installed tool, mounted or not: ``lorenz tools --all``, and the hint for calling a tool whose
pack is installed but not in the workflow.

The packs a workflow does not mount are asked for their tools with the workflow's settings (they get no
options of their own); one whose ``tool_specs`` raises is reported, never fatal.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import frozen

from lorenz.contracts import ToolSpec
from lorenz.plugins.containment import call_plugin
from lorenz.results import ToolResult, error_message, tool_failure, unsupported_tool_failure

from .instances import provider_of
from .model import Mounted, PackFailure
from .mount import checked_tool_specs
from .policy import disabled_failure

if TYPE_CHECKING:
    from lorenz.plugins.model import Discovery
    from lorenz.settings.model import Settings

__all__ = [
    "InstalledTool",
    "Inventory",
    "installed_tools",
    "mount_hint",
    "mount_instruction",
    "unsupported_failure",
]


@frozen(kw_only=True)
class InstalledTool:
    """One tool of an installed pack: where it comes from and whether the workflow mounts it."""

    spec: ToolSpec
    pack: str
    distribution: str | None = None
    version: str | None = None
    mounted: bool = False
    #: The ``tools:`` key serving it, when that is not ``pack`` (``provider: pack``, or renamed).
    instance: str | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def served_by(self) -> str:
        """``jira_ops (jira)`` for an instance, else the pack's name."""
        return f"{self.instance} ({self.pack})" if self.instance else self.pack

    @property
    def origin(self) -> str:
        """``lorenz-acme 0.1.0``, or ``in-process`` for a ``-p`` plugin."""
        if self.distribution is None:
            return "in-process"
        return f"{self.distribution} {self.version}" if self.version else self.distribution

    def to_dict(self) -> dict[str, Any]:
        """``{name, pack, distribution: {name, version} | null, mounted, description, inputSchema, ...}``."""
        wire = self.spec.to_wire()
        dist = None if self.distribution is None else {"name": self.distribution, "version": self.version}
        out = {"name": wire.pop("name"), "pack": self.pack, "distribution": dist, "mounted": self.mounted, **wire}
        if self.instance:
            out["instance"] = self.instance
        if self.spec.auth:  # not on the MCP wire: what an OAuth token must carry (``server.auth``)
            out["auth"] = list(self.spec.auth)
        return out


@frozen(kw_only=True)
class Inventory:
    """The installed tools (mounted packs first, in mount order; then the rest by pack name) and the
    packs that could not list theirs."""

    tools: tuple[InstalledTool, ...] = ()
    failures: tuple[PackFailure, ...] = ()

    def find(self, name: str) -> InstalledTool | None:
        return next((tool for tool in self.tools if tool.name == name), None)

    def unmounted_packs(self) -> list[str]:
        return list(dict.fromkeys(tool.pack for tool in self.tools if not tool.mounted))


def _origins(discovery: Discovery) -> dict[str, tuple[str | None, str | None]]:
    return {pack: (info.distribution, info.version) for info in discovery.plugins for pack in info.packs}


def installed_tools(discovery: Discovery, settings: Settings, mounted: Mounted, *, unmounted: bool = True) -> Inventory:
    """Every tool of every registered pack, each marked mounted or not (``unmounted=False``: the mounted
    ones only, no other pack asked)."""
    origins = _origins(discovery)
    tools: list[InstalledTool] = []
    for spec in mounted.specs:
        pack = mounted.owners[spec.name]
        owner = provider_of(pack)
        dist, version = origins.get(owner, (None, None))
        instance = pack.name if pack.name != owner else None
        tools.append(
            InstalledTool(spec=spec, pack=owner, distribution=dist, version=version, mounted=True, instance=instance)
        )
    failures: list[PackFailure] = []
    taken = {pack.name for pack in mounted.packs} | {provider_of(pack) for pack in mounted.packs}
    taken |= {failure.pack for failure in mounted.failures}
    for pack in discovery.tools if unmounted else ():
        if pack.name in taken:
            continue
        # A pack the host never imported lists the tools its survey found.
        listed = getattr(pack, "listed_specs", None)
        try:
            specs = (
                listed
                if listed is not None
                else call_plugin(f"pack {pack.name}", "tool_specs", checked_tool_specs, pack, settings)
            )
        except Exception as exc:
            failures.append(PackFailure(pack=pack.name, error=error_message(exc)))
            continue
        dist, version = origins.get(pack.name, (None, None))
        tools.extend(
            InstalledTool(spec=spec, pack=pack.name, distribution=dist, version=version, mounted=False)
            for spec in specs
        )
    return Inventory(tools=tuple(tools), failures=tuple(failures))


def mount_instruction(pack: str, workflow: Path | None) -> str:
    """``run "lorenz mount acme" or add "tools: {acme: {}}" to WORKFLOW.md``; ``workflow`` is ``None``
    under the embedded default, where ``lorenz mount`` writes the file."""
    if workflow is None:
        return f'run "lorenz mount {pack}" (it writes a WORKFLOW.md serving the local board and {pack})'
    where = _shown(workflow)
    command = f"lorenz mount {pack}" if where == "WORKFLOW.md" else f"lorenz mount {pack} {where}"
    return f'run "{command}" or add "tools: {{{pack}: {{}}}}" to {where}'


def mount_hint(tool: InstalledTool, workflow: Path | None) -> str:
    """Why ``tool`` cannot be called, and how to mount its pack."""
    return (
        f'{tool.name} is in the installed pack "{tool.pack}" ({tool.origin}), which the workflow does not mount: '
        f"{mount_instruction(tool.pack, workflow)}"
    )


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def unsupported_failure(name: str, mounted: Mounted, inventory: Inventory, workflow: Path | None) -> ToolResult:
    """The failure for a tool no mounted pack serves: why a switched-off one is off, how to mount
    an installed one, else ``Unsupported tool`` listing the mounted tools."""
    off = mounted.disabled.get(name)
    if off is not None:
        return disabled_failure(off)
    failure = unsupported_tool_failure(name, [spec.name for spec in mounted.specs])
    tool = inventory.find(name)
    if tool is None or tool.mounted:
        return failure
    message = f"{failure.error} {mount_hint(tool, workflow)}"
    supported = failure.result["error"]["supportedTools"] if isinstance(failure.result, dict) else []
    return tool_failure(message, supportedTools=supported, pack=tool.pack)
