"""The egress proxy a sandboxed pack's process must go through: the only port it may connect to.

One per sandboxed pack, on loopback, in the host. It takes ``CONNECT host:port`` (HTTPS) and
absolute-form requests (``GET http://host:port/...``), and lets through only what the pack's
:class:`~lorenz.sandbox.permissions.Permissions` declare, matching the name as the client sent it,
before any resolution, and only a well-formed host name or IP address. A refusal is a ``403`` whose
reason names the target (escaped), and is remembered (:meth:`EgressProxy.denials_since`) so the
host can say which permission the failed call lacked.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ipaddress
import logging
import re
from urllib.parse import urlsplit

from .permissions import Permissions

__all__ = ["DENIED_REASON", "EgressProxy"]

logger = logging.getLogger("lorenz.sandbox")

#: The reason phrase of a refusal: ``403 lorenz-denied evil.example:443``.
DENIED_REASON = "lorenz-denied"
_MAX_HEAD_BYTES = 64 * 1024
_HEAD_TIMEOUT_SECONDS = 30.0
_CONNECT_TIMEOUT_SECONDS = 30.0
_KEPT_DENIALS = 64


class EgressProxy:
    """An HTTP proxy allowing only ``permissions.network`` (start with :meth:`start`)."""

    def __init__(self, pack: str, permissions: Permissions) -> None:
        self.pack = pack
        self.permissions = permissions
        self.port = 0
        self.denied = 0
        #: ``(loop time, "host:port")`` of recent refusals.
        self._denials: collections.deque[tuple[float, str]] = collections.deque(maxlen=_KEPT_DENIALS)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def aclose(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()

    def denials_since(self, when: float) -> list[str]:
        return [target for at, target in self._denials if at >= when]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError, ValueError):
            pass
        finally:
            writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT_SECONDS)
        if len(head) > _MAX_HEAD_BYTES:
            return
        line, _, rest = head.partition(b"\r\n")
        method, target, version = line.decode("latin-1").split(" ", 2)
        if method == "CONNECT":
            host, port = _host_port(target, "443")
        else:
            url = urlsplit(target)
            if url.scheme != "http" or not url.hostname:
                await _answer(writer, 400, "absolute http URL or CONNECT expected")
                return
            host, port = _host_port(url.netloc.rpartition("@")[2], "80")
        # Checked as a name first: a NUL or another control character would match a glob and then
        # be cut short by the resolver (``localhost\x00.allowed.test`` as ``*.allowed.test``).
        if not (_valid_host(host) and _valid_port(port) and self.permissions.allows_host(host, int(port))):
            refused = _printable(f"{_bracket(host)}:{port}")
            self._refuse(refused)
            await _answer(writer, 403, f"{DENIED_REASON} {refused}")
            return
        host = host.lower().removesuffix(".")  # the name matched
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection(host, int(port)), _CONNECT_TIMEOUT_SECONDS
            )
        except (OSError, TimeoutError) as exc:
            await _answer(writer, 502, f"cannot reach {_bracket(host)}:{port}: {type(exc).__name__}")
            return
        if method == "CONNECT":
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
            return
        path = urlsplit(target)._replace(scheme="", netloc="").geturl() or "/"
        up_writer.write(f"{method} {path} {version}\r\n".encode("latin-1") + _one_shot(rest))
        # Whatever follows on this connection goes to the host checked above, and nowhere else.
        upload = asyncio.ensure_future(_pipe(reader, up_writer))
        try:
            # One request per connection: a kept-alive client would send its next request in
            # absolute form to this upstream, which need not understand it.
            response = await asyncio.wait_for(up_reader.readuntil(b"\r\n\r\n"), _HEAD_TIMEOUT_SECONDS)
            status, _, response_rest = response.partition(b"\r\n")
            writer.write(status + b"\r\n" + _one_shot(response_rest))
            await _pipe(up_reader, writer)
        finally:
            upload.cancel()

    def _refuse(self, target: str) -> None:
        self.denied += 1
        self._denials.append((asyncio.get_running_loop().time(), target))
        logger.warning("lorenz: pack %s was refused %s (not in its permissions.network)", self.pack, target)


_HOP_BY_HOP = (b"proxy-", b"connection:", b"keep-alive:")


def _one_shot(head: bytes) -> bytes:
    """Header lines ``head`` without hop-by-hop ones, plus ``Connection: close``, ending the head."""
    lines = [line for line in head.split(b"\r\n") if line and not line.lower().startswith(_HOP_BY_HOP)]
    return b"".join(line + b"\r\n" for line in lines) + b"Connection: close\r\n\r\n"


def _host_port(target: str, default: str) -> tuple[str, str]:
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        host, _, port = target.rpartition(":") if ":" in target else (target, "", "")
    return host, port or default


#: A host name: dot-separated labels of ASCII letters, digits, ``-`` and ``_`` (and the root's
#: trailing dot), 254 characters at most.
_HOST_NAME = re.compile(r"(?=.{1,254}\Z)[A-Za-z0-9_-]{1,63}(?:\.[A-Za-z0-9_-]{1,63})*\.?", re.ASCII)


def _valid_port(port: str) -> bool:
    return port.isascii() and port.isdigit() and 0 < int(port) < 65536


def _printable(text: str) -> str:
    """``text`` for a log line and a status line: control and non-ASCII characters escaped."""
    return text if text.isascii() and text.isprintable() else text.encode("unicode_escape").decode("ascii")


def _valid_host(host: str) -> bool:
    """A host name or an IP address (no IPv6 zone: it names an interface, and takes any text)."""
    if _HOST_NAME.fullmatch(host):
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return "%" not in host


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host else host


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str) -> None:
    body = reason.encode()
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    writer.write(head.encode("latin-1") + body)
    with contextlib.suppress(OSError):
        await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(64 * 1024):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.write_eof()
