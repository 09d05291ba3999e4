"""``server.auth`` under attack and outage, over real loopback HTTP against the loopback issuer
(``tests/oauth_issuer.py``): the audience never follows the request, an issuer whose keys are
slow or failing costs it one fetch and its callers a 503 with ``Retry-After``, and unknown opaque
tokens cannot turn the host into an amplifier of introspection requests."""

from __future__ import annotations

import importlib.util
import os
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import pytest

from lorenz import hookimpl
from lorenz.host import serve_in_thread
from lorenz.host.app import build_app
from lorenz.host.reload.live import LiveWorkspace
from lorenz.testing import FakeTracker, loopback_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HERE = Path(__file__).parent
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


oauth_issuer = _load("oauth_issuer")


class Plugin:
    __name__ = "hardening-plugin"

    @hookimpl
    def lorenz_register_trackers(self, register: Any) -> None:
        register(FakeTracker())


@pytest.fixture
def issuer() -> Iterator[Any]:
    """A fresh issuer per test: its counters are what the tests read."""
    authority = oauth_issuer.Issuer()
    with loopback_server(authority.app()) as served:
        authority.base_url = served.base_url
        yield authority


def _workflow(directory: Path, issuer: Any, auth: str = "", server: str = "") -> None:
    front = f"tracker:\n  kind: lorenz-testing\nserver:\n{server}  auth:\n    issuer: {issuer.base_url}\n{auth}"
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")


def _env(**extra: str) -> dict[str, str]:
    return {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", ""), **extra}


INTROSPECTION = "    introspection: {endpoint: %s/introspect, client_id: lorenz, client_secret: $INTRO}\n"


@pytest.fixture
def served(tmp_path: Path, issuer: Any) -> Iterator[Any]:
    _workflow(tmp_path, issuer, INTROSPECTION % issuer.base_url)
    with serve_in_thread(cwd=tmp_path, env=_env(INTRO="intro-secret"), plugins=[Plugin()], reload=False) as running:
        yield running


async def _post(url: str, token: str, **headers: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.post(url, json=LIST, headers={**HEADERS, "Authorization": f"Bearer {token}", **headers})


# -- 1. The audience is this server's, whatever the request says ------------------------------


@pytest.mark.parametrize(
    ("audience", "host"),
    [
        ("http://localhost:{port}/mcp", "localhost:{port}"),  # this server by another name
        ("http://[::1]:{port}/mcp", "[::1]:{port}"),
        ("https://127.0.0.1:{port}/mcp", "127.0.0.1:{port}"),  # and another scheme
    ],
)
async def test_a_token_for_another_server_is_refused_whatever_the_host_header(
    served: Any, issuer: Any, audience: str, host: str
) -> None:
    port = served.url.rsplit(":", 1)[1].removesuffix("/mcp")
    audience, host = audience.format(port=port), host.format(port=port)
    foreign = issuer.token(aud=audience, scope="tools:read")
    spoofed = {"Host": host, "X-Forwarded-Proto": audience.split(":", 1)[0]}
    reply = await _post(served.url, foreign, **spoofed)
    assert reply.status_code == 401, reply.text
    metadata = served.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert f'resource_metadata="{metadata}"' in reply.headers["www-authenticate"]
    async with httpx.AsyncClient() as http:
        page = await http.get(
            served.url.removesuffix("/mcp") + "/", headers={**spoofed, "Authorization": f"Bearer {foreign}"}
        )
        document = await http.get(metadata, headers=spoofed)
    assert page.status_code == 200 and "Signed in as" not in page.text
    assert document.json()["resource"] == served.url
    # A token for this server is accepted, whatever name the request used to reach it.
    assert (await _post(served.url, issuer.token(aud=served.url), **spoofed)).status_code == 200


@pytest.mark.parametrize("host", ["127.0.0.1:9999", "localhost:8000", "[::1]:80"])
async def test_a_host_naming_another_loopback_server_is_misdirected(served: Any, issuer: Any, host: str) -> None:
    """A loopback name on a port this server does not serve is another server's: 421, before any
    token is looked at, with a token for that server or for this one."""
    scheme_host = host.replace("[::1]:80", "[::1]")
    foreign = issuer.token(aud=f"http://{scheme_host}/mcp", scope="tools:read")
    for token in (foreign, issuer.token(aud=served.url)):
        assert (await _post(served.url, token, Host=host)).status_code == 421
    assert issuer.introspections == []


async def test_an_app_told_it_listens_beyond_loopback_refuses_every_token_without_an_audience(
    tmp_path: Path, issuer: Any
) -> None:
    """An embedder's ``build_app(bind_host="0.0.0.0")`` with no ``audience``: nothing to check a
    token against, so every OAuth request fails closed with the key to set."""
    _workflow(tmp_path, issuer)
    live = LiveWorkspace.open(None, cwd=tmp_path, env=_env(), plugins=[Plugin()], reload=False)
    with loopback_server(build_app(live, bind_host="0.0.0.0")) as server:
        url = server.base_url + "/mcp"
        reply = await _post(url, issuer.token(aud=url))
        async with httpx.AsyncClient() as http:
            document = await http.get(server.base_url + "/.well-known/oauth-protected-resource/mcp")
    assert reply.status_code == 500 and "server.auth.audience is not set" in reply.json()["error_description"]
    assert document.status_code == 500 and "server.auth.audience" in document.text


def test_check_and_serve_refuse_oauth_beyond_loopback_without_an_audience(
    tmp_path: Path, issuer: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lorenz.cli import main

    front = (
        f"tracker:\n  kind: local\n  path: ./board\nserver:\n  host: 0.0.0.0\n  auth:\n    issuer: {issuer.base_url}\n"
    )
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\nWork.\n", encoding="utf-8")
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "lorenz-local")
    monkeypatch.delenv("LORENZ_WORKFLOW", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 1
    assert (
        "lorenz serve would refuse it: refusing to listen on 0.0.0.0 with server.auth: server.auth.audience is not set"
        in (capsys.readouterr().err)
    )
    assert main(["serve", "--port", "0"]) == 1
    assert "server.auth.audience is not set" in capsys.readouterr().err
    loopback = front.replace("0.0.0.0", "127.0.0.1")
    public = front + "    audience: https://mcp.example.com/mcp\n"
    for text in (loopback, public):
        (tmp_path / "WORKFLOW.md").write_text(f"---\n{text}---\nWork.\n", encoding="utf-8")
        assert main(["check"]) == 0, capsys.readouterr().err
        assert "server.auth.audience" not in capsys.readouterr().err
    # On loopback behind a proxy (other names allowed), the missing audience is worth a warning.
    proxied = loopback.replace("  auth:", "  allowed_hosts: [mcp.example.com]\n  auth:")
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{proxied}---\nWork.\n", encoding="utf-8")
    assert main(["check"]) == 0
    assert (
        "server.auth.audience is not set, so access tokens must name this server's loopback URL of /mcp, "
        "not one at mcp.example.com (server.allowed_hosts)" in capsys.readouterr().err
    )
    # The command line's address counts, not only server.host.
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{loopback}---\nWork.\n", encoding="utf-8")
    assert main(["serve", "--host", "::", "--port", "0"]) == 1
    assert "refusing to listen on :: with server.auth: server.auth.audience is not set" in capsys.readouterr().err


# -- 6. An issuer whose keys are failing or slow ------------------------------------------------


async def _burst(url: str, tokens: list[str]) -> list[httpx.Response]:
    replies: list[httpx.Response] = []

    async def one(token: str) -> None:
        replies.append(await _post(url, token))

    async with anyio.create_task_group() as tg:
        for token in tokens:
            tg.start_soon(one, token)
    return replies


def _unavailable(reply: httpx.Response) -> bool:
    """A 503 that says when to retry, and no challenge: the token was not judged."""
    return (
        reply.status_code == 503
        and int(reply.headers["retry-after"]) >= 1
        and reply.json()["error"] == "temporarily_unavailable"
        and "www-authenticate" not in reply.headers
    )


async def test_a_failing_jwks_costs_the_issuer_one_fetch_and_callers_a_503(served: Any, issuer: Any) -> None:
    issuer.jwks_status = 500
    tokens = [issuer.token(aud=served.url, jti=str(n)) for n in range(8)]
    replies = await _burst(served.url, tokens)
    assert all(_unavailable(reply) for reply in replies), [(r.status_code, r.text) for r in replies]
    assert (issuer.metadata_fetches, issuer.jwks_fetches) == (1, 1)
    # Within the back-off, neither a good token nor made-up key ids reach the issuer.
    issuer.add_key("made-up", "RS256", publish=False)
    for token in [tokens[0], issuer.token("made-up", aud=served.url)]:
        assert _unavailable(await _post(served.url, token))
    assert (issuer.metadata_fetches, issuer.jwks_fetches) == (1, 1)


async def test_a_slow_jwks_is_waited_for_a_bounded_time_then_served(
    served: Any, issuer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("lorenz.host.auth.keys.KEY_WAIT", 0.5, raising=False)
    issuer.jwks_gate = gate = threading.Event()
    try:
        replies = await _burst(served.url, [issuer.token(aud=served.url, jti=str(n)) for n in range(8)])
        assert all(_unavailable(reply) for reply in replies), [(r.status_code, r.text) for r in replies]
        assert issuer.jwks_fetches == 1
    finally:
        gate.set()
    # The fetch under way finishes for the next request: no second one.
    assert (await _post(served.url, issuer.token(aud=served.url))).status_code == 200
    assert issuer.jwks_fetches == 1


async def test_the_keys_back_off_after_failures_and_recover(issuer: Any) -> None:
    """The back-off (2 s, doubling to 30 s) on a clock of the test's, against the loopback issuer."""
    from lorenz.host.auth.keys import IssuerUnavailable, KeySet, backoff
    from lorenz.settings.model import OAuthSettings

    assert [backoff(n) for n in (1, 2, 3, 4, 5, 6, 9)] == [2, 4, 8, 16, 30, 30, 30]
    now = [100.0]
    issuer.jwks_status = 500
    async with httpx.AsyncClient() as http:
        keys = KeySet(OAuthSettings(issuer=issuer.base_url), lambda: http, clock=lambda: now[0])
        for attempt, wait in enumerate((2.0, 4.0), start=1):
            for _ in range(3):
                with pytest.raises(IssuerUnavailable) as caught:
                    await keys.find("rsa-1")
                assert caught.value.retry_after == wait
            assert issuer.jwks_fetches == attempt
            now[0] += wait
        issuer.jwks_status = 200
        assert (await keys.find("rsa-1") or {}).get("kid") == "rsa-1"
        assert issuer.jwks_fetches == 3
        assert await keys.find("made-up") is None  # the issuer answers: an unknown key is refused
        issuer.jwks_status = 500
        now[0] += 3600  # an hour on, the keys are fetched again and fail: the ones known still serve
        assert (await keys.find("rsa-1") or {}).get("kid") == "rsa-1"
        assert issuer.jwks_fetches == 5  # the stale fetch, and the fetch for the unknown kid before it


async def test_metadata_naming_another_issuer_is_never_used() -> None:
    """RFC 8414 §3.3, for the host's keys and for `lorenz check --online` alike: an issuer whose
    metadata names another issuer gets no keys from the JWKS it points to."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from lorenz.host.auth.keys import IssuerUnavailable, KeySet
    from lorenz.host.auth.probe import ProbeError, probe_issuer
    from lorenz.settings.model import OAuthSettings

    fetched: list[str] = []

    async def metadata(request: Request) -> JSONResponse:
        return JSONResponse({"issuer": "https://other.example", "jwks_uri": f"{request.base_url}jwks"})

    async def jwks(request: Request) -> JSONResponse:
        fetched.append("jwks")
        return JSONResponse({"keys": []})

    app = Starlette(routes=[Route("/.well-known/oauth-authorization-server", metadata), Route("/jwks", jwks)])
    with loopback_server(app) as server:
        auth = OAuthSettings(issuer=server.base_url)
        async with httpx.AsyncClient() as http:
            with pytest.raises(IssuerUnavailable):
                await KeySet(auth, lambda: http).find("rsa-1")
            with pytest.raises(ProbeError) as caught:
                await probe_issuer(auth, http)
    where = f"{server.base_url}/.well-known/oauth-authorization-server"
    assert str(caught.value) == f"server.auth.issuer: the metadata at {where} names the issuer 'https://other.example'"
    assert fetched == []


# -- 7. Unknown opaque tokens --------------------------------------------------------------------


async def test_a_repeated_unknown_token_is_introspected_once(served: Any, issuer: Any) -> None:
    token = "unknown-" + secrets.token_urlsafe(16)
    replies = await _burst(served.url, [token] * 10)
    for _ in range(10):
        replies.append(await _post(served.url, token))
    assert {reply.status_code for reply in replies} == {401}
    assert issuer.introspections.count(token) == 1


async def test_a_burst_of_random_tokens_reaches_the_issuer_at_most_half(served: Any, issuer: Any) -> None:
    issuer.opaque["known-good"] = {"active": True, "sub": "bob", "aud": served.url}
    assert (await _post(served.url, "known-good")).status_code == 200
    before = len(issuer.introspections)
    replies = await _burst(served.url, [secrets.token_urlsafe(24) for _ in range(60)])
    asked = len(issuer.introspections) - before
    assert asked <= 30, asked
    refused = [reply for reply in replies if reply.status_code == 401]
    assert len(refused) <= asked and all(_unavailable(reply) for reply in replies if reply.status_code != 401)
    # A token already checked is served from the cache, whatever the burst spent.
    assert (await _post(served.url, "known-good")).status_code == 200


async def test_a_failing_introspection_endpoint_gets_a_503_not_a_refusal(served: Any, issuer: Any) -> None:
    issuer.opaque["good-later"] = {"active": True, "sub": "bob", "aud": served.url}
    issuer.introspection_status = 500
    assert _unavailable(await _post(served.url, "good-later"))
    issuer.introspection_status = 200
    assert (await _post(served.url, "good-later")).status_code == 200  # a failure is never kept


def test_under_uvicorn_factory_the_audience_is_the_port_bound(tmp_path: Path, issuer: Any) -> None:
    """``uvicorn --factory lorenz.host:create_app --port 0``: the app is built before the port is
    picked, so the audience is the address the connection reached, on loopback only."""
    workers = _load("test_host_workers")
    directory = workers.whoami_workspace(tmp_path)
    auth = f"server:\n  auth:\n    issuer: {issuer.base_url}\n"
    text = (directory / "WORKFLOW.md").read_text().replace("---\nprompt", f"{auth}---\nprompt")
    (directory / "WORKFLOW.md").write_text(text)
    env = workers.child_env(LORENZ_PLUGIN_MODULES=str(directory / "worker_pack.py"))
    with workers.uvicorn_factory(directory, env=env) as server:
        url = server.base_url + "/mcp"

        async def replies() -> list[int]:
            ours, foreign = issuer.token(aud=url), issuer.token(aud="http://127.0.0.1:8000/mcp")
            port = url.rsplit(":", 1)[1].removesuffix("/mcp")
            return [
                (await _post(url, ours)).status_code,
                (
                    await _post(url, issuer.token(aud=f"http://localhost:{port}/mcp"), Host=f"localhost:{port}")
                ).status_code,
                (await _post(url, foreign, Host="127.0.0.1:8000")).status_code,
            ]

        assert anyio.run(replies) == [200, 401, 421]
