"""What the host mounts in place of an isolated pack: an ordinary :class:`~lorenz.ToolProvider`
whose ``execute_tool`` sends the call to the pack's processes and awaits the reply.

The host's own machinery (argument checks, :class:`~lorenz.toolcall.execution.ToolRunner`'s per-pack
limits and timeout, result encoding) treats it like any pack. A call from the pool's home
loop (``lorenz serve``) is submitted directly; one from another loop crosses to the home loop and
back with one ``call_soon_threadsafe`` each way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lorenz.results import ToolResult
from lorenz.toolcall.execution import time_left

from .supervisor import new_call

if TYPE_CHECKING:
    from lorenz.contracts import ToolContext, ToolSpec
    from lorenz.settings.model import Settings

    from .protocol import DisabledEntry, Ready
    from .supervisor import Supervisor

__all__ = ["IsolatedPack"]


def _resolve(future: asyncio.Future[ToolResult], result: ToolResult) -> None:
    if not future.done():
        future.set_result(result)


class IsolatedPack:
    """A pack running in processes of its own (``server.isolated_packs``)."""

    #: Read by the landing page and ``/healthz``.
    isolated = True
    #: Read by :class:`~lorenz.toolcall.execution.ToolRunner`: a call is answered by its deadline at the
    #: latest (the supervisor kills the process then), so it need not run as a task to abandon.
    answers_by_deadline = True

    def __init__(self, supervisor: Supervisor, ready: Ready, home: asyncio.AbstractEventLoop) -> None:
        self.name = supervisor.pack
        self.supervisor = supervisor
        #: The pack's own flag: it refuses bad arguments itself, so the host skips its schema check.
        self.validates_arguments = ready.validates_arguments
        self.skills = ready.skills
        #: Read by ``lorenz check``: resources and prompts the pack declares are not served isolated.
        self.unserved_offers = ready.offers
        self._specs = ready.specs
        self._disabled = ready.disabled
        #: The loop the supervisor runs on.
        self._home = home

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        """The tools the pack listed in its process, for the settings it was started with."""
        return list(self._specs)

    def validate_options(self, options: Any) -> None:
        """Nothing to do: the pack checked its options in its process, before it said it was ready."""

    def disabled_tools(self, settings: Settings) -> list[DisabledEntry]:
        return list(self._disabled)

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[ToolResult] = loop.create_future()
        home = loop is self._home

        def deliver(result: ToolResult) -> None:  # on the home loop
            if home:
                _resolve(future, result)
                return
            with contextlib.suppress(RuntimeError):  # the caller's loop is closed: nobody is waiting
                loop.call_soon_threadsafe(_resolve, future, result)

        left = time_left()  # the host's ToolRunner answers at its deadline: the process is killed then too
        call = new_call(name, input, context.settings.server.tool_timeout_seconds if left is None else left, deliver)
        if home:
            self.supervisor.submit(call)
        else:
            self._home.call_soon_threadsafe(self.supervisor.submit, call)
        try:
            return await future
        except asyncio.CancelledError:
            if home:
                self.supervisor.cancel(call)
            else:
                self._home.call_soon_threadsafe(self.supervisor.cancel, call)
            raise

    def status(self) -> dict[str, Any]:
        return self.supervisor.status()
