"""Who keeps a pack name or tracker kind that several plugins register: the distribution shipped
with Lorenz when exactly one is, else nobody; the same whatever the order of installation."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from attrs import frozen

from lorenz.contracts import ToolProvider, TrackerProvider
from lorenz.middleware import MiddlewareProvider

from .checks import is_first_party

if TYPE_CHECKING:
    from lorenz.extensions import CatalogProvider, PluginCommand, RecordSinkProvider

__all__ = ["DISABLE_PLUGINS_ENV", "Contribution", "settle"]

#: Distributions whose plugins are left out (comma-separated), as pytest's ``-p no:NAME``.
DISABLE_PLUGINS_ENV = "LORENZ_DISABLE_PLUGINS"


@frozen(kw_only=True)
class Contribution:
    """What one plugin registered, checked and ready to commit."""

    name: str
    distribution: str | None
    version: str | None
    packs: tuple[ToolProvider, ...]
    trackers: tuple[TrackerProvider, ...]
    middleware: tuple[MiddlewareProvider, ...] = ()
    catalog: tuple[CatalogProvider, ...] = ()
    sinks: tuple[RecordSinkProvider, ...] = ()
    commands: tuple[PluginCommand, ...] = ()
    #: Its ``lorenz_startup`` / ``lorenz_shutdown`` implementations, each as ``f(settings)``.
    startup: Callable[[Any], Any] | None = None
    shutdown: Callable[[Any], Any] | None = None

    @property
    def label(self) -> str:
        if self.distribution is None:
            return f"in-process plugin {self.name}"
        return f"{self.distribution} {self.version}" if self.version else self.distribution


def settle(
    claims: Mapping[str, list[tuple[Contribution, Any]]], noun: str
) -> tuple[dict[str, Any], list[tuple[Contribution, str]]]:
    """Who keeps each name: ``({name: winner}, [(loser, message)])``, independent of plugin order."""
    winners: dict[str, Any] = {}
    losers: list[tuple[Contribution, str]] = []
    for name, claimants in claims.items():
        distinct = {id(obj): (owner, obj) for owner, obj in claimants}
        if len(distinct) == 1:
            winners[name] = claimants[0][1]
            continue
        first = [(owner, obj) for owner, obj in claimants if is_first_party(owner.distribution)]
        if len(first) == 1:
            keeper, obj = first[0]
            winners[name] = obj
            for owner, other in claimants:
                if other is not obj:
                    losers.append(
                        (
                            owner,
                            f'{noun} "{name}" is already taken by {keeper.label}, shipped with Lorenz, so the one '
                            f"from {owner.label} is not loaded: rename it in {owner.distribution or owner.name}",
                        )
                    )
            continue
        labels = sorted({owner.label for owner, _ in claimants})
        fix_targets = sorted({owner.distribution for owner, _ in claimants if owner.distribution})
        fix = (
            f"uninstall one (pip uninstall {fix_targets[-1]}) or leave one out with "
            f"{DISABLE_PLUGINS_ENV}={fix_targets[-1]}"
            if fix_targets
            else "rename one of them"
        )
        message = f'{noun} "{name}" is registered by both {" and ".join(labels)}, so neither is loaded: {fix}'
        losers.extend((owner, message) for owner, _ in claimants)
    return winners, losers
