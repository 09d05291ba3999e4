"""What ``lorenz serve`` does about a mounted pack whose code was edited on disk (:mod:`.sources`).

Python cannot import a module afresh in place safely (other modules hold its classes and
functions), so the edit is served by new processes: with ``--reload``, an isolated pack's processes
are started afresh by the next mount and an in-process pack's worker asks its supervisor to be
replaced (the workers go one at a time; calls in flight finish). Without it, the edit is reported
as needing a restart: degraded on ``/healthz``, in the landing page's banner and in the log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from attrs import evolve

from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.plugins.model import PluginFailure

from .sources import SourceWatch, editable_roots

if TYPE_CHECKING:
    from lorenz.contracts import ToolProvider
    from lorenz.isolation.pool import IsolationPool
    from lorenz.plugins.model import Discovery

    from .snapshot import Snapshot

__all__ = ["CodeEdits"]

logger = logging.getLogger("lorenz.host")


def _provider(pack: ToolProvider) -> ToolProvider:
    """The pack an instance (a ``tools:`` key of another name) wraps, or ``pack``."""
    inner = getattr(pack, "inner", None)
    return inner if inner is not None else pack


class CodeEdits:
    """The edits to mounted packs' code seen while serving, and what was made of them."""

    def __init__(self) -> None:
        self._sources = SourceWatch()
        self._edited: frozenset[str] = frozenset()
        self._fresh: frozenset[str] = frozenset()
        #: ``{pack: why}`` for the packs whose edited code this process does not serve.
        self._stale: dict[str, PluginFailure] = {}
        #: ``{pack: its distribution}`` for the packs :meth:`watch` was last given.
        self._dists: dict[str, str | None] = {}
        #: Set by ``lorenz serve --reload``: serve the edited code of the in-process packs named
        #: (the supervisor replaces this worker). Unset, an edit is reported as needing a restart.
        self.reload_code: Callable[[frozenset[str]], None] | None = None

    def watch(self, snapshot: Snapshot) -> None:
        """Look at the sources of ``snapshot``'s packs of editable installs from now on, and at
        those of the mounted packs left out and plugins that failed to load: the edit fixing
        them is served too."""
        dists = {plugin.name: plugin.distribution for plugin in snapshot.plugin_failures}
        for failure in snapshot.workspace.mounted.failures:
            dists[failure.pack] = snapshot.distribution_of(failure.pack) or dists.get(failure.pack)
        dists.update((pack.name, snapshot.distribution_of(_provider(pack).name)) for pack in snapshot.packs)
        self._dists = dists
        roots = {name: editable_roots(dist) for name, dist in dists.items() if dist}
        self._sources.watch({name: found for name, found in roots.items() if found})

    def pending(self) -> bool:
        """Whether packs were edited (or a stale one imported afresh) since the last :meth:`apply`;
        the sources are looked at once per second at most."""
        if self._sources.due():
            edited, fresh = self._sources.look()
            self._edited |= edited
            self._fresh |= fresh & self._stale.keys()
        return bool(self._edited or self._fresh)

    def stale(self) -> tuple[PluginFailure, ...]:
        """The packs whose edited code this process does not serve (for a rediscovery's result)."""
        return tuple(self._stale.values())

    def apply(self, snapshot: Snapshot, discovery: Discovery, isolation: IsolationPool) -> Discovery:
        """Act on the pending edits (see the module docstring); the discovery to mount with next."""
        edited, self._edited = self._edited, frozenset()
        fresh, self._fresh = self._fresh, frozenset()
        before = self.stale()
        for name in fresh:
            self._stale.pop(name, None)  # imported afresh (a reinstall): served as it is on disk
        packs = {pack.name: pack for pack in snapshot.packs}
        isolated = {name for name in edited if name in packs and getattr(_provider(packs[name]), "isolated", False)}
        if self.reload_code is not None:
            if isolated:
                logger.info("lorenz: the code of %s changed: restarting its processes", ", ".join(sorted(isolated)))
                isolation.restart(isolated)
            if edited - isolated:
                logger.info(
                    "lorenz: the code of %s changed: replacing this worker", ", ".join(sorted(edited - isolated))
                )
                self.reload_code(edited - isolated)
        else:
            for name in sorted(edited - self._stale.keys()):
                error = f"pack {name}'s code changed; restart lorenz serve to serve it (or serve with --reload)"
                logger.warning("lorenz: %s", error)
                dist = self._dists.get(name)
                version = next(
                    (i.version for i in snapshot.workspace.discovery.plugins if i.distribution == dist), None
                )
                self._stale[name] = PluginFailure(
                    group=ENTRY_POINT_GROUP, name=name, distribution=dist, version=version, error=error
                )
        kept = tuple(failure for failure in discovery.restart_needed if failure not in before)
        return evolve(discovery, restart_needed=(*kept, *self.stale()))
