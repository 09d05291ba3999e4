"""Any ASGI app under uvicorn on ``127.0.0.1:<free port>`` in a daemon thread: the mechanism behind
``lorenz.testing.loopback_server`` (loopback fakes of the APIs a pack calls)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn
from attrs import frozen

__all__ = ["LoopbackServer", "serve_app_in_thread"]

LOOPBACK_HOST = "127.0.0.1"


@frozen
class LoopbackServer:
    """Where a server started by :func:`serve_app_in_thread` listens."""

    port: int
    host: str = LOOPBACK_HOST

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``, without a trailing slash."""
        return f"http://{self.host}:{self.port}"


@contextlib.contextmanager
def serve_app_in_thread(
    app: Any,
    *,
    start_timeout: float = 10.0,
    name: str = "lorenz-loopback",
    config: Callable[..., uvicorn.Config] = uvicorn.Config,
    **options: Any,
) -> Iterator[LoopbackServer]:
    """Serve ``app`` until the block exits; ``config(app, host=..., port=0, **options)`` makes the
    ``uvicorn.Config`` (``uvicorn.Config`` itself unless given).

    uvicorn binds the port itself (``port=0``): its own listening socket is a TCP one, so accepted
    connections get ``TCP_NODELAY`` (a socket bound without ``IPPROTO_TCP`` and handed over costs a
    ~40 ms delayed ACK per multi-write response). Raises ``RuntimeError`` when the server exits
    during startup or is not accepting after ``start_timeout`` seconds.
    """
    options = {"log_level": "warning", "access_log": False, "lifespan": "auto", **options}
    server = uvicorn.Server(config(app, host=LOOPBACK_HOST, port=0, **options))
    failure: list[BaseException] = []

    def run() -> None:
        try:
            server.run()
        except BaseException as exc:  # uvicorn exits with SystemExit when it cannot start; reported below
            failure.append(exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + start_timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                if thread.is_alive():
                    why = f"not accepting after {start_timeout}s"
                else:
                    why = f"uvicorn exited during startup ({failure[0]!r})" if failure else "uvicorn exited"
                msg = f"loopback server for {app!r} did not start on {LOOPBACK_HOST}: {why}"
                raise RuntimeError(msg)
            time.sleep(0.005)
        port: int = server.servers[0].sockets[0].getsockname()[1]
        yield LoopbackServer(port=port)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
