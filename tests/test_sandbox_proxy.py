"""The egress proxy's host matching (issue 39): only a well-formed host name or IP address is
matched against a pack's permissions; anything else is refused, counted and named escaped."""

from __future__ import annotations

import asyncio

import pytest

from lorenz.sandbox.permissions import Permissions
from lorenz.sandbox.proxy import EgressProxy


async def _ask(proxy: EgressProxy, head: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
    writer.write(head)
    await writer.drain()
    line = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    return line


async def _upstream() -> asyncio.Server:
    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.read(64))
        await writer.drain()
        writer.close()

    return await asyncio.start_server(echo, "127.0.0.1", 0)


@pytest.mark.parametrize(
    ("head", "refused"),
    [
        (b"CONNECT localhost\x00.allowed.test:443 HTTP/1.1", r"localhost\x00.allowed.test:443"),
        (b"CONNECT api\x1b.allowed.test:443 HTTP/1.1", r"api\x1b.allowed.test:443"),
        (b"CONNECT api\t.allowed.test:443 HTTP/1.1", r"api\t.allowed.test:443"),
        (b"CONNECT api.allowed.test\x7f:443 HTTP/1.1", r"api.allowed.test\x7f:443"),
        (b"GET http://localhost%00.allowed.test/ HTTP/1.1", "localhost%00.allowed.test:80"),
        (b"CONNECT api.allowed.test:443x HTTP/1.1", "api.allowed.test:443x"),
        (b"CONNECT api.allowed.test:+443 HTTP/1.1", "api.allowed.test:+443"),
        (b"CONNECT api.allowed.test:\xd9\xa4\xd9\xa4\xd9\xa3 HTTP/1.1", r"api.allowed.test:\xd9\xa4\xd9\xa4\xd9\xa3"),
        (b"CONNECT [fe80::1%eth0.allowed.test]:443 HTTP/1.1", "[fe80::1%eth0.allowed.test]:443"),
        (b"CONNECT api..allowed.test:443 HTTP/1.1", "api..allowed.test:443"),
        (b"CONNECT :443 HTTP/1.1", ":443"),
    ],
)
def test_a_malformed_name_is_refused_before_matching_and_counted(head: bytes, refused: str) -> None:
    async def run() -> tuple[bytes, int, list[str]]:
        proxy = EgressProxy("acme", Permissions(network=["*.allowed.test", "*"]))
        await proxy.start()
        try:
            line = await _ask(proxy, head + b"\r\nHost: x\r\n\r\n")
            return line, proxy.denied, proxy.denials_since(0.0)
        finally:
            await proxy.aclose()

    line, denied, denials = asyncio.run(run())
    assert line == f"HTTP/1.1 403 lorenz-denied {refused}\r\n".encode()
    assert (denied, denials) == (1, [refused])


def test_a_well_formed_declared_name_still_goes_through() -> None:
    async def run() -> tuple[bytes, int]:
        upstream = await _upstream()
        port = upstream.sockets[0].getsockname()[1]
        proxy = EgressProxy("acme", Permissions(network=[f"localhost:{port}"]))
        await proxy.start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", proxy.port)
            writer.write(f"CONNECT LocalHost.:{port} HTTP/1.1\r\n\r\n".encode())
            status = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
            writer.write(b"hello")
            echoed = await asyncio.wait_for(reader.read(5), 10)
            writer.close()
            return status.split(b"\r\n")[0] + b" " + echoed, proxy.denied
        finally:
            await proxy.aclose()
            upstream.close()

    assert asyncio.run(run()) == (b"HTTP/1.1 200 Connection established hello", 0)
