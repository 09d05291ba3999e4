"""The one module that touches private internals of asyncio and the MCP SDK: the fast path's seam.

Each private access is a function here. :func:`fast_path_usable` runs when the host starts: when
something relied on is missing or changed shape, it says so in one warning and the host serves
every request through the SDK's own transport (as ``server.fast_path: false`` does). Elsewhere:
:mod:`lorenz.toolcall.pack_threads` patches anyio's private ``AsyncIOBackend.run_sync_in_worker_thread`` to
contain packs' threads; that is containment, not the fast path, and stays there.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
from collections.abc import Callable
from typing import Any

__all__ = [
    "callbacks_due",
    "fast_path_usable",
    "lifespan_state",
    "missing_internals",
    "needs_teardown",
    "run_as_current",
    "runner_on_request",
    "session_transports",
    "task_of",
]

logger = logging.getLogger("lorenz.host")


# asyncio: eager task starts (lorenz.toolcall.eager) and joined writes (lorenz.host.http.protocol).


def _loop_internals() -> bool:
    tasks: Any = asyncio.tasks
    handle: Any = asyncio.Handle
    return (
        callable(getattr(tasks, "_enter_task", None))
        and callable(getattr(tasks, "_leave_task", None))
        and callable(getattr(handle, "_run", None))
        and "_callback" in getattr(handle, "__slots__", ())
    )


#: Whether this Python's asyncio has what :func:`run_as_current` needs (read once, at import).
_LOOP_INTERNALS = _loop_internals()


def callbacks_due(loop: asyncio.AbstractEventLoop) -> collections.deque[asyncio.Handle] | None:
    """The standard loop's queue of callbacks due now (``loop._ready``); ``None`` on another loop
    (uvloop) or an asyncio without what :func:`run_as_current` needs."""
    ready: Any = getattr(loop, "_ready", None)
    return ready if _LOOP_INTERNALS and isinstance(ready, collections.deque) else None


def task_of(handle: asyncio.Handle | None) -> asyncio.Task[Any] | None:
    """The task whose step ``handle`` runs, else ``None``."""
    owner: object = getattr(getattr(handle, "_callback", None), "__self__", None)
    return owner if isinstance(owner, asyncio.Task) else None


def run_as_current(loop: asyncio.AbstractEventLoop, handle: asyncio.Handle) -> None:
    """Run ``handle`` (a task's step taken off :func:`callbacks_due`) now, with the loop's current
    task swapped out meanwhile, as the loop itself would run it."""
    tasks: Any = asyncio.tasks
    caller = asyncio.current_task(loop)
    if caller is not None:
        tasks._leave_task(loop, caller)
    try:
        handle._run()
    finally:
        if caller is not None:
            tasks._enter_task(loop, caller)


# The MCP SDK: the lean stateless path (lorenz.host.mcp.stateless) and shutdown (lorenz.host.app).
# The SDK is imported inside functions: `import lorenz` and `lorenz call` (through lorenz.toolcall.eager)
# stay without it.


@functools.cache
def _on_request_getter() -> Callable[[Any], Callable[..., Any]]:
    from mcp.server.runner import ServerRunner

    getter: Callable[[Any], Callable[..., Any]] = vars(ServerRunner)["on_request"].func
    return getter


def runner_on_request(runner: Any) -> Callable[..., Any]:
    """A ``ServerRunner``'s ``on_request``, through the cached property's own getter: the cached
    value would hold the runner's bound method in its own dict, a cycle keeping it and its
    connection until the garbage collector runs."""
    return _on_request_getter()(runner)


def lifespan_state(manager: Any) -> Any:
    """The state of the server's lifespan, which the session manager entered once (no public name)."""
    return manager._lifespan_state


def needs_teardown(connection: Any) -> bool:
    """Whether anything registered a callback on the connection's exit stack (rarely: its shielded
    teardown is then skipped)."""
    return bool(getattr(connection.exit_stack, "_exit_callbacks", True))


def session_transports(manager: Any) -> list[Any]:
    """The stateful sessions' transports (the manager keeps no public list; none without it)."""
    return list(getattr(manager, "_server_instances", {}).values())


# The start-up check.


def missing_internals(manager: Any = None) -> list[str]:
    """What the fast path relies on that this Python or this SDK lacks (or has in another shape);
    ``manager``: the session manager the host serves with, checked too."""
    from mcp.server.connection import Connection
    from mcp.server.runner import ServerRunner
    from mcp_types import DEFAULT_NEGOTIATED_VERSION

    missing = [] if _loop_internals() else ["asyncio.tasks._enter_task/_leave_task, asyncio.Handle._run/_callback"]
    probe = asyncio.BaseEventLoop()
    try:
        if not isinstance(getattr(probe, "_ready", None), collections.deque):
            missing.append("asyncio.BaseEventLoop._ready (a deque)")
    finally:
        probe.close()
    descriptor = vars(ServerRunner).get("on_request")
    if not isinstance(descriptor, functools.cached_property) or not callable(descriptor.func):
        missing.append("mcp.server.runner.ServerRunner.on_request (a cached_property)")
    if manager is not None and not hasattr(manager, "_lifespan_state"):
        missing.append("StreamableHTTPSessionManager._lifespan_state")
    try:
        stack: Any = Connection.from_envelope(DEFAULT_NEGOTIATED_VERSION, None, None).exit_stack
    except Exception:
        stack = None
    if not isinstance(getattr(stack, "_exit_callbacks", None), collections.deque):
        missing.append("mcp.server.connection.Connection.exit_stack._exit_callbacks (a deque)")
    return missing


def fast_path_usable(manager: Any = None) -> bool:
    """Whether the host may take its fast path; ``False`` after one warning naming what is missing."""
    missing = missing_internals(manager)
    if missing:
        logger.warning(
            "lorenz: the fast path is off (every request goes through the SDK's transport): this Python "
            "or MCP SDK lacks %s",
            "; ".join(missing),
        )
    return not missing
