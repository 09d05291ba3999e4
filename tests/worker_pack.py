"""An in-process plugin for the worker tests: a ``whoami`` tracker mounting a ``whoami`` pack whose
one tool answers with the pid of the process that ran it and the ``label`` of its tool options, so
a test sees which worker answered, and with which WORKFLOW.md.

Loaded by path (``-p tests/worker_pack.py``, or ``LORENZ_PLUGIN_MODULES``). With
``WORKER_PACK_FAIL_IN_WORKERS`` set, importing it fails in a process started by ``multiprocessing``
(a worker), not in the ``lorenz serve`` process that starts them.
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Any

import lorenz
from lorenz import ToolSpec, tool_success

if os.environ.get("WORKER_PACK_FAIL_IN_WORKERS") and multiprocessing.parent_process() is not None:
    raise RuntimeError("this plugin does not load in worker processes")


class WhoamiPack:
    name = "whoami"

    def validate_options(self, options: Any) -> None:
        if set(options) - {"label"}:
            raise ValueError("tools.whoami takes only label")

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [ToolSpec(name="whoami_pid", description="The pid of the process that runs this call.")]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        options = (context.settings.tool_options or {}).get("whoami") or {}
        return tool_success({"pid": os.getpid(), "label": options.get("label")})


class WhoamiTracker:
    kind = "whoami"

    def create_client(self, settings: Any, context: Any) -> Any:
        raise NotImplementedError

    def default_tool_packs(self, settings: Any) -> list[str]:
        return ["whoami"]


@lorenz.hookimpl
def lorenz_register_tool_packs(register: Any) -> None:
    register(WhoamiPack())


@lorenz.hookimpl
def lorenz_register_trackers(register: Any) -> None:
    register(WhoamiTracker())
