"""Which tools one caller may call: mounted, not switched off, and allowed by its token.

A call's :class:`~lorenz.contracts.ToolContext` answers ``is_enabled`` with it; an isolated pack's
process is sent :meth:`EnabledTools.names` instead, since it cannot ask the host back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from attrs import frozen

__all__ = ["EnabledTools"]


@frozen
class EnabledTools:
    """``tool in owners`` and, when ``allows`` is given, allowed by the caller's grant."""

    owners: Mapping[str, object]
    allows: Callable[[str], bool] | None = None

    def __call__(self, tool: str) -> bool:
        return tool in self.owners and (self.allows is None or self.allows(tool))

    def names(self) -> list[str]:
        """Every tool this caller may call, sorted."""
        allows = self.allows
        return sorted(name for name in self.owners if allows is None or allows(name))
