"""Where ``lorenz serve`` listens: the socket it binds, and the URL it prints once serving.

Light on purpose (no MCP SDK, no Starlette): the supervisor of ``lorenz serve --workers`` needs
only this, and stays small.
"""

from __future__ import annotations

import errno
import socket
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from lorenz.words import counted

if TYPE_CHECKING:
    from lorenz.host.reload.live import LiveWorkspace

#: The MCP endpoint's path.
MCP_PATH = "/mcp"

__all__ = ["MCP_PATH", "announcer", "bind_socket", "counted", "display_url", "listen"]


def display_url(host: str, port: int, path: str = MCP_PATH) -> str:
    """The URL a local client uses: a wildcard bind is reached through 127.0.0.1."""
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "[::1]"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}{path}"


def bind_socket(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A listening-ready socket on ``host:port`` (``port`` 0 picks a free one); ``reuse_port``
    lets other sockets of this user bind the same port (``SO_REUSEPORT``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on accepted sockets whose proto is TCP, and
    # without it every multi-write response waits ~40 ms on Nagle + delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def listen(host: str, port: int, *, reuse_port: bool = False) -> socket.socket | None:
    """:func:`bind_socket`, or ``None`` once the reason it failed is printed."""
    try:
        return bind_socket(host, port, reuse_port=reuse_port)
    except OSError as exc:
        hint = _free_port_hint(host) if exc.errno == errno.EADDRINUSE else ""
        print(f"lorenz: cannot listen on {host}:{port}: {exc.strerror or exc}{hint}", file=sys.stderr)
        return None


def _free_port_hint(host: str) -> str:
    """``; serve with --port 0 …, or --port N (free now)``: a port the user can take instead."""
    try:
        with bind_socket(host, 0) as probe:
            free = probe.getsockname()[1]
    except OSError:
        return "; serve with --port 0 to take a free port"
    return f"; serve with --port 0 to take a free port, or --port {free} (free now)"


def announcer(live: LiveWorkspace, host: str, sock: socket.socket, note: str = "") -> Callable[[], None]:
    """What prints ``lorenz: serving N tools from M packs at URL`` once the server listens."""
    snapshot = live.snapshot()
    url = display_url(host, sock.getsockname()[1])
    page = display_url(host, sock.getsockname()[1], "/")

    def announce() -> None:
        from lorenz.mounting.lifecycle import packs_starting  # the packs' code: not in the supervisor

        starting = packs_starting(snapshot.packs, snapshot.settings)
        its = "its" if len(starting) == 1 else "their"
        later = f" ({', '.join(starting)} still starting: {its} tools follow)" if starting else ""
        print(
            f"lorenz: serving {counted(len(snapshot.specs), 'tool')} from {counted(len(snapshot.packs), 'pack')}"
            f" at {url}{note}{later}\nlorenz: landing page {page}",
            file=sys.stderr,
            flush=True,
        )

    return announce
