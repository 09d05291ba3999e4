"""Discovery run again while serving, after distributions were installed, upgraded or removed.

Before discovery imports anything, ``sys.path`` takes in new ``.pth`` files (editable installs,
:mod:`.sitepaths`) and the modules of changed distributions are dropped where that is safe
(:mod:`.packages`). What a reload cannot apply is carried on the new :class:`Discovery`: packs whose
distribution was uninstalled (a workflow still mounting one serves without it, degraded) and
changes that need a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from attrs import evolve

from lorenz.hookspecs import ENTRY_POINT_GROUP
from lorenz.plugins.checks import normalize_distribution
from lorenz.plugins.discovery import discover
from lorenz.plugins.hint import isolation_hint, mounts_hint, sandbox_hint
from lorenz.plugins.model import Discovery, PluginFailure

from .packages import drop_modules, installed_plugins, plan_reload
from .sitepaths import SitePaths

__all__ = ["Rediscovery", "workflow_needs_rediscovery"]

logger = logging.getLogger("lorenz.host")


class Rediscovery:
    """The installed plugins as the last discovery saw them, and what is owed since."""

    def __init__(self) -> None:
        self._sites = SitePaths()
        self._installed = installed_plugins()
        #: ``{pack name: its uninstalled plugin}``
        self._gone: dict[str, PluginFailure] = {}
        #: ``{distribution key: the change only a restart loads}``
        self._stale: dict[str, PluginFailure] = {}

    def run(
        self,
        previous: Discovery,
        *,
        plugins: Sequence[object],
        env: Mapping[str, str],
        workflow: Path | None,
        always: bool = True,
    ) -> Discovery | None:
        """Discovery afresh (``previous`` is the one served until now) for what the ``workflow``
        file isolates, sandboxes and mounts; unless ``always``, ``None`` when no plugin
        distribution came, went or changed and no import path was added."""
        added = self._sites.refresh()
        if added:
            logger.info("lorenz: new import paths from .pth files: %s", ", ".join(added))
        after = installed_plugins()
        plan = plan_reload(self._installed, after)
        self._installed = after
        if not always and not added and plan.empty:
            return None
        dropped = drop_modules(plan.drop)
        if dropped:
            logger.info("lorenz: importing afresh: %s", ", ".join(sorted(plan.drop)))
        discovery = discover(
            plugins=plugins,
            env=env,
            isolate=isolation_hint(workflow),
            sandbox=sandbox_hint(workflow),
            mounts=mounts_hint(workflow),
        )
        if not plan.empty:
            logger.info("lorenz: installed plugins changed (%s)", plan.summary())
        for dist in plan.gone:
            packs = [
                pack
                for info in previous.plugins
                if normalize_distribution(info.distribution or "") == dist.key
                for pack in info.packs
            ]
            for pack in packs:
                error = (
                    f"{dist.label} was uninstalled while lorenz serve ran; remove tools.{pack} from the "
                    f"workflow, or install it again"
                )
                self._gone[pack] = PluginFailure(
                    group=ENTRY_POINT_GROUP, name=pack, distribution=dist.name, version=dist.version, error=error
                )
            if packs:
                logger.warning("lorenz: %s was uninstalled: no longer serving pack %s", dist.label, ", ".join(packs))
            self._stale.pop(dist.key, None)
        served = {pack for info in discovery.plugins for pack in info.packs}
        self._gone = {pack: failure for pack, failure in self._gone.items() if pack not in served}
        for _, current in plan.changed:
            reason = plan.restart.get(current.key)
            if reason is None:
                self._stale.pop(current.key, None)
                continue
            logger.warning("lorenz: restart needed: %s", reason)
            self._stale[current.key] = PluginFailure(
                group=ENTRY_POINT_GROUP,
                name=current.name,
                distribution=current.name,
                version=current.version,
                error=reason,
            )
        return evolve(discovery, gone=tuple(self._gone.values()), restart_needed=tuple(self._stale.values()))


def workflow_needs_rediscovery(workflow: Path | None, discovery: Discovery) -> bool:
    """Whether the ``workflow`` file isolates other packs, or mounts others, than ``discovery``
    left unimported for."""
    isolate = isolation_hint(workflow)
    if isolate != discovery.isolate:
        return True
    mounts = mounts_hint(workflow)
    if isolate:
        return mounts != discovery.mounts
    # A plain workflow: only a name the last discovery was not told to import needs another
    # (rediscovery makes every plugin afresh, restarting upstreams whose entries did not change).
    known = discovery.mounts
    if mounts is None or known is None:
        return mounts != known and mounts is not None
    return not (
        mounts.packs <= known.packs
        and mounts.middleware <= known.middleware
        and mounts.tracker in (None, known.tracker)
    )
