"""``lorenz serve``: the mounted tools of a workflow, served over MCP (Streamable HTTP or stdio).

Everything here imports ``mcp``, ``starlette`` and ``uvicorn``; nothing else in Lorenz does, so
``import lorenz`` and the other commands stay fast. The names below load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lorenz.lazy import lazy_exports

__all__ = [
    "LiveWorkspace",
    "ReadDeadlineProtocol",
    "RunningServer",
    "Snapshot",
    "build_app",
    "build_server",
    "create_app",
    "serve",
    "serve_in_thread",
]

_EXPORTS = {
    "LiveWorkspace": "lorenz.host.reload.live",
    "Snapshot": "lorenz.host.reload.live",
    "RunningServer": "lorenz.host.app",
    "build_app": "lorenz.host.app",
    "serve_in_thread": "lorenz.host.app",
    "build_server": "lorenz.host.mcp.server",
    "create_app": "lorenz.host.factory",
    "ReadDeadlineProtocol": "lorenz.host.http.protocol",
    "serve": "lorenz.host.command",
}


__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS)


if TYPE_CHECKING:
    from .app import RunningServer, build_app, serve_in_thread
    from .command import serve
    from .factory import create_app
    from .http.protocol import ReadDeadlineProtocol
    from .mcp.server import build_server
    from .reload.live import LiveWorkspace, Snapshot
