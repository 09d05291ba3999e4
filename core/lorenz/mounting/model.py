"""What mounting produces: :class:`Mounted` (the packs that mounted, their flat tool namespace,
what is switched off and what was left out), :class:`PackFailure` (one pack, or one item of a
``dynamic_tools`` pack, left out and why), and :class:`MountError` (a name two packs declare).
:func:`lorenz.mounting.mount.mount` builds them; the host, the CLI and isolation read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

from lorenz.contracts import ToolProvider, ToolSpec

from .offers import Offered

if TYPE_CHECKING:
    from .policy import DisabledEntry

__all__ = ["MountError", "Mounted", "PackFailure"]


class MountError(ValueError):
    """Two packs declare the same tool name."""


@frozen(kw_only=True)
class PackFailure:
    """A pack the workflow mounts that was left out, and why."""

    pack: str
    error: str
    traceback: str | None = None
    #: Set when only this of the pack was left out (a ``dynamic_tools`` pack's): ``("tool", name)``,
    #: ``("prompt", name)`` or ``("resource", uri)``.
    item: tuple[str, str] | None = None

    @property
    def tool(self) -> str | None:
        return self.item[1] if self.item is not None and self.item[0] == "tool" else None

    def to_dict(self) -> dict[str, Any]:
        found = {"pack": self.pack, "error": self.error}
        return found if self.item is None else {**found, self.item[0]: self.item[1]}


@frozen(kw_only=True, eq=False)
class Mounted:
    """The outcome of mounting: the packs that mounted, their tools, and the packs left out."""

    packs: tuple[ToolProvider, ...] = ()
    specs: tuple[ToolSpec, ...] = ()
    #: ``{tool name: the pack declaring it}``
    owners: Mapping[str, ToolProvider] = {}
    failures: tuple[PackFailure, ...] = ()
    #: Tools switched off (``server.disabled_tools``, a typed pack's disabled tools), by name.
    disabled: Mapping[str, DisabledEntry] = {}
    #: The packs' resources, resource templates and prompts.
    offers: Offered = field(factory=Offered)
    #: Tools of ``dynamic_tools`` packs the host cannot serve, one :class:`PackFailure` each.
    dropped: tuple[PackFailure, ...] = ()

    def pack_of(self, tool: str) -> str | None:
        pack = self.owners.get(tool)
        return pack.name if pack is not None else None
