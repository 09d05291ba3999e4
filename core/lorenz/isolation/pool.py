"""Who owns the isolated packs' processes: an :class:`IsolationPool` per served workflow.

A workspace mounts through its pool (:meth:`IsolationPool.pack`), which starts each isolated
pack's processes or reuses an earlier load's when the pack's :class:`Plan` is the same;
:meth:`IsolationPool.keep_only` stops the rest after a reload, :meth:`IsolationPool.aclose` at
shutdown. All of a pool's process I/O runs on one event loop, its *home*: ``lorenz serve``'s own
loop, or else a shared loop in a daemon thread (:func:`isolation_loop`).
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections.abc import Coroutine, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from lorenz.mounting.model import PackFailure
from lorenz.settings.errors import ConfigError

# asyncio (slow to import with ssl and concurrent.futures) and logging load when a pool first
# needs them: a workflow that isolates nothing (``lorenz tools``, ``lorenz check``) never does.
if TYPE_CHECKING:
    import asyncio
    import concurrent.futures

    from lorenz.contracts import ToolProvider
    from lorenz.plugins.model import Discovery
    from lorenz.settings.model import Settings

    from .protocol import Ready
    from .proxy import IsolatedPack
    from .supervisor import Supervisor

__all__ = ["IsolationPool", "isolation_loop"]

T = TypeVar("T")

#: How long a reload gives the calls in flight on a pack it no longer runs before stopping it.
RELOAD_DRAIN_SECONDS = 5.0
#: How long a stopping process has after ``stop`` before it is killed.
STOP_GRACE_SECONDS = 1.0

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()
_pools: weakref.WeakSet[IsolationPool] = weakref.WeakSet()


def isolation_loop() -> asyncio.AbstractEventLoop:
    """The isolation loop, started on first use."""
    global _loop
    with _loop_lock:
        if _loop is None:
            import asyncio  # only when a pack runs isolated

            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="lorenz-isolation", daemon=True).start()
        return _loop


class IsolationPool:
    """The supervisors of the isolated packs one workflow (and its reloads) mounts.

    ``loop``: the event loop the host will serve on (see :meth:`run`), made the pool's home; by
    default the shared :func:`isolation_loop`.
    """

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._home = loop
        self._supervisors: dict[str, tuple[Supervisor, IsolatedPack]] = {}
        #: Supervisors :meth:`prepare` is starting, by plan key, until :meth:`pack` takes them.
        self._starting: dict[str, tuple[Supervisor, concurrent.futures.Future[Ready]]] = {}
        #: Plan keys whose processes run code edited since they started (:meth:`restart`).
        self._stale: set[str] = set()
        self._lock = threading.Lock()
        _pools.add(self)

    @property
    def home(self) -> asyncio.AbstractEventLoop | None:
        """The loop the host will serve on, when it gave the pool one (``lorenz serve``)."""
        return self._home

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The pool's home loop."""
        return self._home if self._home is not None else isolation_loop()

    def run(self, main: Coroutine[Any, Any, T]) -> T:
        """Run the host's main coroutine to completion on the pool's home loop (``asyncio.run``
        for a pool without a loop of its own)."""
        import asyncio  # only when a pack runs isolated

        if self._home is None:
            return asyncio.run(main)
        asyncio.set_event_loop(self._home)
        return self._home.run_until_complete(main)

    def _wait(self, future: concurrent.futures.Future[T], timeout: float) -> T:
        """Wait for work scheduled on the home loop, from synchronous code: a home loop that is not
        running yet (``lorenz serve`` mounting before it serves) is run until the work is done."""
        import asyncio  # only when a pack runs isolated

        loop = self.loop
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            future.cancel()
            msg = "an isolated pack cannot be started from its own event loop: mount in a thread"
            raise RuntimeError(msg)
        if loop.is_running():
            return future.result(timeout)
        return loop.run_until_complete(asyncio.wait_for(asyncio.wrap_future(future, loop=loop), timeout))

    def _submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        import asyncio  # only when a pack runs isolated

        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    # -- mounting (lorenz.mounting.mount's isolation hook) ------------------------------------------

    def prepare(self, packs: Iterable[ToolProvider], settings: Settings, discovery: Discovery) -> None:
        """Start the processes of every isolated pack among ``packs`` side by side, so that mounting
        them one by one (:meth:`pack`) waits for the slowest, not for the sum."""
        if not settings.server.isolated_packs:
            return
        from .plan import plan_for  # only when a pack runs isolated
        from .supervisor import Supervisor  # only when a pack runs isolated

        for pack in packs:
            try:
                plan = plan_for(pack, settings, discovery, os.environ)
            except ValueError:
                continue  # pack() reports it
            if plan is None:
                continue
            with self._lock:
                if plan.key in self._starting or self._usable(plan.key) is not None:
                    continue
                supervisor = Supervisor(plan)
                self._starting[plan.key] = (supervisor, self._submit(supervisor.start()))

    def _usable(self, key: str) -> IsolatedPack | None:
        kept = self._supervisors.get(key)
        if kept is not None and key not in self._stale and kept[0].failed is None and kept[0].closed is None:
            return kept[1]
        return None

    def pack(
        self, pack: ToolProvider, settings: Settings, discovery: Discovery, *, instance: str | None = None
    ) -> ToolProvider:
        """What to mount for ``pack``: itself, or the proxy of its running processes (started
        now, or kept from an earlier load of the same plan). ``instance``: the ``tools:`` key it
        serves when that is not its own name (isolated when ``server.isolated_packs`` names either).

        Raises ``ConfigError`` with the pack's message when it refuses its options, and
        :class:`~lorenz.isolation.supervisor.StartError` (or ``ValueError``) when it cannot start.
        """
        if not settings.server.isolated_packs:
            return pack  # nothing isolated: none of the isolation machinery need load
        from .plan import plan_for  # only when a pack runs isolated
        from .proxy import IsolatedPack  # only when a pack runs isolated
        from .supervisor import START_TIMEOUT_SECONDS, Supervisor, logger  # only when a pack runs isolated

        plan = plan_for(pack, settings, discovery, os.environ, instance)
        if plan is None:
            return pack  # a stand-in discovery left unimported: mounting says why it is left out
        with self._lock:
            kept = self._usable(plan.key)
            if kept is not None:
                return kept
            starting = self._starting.pop(plan.key, None)
        if starting is None:
            supervisor = Supervisor(plan)
            starting = (supervisor, self._submit(supervisor.start()))
        supervisor, future = starting
        ready = self._wait(future, START_TIMEOUT_SECONDS * 2)
        if ready.options_error is not None:
            raise ConfigError(ready.options_error)
        proxy = IsolatedPack(supervisor, ready, self.loop)
        with self._lock:
            replaced = self._supervisors.get(plan.key)
            self._supervisors[plan.key] = (supervisor, proxy)
            edited = plan.key in self._stale
            self._stale.discard(plan.key)
        if replaced is not None and edited:  # its calls in flight finish on the old code
            self._stop([replaced[0]], "its code changed", drain=RELOAD_DRAIN_SECONDS)
        elif replaced is not None:  # a failed one, retried by this load
            self._stop([replaced[0]], "it was restarted by a reload", drain=0.0)
        logger.info(
            "lorenz: pack %s runs isolated (%s; pid %s)",
            plan.pack if plan.instance is None else f"{plan.instance} ({plan.pack})",
            plan.source.label,
            ", ".join(str(process.pid) for process in supervisor.slots if process is not None),
        )
        return proxy

    # -- lifetime -----------------------------------------------------------------------

    def keep_only(self, packs: Iterable[ToolProvider]) -> None:
        """Stop (in the background, after :data:`RELOAD_DRAIN_SECONDS` for their calls in flight)
        the processes of every isolated pack not among ``packs``."""
        served = {id(_unwrapped(pack)) for pack in packs}
        with self._lock:
            gone = [key for key, (_, proxy) in self._supervisors.items() if id(proxy) not in served]
            stopped = [self._supervisors.pop(key)[0] for key in gone]
            stopped += self._take_starting()
        self._stop(stopped, "the workflow no longer runs it", drain=RELOAD_DRAIN_SECONDS)

    def restart(self, packs: Iterable[str]) -> None:
        """Have the next mount start the isolated packs named (pack or ``tools:`` key) afresh, so
        they import their code as it is on disk now; their running processes serve until then."""
        names = set(packs)
        with self._lock:
            self._stale |= {
                key
                for key, (supervisor, _) in self._supervisors.items()
                if supervisor.plan.pack in names or supervisor.plan.instance in names
            }

    def _take_starting(self) -> list[Supervisor]:
        """Supervisors started for a load that failed before mounting them (under the lock)."""
        leftovers = [supervisor for supervisor, _ in self._starting.values()]
        self._starting.clear()
        return leftovers

    def _stop(self, supervisors: list[Supervisor], reason: str, *, drain: float) -> None:
        for supervisor in supervisors:
            self._submit(supervisor.aclose(reason, drain=drain, grace=STOP_GRACE_SECONDS))

    def _take_all(self) -> list[Supervisor]:
        with self._lock:
            supervisors = [supervisor for supervisor, _ in self._supervisors.values()] + self._take_starting()
            self._supervisors.clear()
        return supervisors

    async def _aclose_all(self, supervisors: list[Supervisor], reason: str) -> None:
        import asyncio  # only when a pack runs isolated

        await asyncio.gather(*(supervisor.aclose(reason, grace=STOP_GRACE_SECONDS) for supervisor in supervisors))

    def close(self, reason: str = "the host is shutting down") -> None:
        """Stop every process now and wait for them (from synchronous code)."""
        supervisors = self._take_all()
        if supervisors:
            self._wait(self._submit(self._aclose_all(supervisors, reason)), STOP_GRACE_SECONDS * 3)

    async def aclose(self, reason: str = "the host is shutting down") -> None:
        """:meth:`close` for an event loop: awaits the processes' end without blocking it."""
        supervisors = self._take_all()
        if not supervisors:
            return
        import asyncio  # only when a pack runs isolated

        if asyncio.get_running_loop() is self.loop:
            await self._aclose_all(supervisors, reason)
        else:
            await asyncio.wrap_future(self._submit(self._aclose_all(supervisors, reason)))

    # -- reporting ----------------------------------------------------------------------

    def failures(self, packs: Iterable[ToolProvider]) -> list[PackFailure]:
        """The packs among ``packs`` marked failed after crashing too often."""
        packs = list(packs)
        if not any(getattr(pack, "isolated", False) for pack in packs):
            return []  # nothing isolated: the proxy module need not even load
        from .proxy import IsolatedPack  # only when a pack runs isolated

        return [
            PackFailure(pack=pack.name, error=inner.supervisor.failed)
            for pack, inner in ((pack, _unwrapped(pack)) for pack in packs)
            if isinstance(inner, IsolatedPack) and inner.supervisor.failed is not None
        ]

    @staticmethod
    def status(packs: Iterable[ToolProvider]) -> list[dict[str, Any]]:
        """``/healthz``'s view of the isolated packs among ``packs``."""
        packs = list(packs)
        if not any(getattr(pack, "isolated", False) for pack in packs):
            return []  # nothing isolated: the proxy module need not even load
        from .proxy import IsolatedPack  # only when a pack runs isolated

        out = []
        for pack in packs:
            inner = _unwrapped(pack)
            if isinstance(inner, IsolatedPack):
                status = inner.status()
                out.append(status if inner is pack else {**status, "pack": pack.name, "provider": inner.name})
        return out


def _unwrapped(pack: ToolProvider) -> ToolProvider:
    """The pack an instance (:class:`lorenz.mounting.instances.InstancePack`) wraps, or ``pack``."""
    inner = getattr(pack, "inner", None)
    return inner if inner is not None else pack


def _close_all_pools() -> None:
    for pool in list(_pools):
        try:
            pool.close("the process is exiting")
        except (TimeoutError, RuntimeError) as exc:  # concurrent.futures.TimeoutError is TimeoutError
            import logging  # only when a pack runs isolated

            logging.getLogger("lorenz.isolation").warning("lorenz: stopping isolated packs at exit: %s", exc)


def _after_fork_in_child() -> None:
    """A forked copy of the host has no isolation thread, and the processes are not its children."""
    global _loop
    _loop = None
    _pools.clear()


atexit.register(_close_all_pools)
os.register_at_fork(after_in_child=_after_fork_in_child)
