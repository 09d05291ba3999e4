"""Sandboxed packs and sockets (issue 39): a sandboxed pack opens TCP to its egress proxy and
nothing else. UDP (so DNS), Unix-domain (path and abstract), netlink and raw sockets, binding and
listening, signalling and tracing processes outside its sandbox are refused by the kernel, and
each refusal reaches the caller as an error naming it; names resolve through the proxy only."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from lorenz.results import ToolResult
from lorenz.sandbox import landlock, seccomp
from lorenz.workspace import Workspace, open_workspace

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        landlock.missing_feature(landlock.abi_version(), network=True) is not None, reason="no Landlock or seccomp"
    ),
]

#: ``sockets``: one tool per kind of socket, process or name a pack could reach for.
SOCKETS = """
import ctypes, os, socket

from lorenz import ToolSpec, hookimpl, tool_failure, tool_success

TOOLS = (
    "udp", "resolve", "unix", "abstract", "netlink", "raw", "bind", "listen", "kill", "ptrace", "get",
    "pair", "local",
)
#: A DNS query for example.com, as a resolver would send it.
QUERY = bytes.fromhex("123401000001000000000000076578616d706c6503636f6d0000010001")


class Sockets:
    name = "sockets"

    def tool_specs(self, settings):
        return [ToolSpec(name=f"sockets_{tool}", description=f"{tool}.") for tool in TOOLS]

    async def execute_tool(self, name, input, context):
        tool = name.removeprefix("sockets_")
        if tool == "udp":
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.sendto(QUERY, ("127.0.0.1", input["port"]))
        elif tool == "resolve":
            return tool_success({"addresses": [info[4][0] for info in socket.getaddrinfo(input["name"], 443)]})
        elif tool in ("unix", "abstract"):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.connect(input["path"] if tool == "unix" else "\\0" + input["name"])
                sock.sendall(b"exfiltrated")
        elif tool == "netlink":
            socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close()
        elif tool == "raw":
            socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).close()
        elif tool == "bind":
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
        elif tool == "listen":  # no bind: the kernel would pick a port
            with socket.socket() as sock:
                sock.listen()
                return tool_success({"port": sock.getsockname()[1]})
        elif tool == "kill":
            os.kill(input["pid"], 0)
        elif tool == "ptrace":
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.ptrace(16, input["pid"], None, None) != 0:  # PTRACE_ATTACH
                raise OSError(ctypes.get_errno(), "ptrace")
        elif tool == "get":
            response = await context.http.get(input["url"])
            response.raise_for_status()
            return tool_success({"body": response.json()})
        elif tool == "pair":  # a connected Unix pair reaches no one else: the pack's own
            left, right = socket.socketpair()
            with left, right:
                left.sendall(b"ping")
                return tool_success({"got": right.recv(4).decode()})
        elif tool == "local":  # what is allowed, then a failure of the pack's own
            socket.getaddrinfo("localhost", 80)
            os.kill(os.getpid(), 0)
            return tool_failure("the pack's own failure")
        return tool_success()


@hookimpl
def lorenz_register_tool_packs(register):
    register(Sockets())
"""


class _Api(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"port": self.server.server_address[1]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def api() -> Iterator[int]:
    """The pack's declared API, on loopback, which it names ``localhost``."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, sandbox_packs: ModuleType) -> Path:
    root = tmp_path_factory.mktemp("sockets-site")
    sandbox_packs.install(root, "sbx-sockets", "sbx_sockets", textwrap.dedent(SOCKETS))
    return root


def _open(directory: Path, api: int, **server: str) -> Workspace:
    extra = "".join(f"  {key}: {value}\n" for key, value in server.items())
    front = (
        "tracker:\n  kind: local\n  path: ./board\n"
        f"tools:\n  sockets:\n    permissions:\n      network: ['localhost:{api}']\n"
        f"server:\n  sandboxed_packs: ['*']\n  tool_timeout_seconds: 10\n{extra}"
    )
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    return open_workspace(cwd=directory, env={**env, "LORENZ_LOAD_PLUGINS": "lorenz-local,sbx-sockets"})


@pytest.fixture
def workspace(site: Path, tmp_path: Path, api: int, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)
    opened = _open(tmp_path, api)
    try:
        yield opened
    finally:
        opened.close()
        sys.modules.pop("sbx_sockets", None)


def call(workspace: Workspace, tool: str, arguments: Any = None) -> ToolResult:
    async def run() -> ToolResult:
        async with httpx.AsyncClient() as http:
            return await workspace.call(tool, arguments or {}, http)

    return asyncio.run(run())


def _error(result: ToolResult) -> str:
    assert not result.success, result
    return str(result.error)


#: How each refusal that no permission can lift ends.
UNSANDBOXED = "no permission grants it (only leaving the pack out of server.sandboxed_packs does)"
THROUGH_PROXY = "add the host to tools.sockets.permissions.network and reach it over HTTP(S) through the proxy"


def test_datagrams_and_dns_do_not_leave_and_the_declared_host_is_reached_by_name(
    workspace: Workspace, api: int
) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as resolver:  # a DNS server on loopback
        resolver.bind(("127.0.0.1", 0))
        resolver.settimeout(0.5)
        port = resolver.getsockname()[1]
        assert _error(call(workspace, "sockets_udp", {"port": port})) == (
            "pack sockets tried to open a UDP (AF_INET, SOCK_DGRAM) socket; a sandboxed pack has TCP to its"
            f" proxy only: {THROUGH_PROXY}"
        )
        with pytest.raises(TimeoutError):
            resolver.recvfrom(512)
    assert _error(call(workspace, "sockets_resolve", {"name": "undeclared.invalid"})) == (
        f"pack sockets tried to resolve undeclared.invalid; a sandboxed pack resolves names through its proxy:"
        f" {THROUGH_PROXY}"
    )
    # The declared host by name: the proxy resolves it.
    answered = call(workspace, "sockets_get", {"url": f"http://localhost:{api}/v1"})
    assert answered.result == {"body": {"port": api}}
    # The pack's own channels: a Unix pair, and the names and process it may reach.
    assert call(workspace, "sockets_pair").result == {"got": "ping"}
    assert _error(call(workspace, "sockets_local")) == "the pack's own failure"


def test_unix_netlink_and_raw_sockets_are_refused_with_a_message(workspace: Workspace, tmp_path: Path) -> None:
    received: list[bytes] = []
    path = tmp_path / "host.sock"  # a daemon's socket the pack can name, as /run/docker.sock
    name = f"lorenz-test-{uuid.uuid4().hex}"
    listeners = []
    for address in (str(path), "\0" + name):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(address)
        listener.listen()
        listener.settimeout(0.2)
        listeners.append(listener)
    try:
        unix = "pack sockets tried to open a Unix (AF_UNIX, SOCK_STREAM) socket; a sandboxed pack has TCP to its"
        assert _error(call(workspace, "sockets_unix", {"path": str(path)})) == f"{unix} proxy only: {THROUGH_PROXY}"
        assert _error(call(workspace, "sockets_abstract", {"name": name})) == f"{unix} proxy only: {THROUGH_PROXY}"
        for listener in listeners:
            try:
                connection, _ = listener.accept()
                received.append(connection.recv(64))
            except TimeoutError:
                pass
    finally:
        for listener in listeners:
            listener.close()
    assert received == []
    assert "open a netlink (AF_NETLINK, SOCK_RAW) socket" in _error(call(workspace, "sockets_netlink"))
    assert "open a raw (AF_INET, SOCK_RAW) socket" in _error(call(workspace, "sockets_raw"))


def test_binding_listening_signalling_and_tracing_are_refused(workspace: Workspace) -> None:
    assert _error(call(workspace, "sockets_bind")) == (
        f"pack sockets tried to listen on 127.0.0.1:0; a sandboxed pack accepts no connections: {UNSANDBOXED}"
    )
    # listen() without bind would take a port Landlock does not see.
    assert _error(call(workspace, "sockets_listen")) == (
        f"pack sockets tried to listen on 0.0.0.0:0; a sandboxed pack accepts no connections: {UNSANDBOXED}"
    )
    host = os.getpid()
    assert _error(call(workspace, "sockets_kill", {"pid": host})) == (
        f"pack sockets tried to signal process {host} outside its sandbox; {UNSANDBOXED}"
    )
    assert _error(call(workspace, "sockets_ptrace", {"pid": host})) == (
        f"pack sockets tried to trace another process (ptrace); {UNSANDBOXED}"
    )
    assert call(workspace, "sockets_pair").result == {"got": "ping"}


def test_without_libseccomp_a_sandboxed_pack_does_not_start_unless_the_operator_accepts_it(
    site: Path, tmp_path: Path, api: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(seccomp, "_library", lambda: None)
    opened = _open(tmp_path, api)
    try:
        assert "sockets" not in opened.pack_names()
        (failure,) = opened.mounted.failures
        assert failure.pack == "sockets" and "this kernel lacks libseccomp (libseccomp.so.2" in failure.error
    finally:
        opened.close()
    opened = _open(tmp_path, api, sandbox_fallback="warn")
    try:
        assert call(opened, "sockets_pair").result == {"got": "ping"}
    finally:
        opened.close()
        sys.modules.pop("sbx_sockets", None)


#: In a process of its own (the filter is for good): each socket() the filter is asked, with the
#: high bits of the 64-bit arguments set too (the kernel reads an int), against socket_refused.
FILTER_PROBE = """
import ctypes, json, os, socket
from lorenz.sandbox import seccomp

seccomp.restrict()
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_SOCKET = 41
out = []
families = (socket.AF_UNSPEC, socket.AF_UNIX, socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, 3, 9, 11, 17, 45)
flags = socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC
kinds = (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_RAW, socket.SOCK_SEQPACKET, socket.SOCK_STREAM | flags)
for family in families:
    for kind in kinds:
        for proto in (0, socket.IPPROTO_TCP, socket.IPPROTO_UDP, socket.IPPROTO_ICMP, 132, 262):
            for high in (0, 1 << 32):
                args = (SYS_SOCKET, family | high, kind | high, proto | high)
                fd = libc.syscall(*(ctypes.c_long(arg) for arg in args))
                code = ctypes.get_errno() if fd < 0 else 0
                if fd >= 0:
                    os.close(fd)
                out.append([family, kind, proto, high, code])
pair = []
for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
    pair.append(libc.socketpair(socket.AF_UNIX, kind, 0, (ctypes.c_int * 2)()) == 0 or ctypes.get_errno())
listener = socket.socket()
try:
    listener.listen()
    listen = 0
except OSError as exc:
    listen = exc.errno
print(json.dumps({"socket": out, "pair": pair, "listen": listen}))
"""


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="the probe calls socket() by its x86_64 number")
def test_the_filter_refuses_exactly_what_socket_refused_says() -> None:
    done = subprocess.run([sys.executable, "-c", FILTER_PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    probed = json.loads(done.stdout)
    for family, kind, proto, high, code in probed["socket"]:
        refused = high or seccomp.socket_refused(family, kind, proto)
        assert (code == 13) == bool(refused), (family, kind, proto, high, code)
    assert probed["pair"] == [True, 13]
    assert probed["listen"] == 13
