"""Plugins' lifespan hooks (``lorenz_startup``, ``lorenz_shutdown``) in a serving process.

They run once per process (each ``--workers`` worker, the stdio server), with the live settings,
for the plugins the workflow uses: one whose pack it mounts, whose tracker it dispatches with, or
whose middleware, catalog shaper or sink it names. Installing a plugin does not make its hooks
run. Each is third-party code: a synchronous one runs in a thread, an ``async`` one on the loop;
each is bounded by :data:`LIFESPAN_SECONDS`, and what one raises, or a hang, is logged and the host
goes on.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal

from lorenz.mounting.instances import provider_of
from lorenz.plugins.containment import PluginError, call_plugin, contain
from lorenz.plugins.model import PluginLifespan
from lorenz.redact import redact_text
from lorenz.settings.model import Settings
from lorenz.toolcall.middleware import close_layers
from lorenz.workspace import Workspace

if TYPE_CHECKING:
    from .reload.live import LiveWorkspace
    from .sinks import Sinks

__all__ = ["LIFESPAN_SECONDS", "Lifespan", "run_lifespan", "used_plugins"]

logger = logging.getLogger("lorenz.host")

#: How long one plugin's ``lorenz_startup`` or ``lorenz_shutdown`` may take.
LIFESPAN_SECONDS = 10.0


def used_plugins(workspace: Workspace) -> tuple[PluginLifespan, ...]:
    """The lifespan hooks of the plugins ``workspace``'s workflow uses, in discovery's order."""
    settings = workspace.settings
    mounted = {provider_of(pack) for pack in workspace.mounted.packs}
    named = set(settings.server.middleware)
    infos = {info.name: info for info in workspace.discovery.plugins}
    used = []
    for hooks in workspace.discovery.lifespan:
        info = infos.get(hooks.plugin)
        if info is None:
            continue
        if (
            mounted.intersection(info.packs)
            or settings.tracker.kind in info.trackers
            or named.intersection(info.extensions)
        ):
            used.append(hooks)
    return tuple(used)


async def run_lifespan(
    plugins: Iterable[PluginLifespan], hook: Literal["startup", "shutdown"], settings: Settings
) -> None:
    """Run each plugin's ``lorenz_<hook>`` in turn, logging each that failed; never raises but for
    this task's cancellation."""
    failed: dict[str, str] = {}
    for hooks in plugins:
        function = hooks.startup if hook == "startup" else hooks.shutdown
        if function is None:
            continue
        try:
            async with asyncio.timeout(LIFESPAN_SECONDS):
                await _run(f"plugin {hooks.plugin}", f"lorenz_{hook}", function, settings)
        except TimeoutError:
            failed[hooks.plugin] = f"did not finish within {LIFESPAN_SECONDS:g} s"
        except PluginError as exc:
            failed[hooks.plugin] = redact_text(str(exc), settings.secrets)
    for plugin, what in failed.items():
        logger.warning("lorenz: lorenz_%s of plugin %s failed; serving on: %s", hook, plugin, what)


async def _run(owner: str, action: str, function: Callable[[Settings], Any], settings: Settings) -> None:
    """``function(settings)`` in a thread (a synchronous hook that blocks must not stall the loop),
    then, for an ``async`` hook, its coroutine on the loop; what it raises as :class:`PluginError`."""
    result = await asyncio.to_thread(call_plugin, owner, action, function, settings)
    if not inspect.isawaitable(result):
        return
    try:
        await result
    except asyncio.CancelledError:
        raise
    except BaseException as exc:
        if not contain(exc):
            raise
        raise PluginError(owner, action, exc) from exc


class Lifespan:
    """One serving process's plugin lifespan: the startup hooks as it starts, the replaced
    workflow's middleware and sinks closed after a reload, and at the end the shutdown hooks and
    the last workflow's middleware and sinks closed."""

    def __init__(self, live: LiveWorkspace, sinks: Sinks) -> None:
        self._live = live
        self._sinks = sinks
        self._started: tuple[PluginLifespan, ...] = ()
        self._extensions = live.snapshot().workspace.extensions

    async def start(self) -> None:
        snapshot = self._live.snapshot()
        self._started = used_plugins(snapshot.workspace)
        await run_lifespan(self._started, "startup", snapshot.settings)

    async def retire_replaced(self) -> None:
        """Close what a reload replaced (every reload builds the workflow's extensions afresh)."""
        current = self._live.snapshot().workspace.extensions
        replaced, self._extensions = self._extensions, current
        if replaced is None or replaced is current:
            return
        keep = current.layers if current is not None else ()
        await close_layers(tuple(layer for layer in replaced.layers if layer not in keep))
        await self._sinks.close(keep=current.sinks if current is not None else ())

    async def stop(self) -> None:
        await run_lifespan(self._started, "shutdown", self._live.snapshot().settings)
        await self.retire_replaced()  # a reload not yet seen: what it replaced, then what it built
        if self._extensions is not None:
            await close_layers(self._extensions.layers)  # their connections (a Redis client)
        await self._sinks.close()
