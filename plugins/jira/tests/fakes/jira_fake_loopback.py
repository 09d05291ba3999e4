"""Run an ASGI app under uvicorn on 127.0.0.1:<free port> in a background thread."""

from __future__ import annotations

import socket
import threading
from typing import Any

import uvicorn


class LoopbackServer:
    """A real HTTP server on the loopback interface; ``start()`` returns once it accepts."""

    def __init__(self, app: Any) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port: int = self._sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, name=f"jira-fake-{self.port}", daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> LoopbackServer:
        self._thread.start()
        for _ in range(500):
            if self._server.started:
                return self
            self._thread.join(0.01)
        raise RuntimeError("loopback server did not start")

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()
