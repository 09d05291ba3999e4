"""The HTTP guard: Host/Origin allow-lists, the bearer token comparison, and the configured
allow-lists, token and body cap taking effect through WORKFLOW.md."""

from __future__ import annotations

import html
import json
import logging
from pathlib import Path
from types import ModuleType

import httpx
import pytest

from lorenz.host import serve_in_thread
from lorenz.host.security import host_allowed, origin_allowed, token_matches

pytestmark = pytest.mark.anyio

ENV = {"LORENZ_LOAD_PLUGINS": ""}
HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:4040", True),
        ("localhost", True),
        ("LOCALHOST:1", True),
        ("[::1]:8080", True),
        ("evil.example", False),
        ("127.0.0.1.evil.example:4040", False),
        ("localhost.evil.example", False),
        ("", False),
        (None, False),
    ],
)
def test_host_allowed_defaults_to_loopback(host: str | None, allowed: bool) -> None:
    """Only loopback names pass by default, on any port; look-alike names do not."""
    assert host_allowed(host) is allowed


@pytest.mark.parametrize(
    ("host", "allowed"),
    [
        ("127.0.0.1:4040", True),
        ("LOCALHOST:4040", True),
        ("[::1]:4040", True),
        ("127.0.0.1:9999", False),  # another server on this machine
        ("localhost:8000", False),
        ("[::1]:80", False),
        ("localhost", False),  # no port: port 80
        ("localhost:4040x", False),
        ("127.0.0.1:04040", False),
    ],
)
def test_a_loopback_host_names_this_server_on_its_port_only(host: str, allowed: bool) -> None:
    """Served on port 4040, a loopback name is this server on 4040 only."""
    assert host_allowed(host, port=4040) is allowed


def test_a_host_without_a_port_names_the_schemes_default() -> None:
    assert host_allowed("localhost", port=80)
    assert not host_allowed("localhost", port=80, scheme="https")
    assert host_allowed("localhost", port=443, scheme="https")


def test_the_bound_address_names_this_server_on_its_port_only() -> None:
    assert host_allowed("10.0.0.5:4040", port=4040, own=["10.0.0.5"])
    assert not host_allowed("10.0.0.5:4041", port=4040, own=["10.0.0.5"])


def test_a_listed_host_is_allowed_on_any_port_it_lists() -> None:
    """``server.allowed_hosts`` still decides for itself: a port mapped elsewhere (``docker -p``)."""
    assert host_allowed("localhost:8080", ["localhost:8080"], port=4040)
    assert host_allowed("localhost:8080", ["localhost"], port=4040)
    assert not host_allowed("localhost:8081", ["localhost:8080"], port=4040)


def test_host_allow_list_entries() -> None:
    """`server.allowed_hosts` entries: a bare host (any port), host:port, host:*."""
    assert host_allowed("mcp.internal:9000", ["mcp.internal"])
    assert host_allowed("mcp.internal:9000", ["mcp.internal:*"])
    assert host_allowed("mcp.internal:9000", ["mcp.internal:9000"])
    assert not host_allowed("mcp.internal:9001", ["mcp.internal:9000"])
    assert not host_allowed("other.internal:9000", ["mcp.internal"])


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # CLI clients send none
        ("http://127.0.0.1:4040", True),  # the server's own origin
        ("HTTP://127.0.0.1:4040", True),
        ("http://localhost:4040", True),  # another loopback name for the same port: the same server
        ("http://[::1]:4040", True),
        ("http://localhost:6274", False),  # a page on another loopback port (the MCP Inspector, or anything)
        ("http://127.0.0.1", False),  # port 80
        ("https://127.0.0.1:4040", False),  # not the scheme it is served with
        ("http://127.0.0.1:4040/", False),  # an Origin has no path
        ("http://evil.example:4040", False),
        ("http://localhost.evil.example:4040", False),
        ("null", False),
        ("file://", False),
    ],
)
def test_origin_allowed_is_the_servers_own_by_default(origin: str | None, allowed: bool) -> None:
    """An absent Origin or the server's own (as reached at Host 127.0.0.1:4040) passes; any other
    origin, loopback pages on other ports included, is refused."""
    assert origin_allowed(origin, host="127.0.0.1:4040") is allowed


def test_own_origin_follows_the_host_it_is_reached_at() -> None:
    """The own origin is scheme://Host: a configured host name on its port, default ports implied."""
    assert origin_allowed("http://mcp.internal:9000", host="mcp.internal:9000")
    assert not origin_allowed("http://localhost:9000", host="mcp.internal:9000")
    assert origin_allowed("http://localhost", host="localhost:80")
    assert origin_allowed("https://mcp.internal", host="mcp.internal", scheme="https")
    assert not origin_allowed("https://mcp.internal", host="mcp.internal")  # served over http: port 80
    assert not origin_allowed("http://127.0.0.1:4040")  # no Host: nothing is its own


def test_origin_allow_list_entries() -> None:
    """`server.allowed_origins` entries: exact origins and a `:*` port wildcard."""
    assert origin_allowed("https://app.example", ["https://app.example"])
    assert origin_allowed("https://app.example:8443", ["https://app.example:*"])
    assert origin_allowed("http://localhost:6274", ["http://localhost:*"], host="127.0.0.1:4040")
    assert not origin_allowed("https://app.example.evil:8443", ["https://app.example:*"])
    assert not origin_allowed("https://evil.example", ["https://app.example"])


def test_token_matches_only_the_exact_bearer() -> None:
    """Only `Bearer <token>` with the exact token passes; other schemes and near-misses fail."""
    assert token_matches("Bearer s3cret", "s3cret")
    assert token_matches("bearer s3cret", "s3cret")  # RFC 7235: the scheme is case-insensitive
    assert not token_matches("Basic s3cret", "s3cret")
    assert not token_matches("Bearer s3cre", "s3cret")
    assert not token_matches("Bearer ", "s3cret")
    assert not token_matches(None, "s3cret")


async def test_configured_allow_lists_extend_loopback(tmp_path: Path, host_pack: ModuleType) -> None:
    """server.allowed_hosts / allowed_origins admit the named host and origin, and only those."""
    (tmp_path / "WORKFLOW.md").write_text(
        "---\ntracker:\n  kind: demo\nserver:\n  allowed_hosts: [mcp.internal]\n"
        "  allowed_origins: ['https://app.example']\n---\n"
    )
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        async with httpx.AsyncClient() as http:
            named = await http.post(
                server.url,
                json=LIST,
                headers={**HEADERS, "Host": "mcp.internal:4040", "Origin": "https://app.example"},
            )
            other_host = await http.post(server.url, json=LIST, headers={**HEADERS, "Host": "mcp.elsewhere"})
            other_origin = await http.post(server.url, json=LIST, headers={**HEADERS, "Origin": "https://b.example"})
    assert named.status_code == 200
    assert other_host.status_code == 421
    assert other_origin.status_code == 403


async def test_token_from_workflow_env_reference(tmp_path: Path, host_pack: ModuleType) -> None:
    """server.token: $VAR is resolved; the page and card hide the inventory from callers without it."""
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\nserver:\n  token: $MY_TOKEN\n---\n")
    with serve_in_thread(cwd=tmp_path, env={**ENV, "MY_TOKEN": "from-env"}, plugins=[host_pack]) as server:
        async with httpx.AsyncClient() as http:
            denied = await http.post(server.url, json=LIST, headers=HEADERS)
            allowed = await http.post(server.url, json=LIST, headers={**HEADERS, "Authorization": "Bearer from-env"})
            page = await http.get(server.base_url + "/")
            card = await http.get(server.base_url + "/.well-known/mcp.json")
            authed_card = await http.get(
                server.base_url + "/.well-known/mcp.json", headers={"Authorization": "Bearer from-env"}
            )
            health = await http.get(server.base_url + "/healthz")
    assert denied.status_code == 401
    assert denied.headers["www-authenticate"].startswith("Bearer")
    assert allowed.status_code == 200
    assert "demo_add" not in page.text
    assert "from-env" not in page.text
    assert '--header "Authorization: Bearer $LORENZ_MCP_TOKEN"' in html.unescape(page.text)
    assert card.json()["authentication"] == {"required": True, "type": "bearer"}
    assert "tools" not in card.json()
    assert next(tool["name"] for tool in authed_card.json()["tools"]) == "demo_add"
    assert health.status_code == 200


async def test_unauthenticated_call_runs_nothing(tmp_path: Path, host_pack: ModuleType) -> None:
    """A rejected tools/call never reaches the pack; the same call with the token does."""
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\n---\n")
    host_pack.CALLS.clear()
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack], token="t0k") as server:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "demo_add"}}
        body["params"]["arguments"] = {"a": 1, "b": 2}
        async with httpx.AsyncClient() as http:
            denied = await http.post(server.url, content=json.dumps(body), headers=HEADERS)
            wrong = await http.post(server.url, json=body, headers={**HEADERS, "Authorization": "Bearer t0kX"})
            assert host_pack.CALLS == []
            ok = await http.post(server.url, json=body, headers={**HEADERS, "Authorization": "Bearer t0k"})
    assert (denied.status_code, wrong.status_code, ok.status_code) == (401, 401, 200)
    assert host_pack.CALLS == ["demo_add"]


async def test_body_cap_follows_settings(tmp_path: Path, host_pack: ModuleType) -> None:
    """server.max_body_bytes sets the cap: a body just over it gets 413, one under it is served."""
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\nserver:\n  max_body_bytes: 2048\n---\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        small = {**LIST, "params": {"_pad": "x" * 1000}}
        large = {**LIST, "params": {"_pad": "x" * 3000}}
        async with httpx.AsyncClient() as http:
            under = await http.post(server.url, json=small, headers=HEADERS)
            over = await http.post(server.url, json=large, headers=HEADERS)
    assert under.status_code == 200
    assert over.status_code == 413
    assert over.json()["error"]["code"] == "payload_too_large"


async def test_configured_browser_origin_gets_cors(tmp_path: Path, host_pack: ModuleType) -> None:
    """An origin in server.allowed_origins gets a CORS preflight answer (no token needed) and
    readable replies."""
    (tmp_path / "WORKFLOW.md").write_text(
        "---\ntracker:\n  kind: demo\nserver:\n  allowed_origins: ['http://localhost:6274']\n---\n"
    )
    origin = "http://localhost:6274"
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack], token="t0k") as server:
        async with httpx.AsyncClient() as http:
            preflight = await http.options(
                server.url,
                headers={"Origin": origin, "Access-Control-Request-Method": "POST"},
            )
            reply = await http.post(
                server.url, json=LIST, headers={**HEADERS, "Origin": origin, "Authorization": "Bearer t0k"}
            )
            denied = await http.post(server.url, json=LIST, headers={**HEADERS, "Origin": origin})
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == origin
    assert "Mcp-Session-Id" in preflight.headers["access-control-allow-headers"]
    assert reply.status_code == 200
    assert reply.headers["access-control-allow-origin"] == origin
    assert denied.status_code == 401
    assert denied.headers["access-control-allow-origin"] == origin


async def test_other_loopback_pages_may_not_call_tools(tmp_path: Path, host_pack: ModuleType) -> None:
    """With no token and no allowed_origins, a page on another localhost port gets 403 for its
    preflight and its call, and nothing runs; the server's own origin, by either loopback name, and
    a request with no Origin are served."""
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\n---\n")
    host_pack.CALLS.clear()
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "demo_add", "arguments": {"a": 1, "b": 2}},
    }
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        port = server.base_url.rsplit(":", 1)[1]
        async with httpx.AsyncClient() as http:
            preflight = await http.options(
                server.url, headers={"Origin": "http://localhost:6274", "Access-Control-Request-Method": "POST"}
            )
            foreign = await http.post(server.url, json=call, headers={**HEADERS, "Origin": "http://localhost:6274"})
            assert host_pack.CALLS == []
            own = await http.post(server.url, json=call, headers={**HEADERS, "Origin": server.base_url})
            alias = await http.post(server.url, json=call, headers={**HEADERS, "Origin": f"http://localhost:{port}"})
            bare = await http.post(server.url, json=call, headers=HEADERS)
    assert preflight.status_code == 403
    assert "access-control-allow-origin" not in preflight.headers
    assert foreign.status_code == 403
    assert foreign.json()["error"]["message"] == (
        'Origin "http://localhost:6274" is not allowed; add it to server.allowed_origins in WORKFLOW.md to allow it'
    )
    assert (own.status_code, alias.status_code, bare.status_code) == (200, 200, 200)
    assert host_pack.CALLS == ["demo_add"] * 3


def test_token_matches_scheme_case_bytes_and_configured_whitespace() -> None:
    """Any-case `Bearer`, a non-ASCII token sent as raw UTF-8 bytes, and a padded configured token all match."""
    assert token_matches(b"BEARER s3cret", "s3cret")
    assert token_matches("Bearer gr\u00fc\u00dfe-token".encode(), "gr\u00fc\u00dfe-token")
    assert token_matches(b"Bearer s3cret", "  s3cret\n")
    assert not token_matches(b"Bearer s3cret", "   ")
    assert not token_matches(b"Bearers3cret", "s3cret")


async def test_lowercase_scheme_and_utf8_token_pass_over_http(tmp_path: Path, host_pack: ModuleType) -> None:
    """Over HTTP, `bearer` in any case and a non-ASCII token sent as UTF-8 are accepted."""
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\nserver:\n  token: $MY_TOKEN\n---\n")
    token = "gr\u00fc\u00dfe-t\u00f6ken"
    with serve_in_thread(cwd=tmp_path, env={**ENV, "MY_TOKEN": token}, plugins=[host_pack]) as server:
        async with httpx.AsyncClient() as http:
            allowed = await http.post(
                server.url, json=LIST, headers={**HEADERS, "Authorization": f"bearer {token}".encode()}
            )
            wrong = await http.post(server.url, json=LIST, headers={**HEADERS, "Authorization": b"bearer gr-token"})
    assert allowed.status_code == 200
    assert wrong.status_code == 401


def test_a_refused_origin_is_logged_once(
    tmp_path: Path, host_pack: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    """The operator learns which origin was refused and which setting allows it, once per origin."""
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\n---\n")
    caplog.set_level(logging.WARNING, logger="lorenz.host")
    origin = "http://refused-once.example"
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        for _ in range(3):
            refused = httpx.post(
                server.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers={**HEADERS, "Origin": origin}
            )
            assert refused.status_code == 403
    lines = [record.getMessage() for record in caplog.records if "refused-once.example" in record.getMessage()]
    assert lines == [f'lorenz: refused a request from Origin "{origin}"; list it in server.allowed_origins to allow it']


async def test_a_loopback_name_on_another_port_is_misdirected(tmp_path: Path, host_pack: ModuleType) -> None:
    """Served on a loopback port, the server takes its loopback names on that port only: a request
    naming another port (another server's, or a port this one does not serve) gets 421 naming the
    key, on ``/mcp`` and every other route; one that lists the name in allowed_hosts is served."""
    (tmp_path / "WORKFLOW.md").write_text(
        "---\ntracker:\n  kind: demo\nserver:\n  allowed_hosts: ['localhost:8080']\n---\n"
    )
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack]) as server:
        port = int(server.base_url.rsplit(":", 1)[1])
        other = port + 1 if port < 65535 else port - 1
        async with httpx.AsyncClient() as http:

            async def status(host: str, path: str = "/mcp") -> int:
                if path == "/mcp":
                    return (await http.post(server.url, json=LIST, headers={**HEADERS, "Host": host})).status_code
                return (await http.get(server.base_url + path, headers={"Host": host})).status_code

            served = [await status(f"{name}:{port}") for name in ("127.0.0.1", "localhost", "[::1]")]
            refused = [
                await status(f"{name}:{other}", path)
                for name in ("127.0.0.1", "localhost", "[::1]")
                for path in ("/mcp", "/", "/healthz")
            ]
            bare = await status("localhost")
            listed = await status("localhost:8080")
            reply = await http.post(server.url, json=LIST, headers={**HEADERS, "Host": f"localhost:{other}"})
    assert served == [200, 200, 200]
    assert refused == [421] * 9
    assert bare == 421  # no port: port 80
    assert listed == 200
    message = reply.json()["error"]["message"]
    assert f'"localhost:{other}"' in message and f"port {port}" in message and "server.allowed_hosts" in message
