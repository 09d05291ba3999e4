"""``bench/peers.py --switch-off NAME``: what one piece of a call costs, read off a server with that
piece switched off. Python imports this module at start-up when this directory is on ``PYTHONPATH``;
it patches the host once ``lorenz.host.app`` has loaded. Measurement only: a server switched off like
this skips checks the host must make.

Names (``LORENZ_BENCH_SWITCH_OFF``, ``+``-separated):
  sdk-request-validation   the SDK's per-version request check (``validate_client_request``)
  sdk-result-validation    the SDK's result check and re-dump (``serialize_server_result``)
  call-record              the call record (landing page window, call log)
  argument-checks          the value cap, the lone-surrogate scan and the ``inputSchema`` check
  host-origin-checks       the Host and Origin allow-lists
  workflow-stat            WORKFLOW.md's ``stat`` per request (no reloads)
  result-survey            the size/plainness survey before the pretty result text
  gc                       the garbage collector
"""

from __future__ import annotations

import importlib
import importlib.abc
import os
import sys
from typing import Any

_NAMES = set(filter(None, os.environ.get("LORENZ_BENCH_SWITCH_OFF", "").split("+")))


def _switch_off() -> None:
    import mcp.server.runner as runner

    import lorenz.host.mcp.server as mcp_server
    import lorenz.host.recording as recording
    import lorenz.host.reload.live as reload
    import lorenz.host.security as security
    import lorenz.toolcall.replies as replies

    if "sdk-request-validation" in _NAMES:
        runner._methods.validate_client_request = lambda *args, **kwargs: None
    if "sdk-result-validation" in _NAMES:
        runner.ServerRunner._serialize = lambda self, method, version, result: runner._dump_result(result)
    if "call-record" in _NAMES:
        recording.CallRecorder.record = lambda *args, **kwargs: None
    if "argument-checks" in _NAMES:
        mcp_server.validate_arguments = lambda *args, **kwargs: None
        mcp_server.refuse_unsafe_arguments = lambda *args, **kwargs: None
    if "host-origin-checks" in _NAMES:
        security.host_allowed = lambda *args, **kwargs: True
        security.origin_allowed = lambda *args, **kwargs: True
    if "workflow-stat" in _NAMES:
        reload.LiveWorkspace.changed = lambda self: False
    if "result-survey" in _NAMES:
        import pydantic_core

        def encode(payload: Any, *, max_bytes: int) -> tuple[Any, str]:
            return payload, pydantic_core.to_json(payload, indent=2).decode()

        replies.encode_payload = encode
    if "gc" in _NAMES:
        import gc

        gc.disable()


class _AfterHostApp(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> None:
        if name == "lorenz.host.app":
            sys.meta_path.remove(self)
            importlib.import_module(name)
            _switch_off()
        return None


if _NAMES:
    sys.meta_path.insert(0, _AfterHostApp())
