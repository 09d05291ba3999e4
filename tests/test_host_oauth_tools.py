"""``server.auth`` beyond the token check: a typed tool's own scopes (``tool(auth=[...])``) beside
``server.auth.scopes``, the landing page and server card for an OAuth caller, and the caller
reaching an isolated pack, against the loopback issuer (``tests/oauth_issuer.py``) and through the
official SDK client."""

from __future__ import annotations

import importlib.util
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import httpx
import httpx2
import mcp
import pytest
from attrs import frozen
from mcp.client.streamable_http import streamable_http_client

from lorenz import ToolProvider, hookimpl
from lorenz.authoring import CallContext, Pack, tool
from lorenz.host import serve_in_thread
from lorenz.testing import FakeTracker, ServedWorkflow, loopback_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HERE = Path(__file__).parent
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


oauth_issuer = _load("oauth_issuer")


@frozen
class NoArgs:
    pass


@tool(name="acme_read_item", description="Read an item.", input=NoArgs, annotations={"readOnlyHint": True})
async def read_item(ctx: CallContext, args: NoArgs) -> dict[str, Any]:
    return {"read": True}


@tool(name="acme_delete_item", description="Delete an item.", input=NoArgs, auth=["items:delete"])
async def delete_item(ctx: CallContext, args: NoArgs) -> dict[str, Any]:
    return {"deleted": True}


@tool(name="acme_purge_items", description="Purge every item.", input=NoArgs, auth=["items:delete", "items:purge"])
async def purge_items(ctx: CallContext, args: NoArgs) -> dict[str, Any]:
    return {"purged": True}


class Plugin:
    __name__ = "acme-plugin"

    @hookimpl
    def lorenz_register_tool_packs(self, register: Callable[[ToolProvider], None]) -> None:
        register(Pack(name="acme", tools=[read_item, delete_item, purge_items]))

    @hookimpl
    def lorenz_register_trackers(self, register: Callable[[Any], None]) -> None:
        register(FakeTracker(packs=["acme"]))


@pytest.fixture(scope="module")
def issuer() -> Iterator[Any]:
    authority = oauth_issuer.Issuer()
    with loopback_server(authority.app()) as served:
        authority.base_url = served.base_url
        yield authority


def _serve(directory: Path, issuer: Any, scopes: str, extra: str = "") -> Any:
    auth = f"  auth:\n    issuer: {issuer.base_url}\n{scopes}"
    front = f"tracker:\n  kind: lorenz-testing\nserver:\n{auth}{extra}"
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", "")}
    return serve_in_thread(cwd=directory, env=env, plugins=[Plugin()], reload=False)


MAPPED = '    scopes:\n      "tools:read": ["acme_read_*"]\n      "tools:write": ["*"]\n'


async def _post(url: str, token: str | None, method: str, params: dict[str, Any]) -> httpx.Response:
    headers = dict(HEADERS)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient() as http:
        return await http.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers=headers
        )


async def _listed(url: str, token: str) -> list[str]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    async with http, mcp.Client(streamable_http_client(url, http_client=http)) as client:
        return sorted(tool.name for tool in (await client.list_tools()).tools)


async def _call(url: str, token: str, name: str) -> httpx.Response:
    return await _post(url, token, "tools/call", {"name": name, "arguments": {}})


async def test_a_tools_own_scopes_and_the_scope_map_must_both_allow_it(tmp_path: Path, issuer: Any) -> None:
    with _serve(tmp_path, issuer, MAPPED) as running:
        url = running.url
        write = issuer.token(aud=url, scope="tools:write")
        deleter = issuer.token(aud=url, scope="tools:write items:delete")
        purger = issuer.token(aud=url, scope="tools:write items:delete items:purge")
        assert await _listed(url, write) == ["acme_read_item"]
        assert await _listed(url, deleter) == ["acme_delete_item", "acme_read_item"]
        assert await _listed(url, purger) == ["acme_delete_item", "acme_purge_items", "acme_read_item"]

        refused = await _call(url, write, "acme_delete_item")
        assert refused.status_code == 403
        challenge = refused.headers["www-authenticate"]
        assert 'error="insufficient_scope"' in challenge and 'scope="tools:write items:delete"' in challenge
        assert refused.json() == {
            "error": "insufficient_scope",
            "error_description": "Calling acme_delete_item requires the scope items:delete",
        }
        both = await _call(url, write, "acme_purge_items")
        assert (
            both.status_code == 403
            and 'scope="tools:write items:delete items:purge"' in both.headers["www-authenticate"]
        )
        assert (
            both.json()["error_description"] == "Calling acme_purge_items requires the scopes items:delete, items:purge"
        )

        allowed = await _call(url, deleter, "acme_delete_item")
        assert allowed.status_code == 200 and allowed.json()["result"]["structuredContent"] == {"deleted": True}

        # The tool's own scope alone is not enough: server.auth.scopes must grant the tool too.
        own_only = issuer.token(aud=url, scope="items:delete")
        assert await _listed(url, own_only) == []
        refused = await _call(url, own_only, "acme_delete_item")
        assert refused.status_code == 403 and "requires the scope tools:write" in refused.text
        assert 'scope="items:delete tools:write"' in refused.headers["www-authenticate"]

        async with httpx.AsyncClient() as http:
            metadata = (await http.get(running.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp"))).json()
        assert metadata["scopes_supported"] == ["tools:read", "tools:write", "items:delete", "items:purge"]


async def test_without_a_scope_map_a_tools_own_scopes_still_apply(tmp_path: Path, issuer: Any) -> None:
    with _serve(tmp_path, issuer, "") as running:
        url = running.url
        plain = issuer.token(aud=url)
        assert await _listed(url, plain) == ["acme_read_item"]
        refused = await _call(url, plain, "acme_delete_item")
        assert refused.status_code == 403 and 'scope="items:delete"' in refused.headers["www-authenticate"]
        deleter = issuer.token(aud=url, scope="items:delete")
        assert (await _call(url, deleter, "acme_delete_item")).json()["result"]["structuredContent"] == {
            "deleted": True
        }


async def test_static_tokens_are_not_asked_for_a_tools_own_scopes(tmp_path: Path, issuer: Any) -> None:
    static = '  token: full-token-value-123\n  tokens:\n    - {token: ci-token-value-1, tools: ["acme_*"], name: ci}\n'
    with _serve(tmp_path, issuer, MAPPED, static) as running:
        for token in ("full-token-value-123", "ci-token-value-1"):
            assert await _listed(running.url, token) == ["acme_delete_item", "acme_purge_items", "acme_read_item"]
            reply = await _call(running.url, token, "acme_purge_items")
            assert reply.status_code == 200 and reply.json()["result"]["structuredContent"] == {"purged": True}


async def test_the_landing_page_and_server_card_know_the_oauth_caller(tmp_path: Path, issuer: Any) -> None:
    with _serve(tmp_path, issuer, MAPPED) as running:
        base = running.url.removesuffix("/mcp")
        token = issuer.token(aud=running.url, scope="tools:read", client_id="inspector")
        other_audience = issuer.token(aud="https://other.example/mcp", scope="tools:write")
        async with httpx.AsyncClient(base_url=base) as http:
            page = (await http.get("/", headers={"Authorization": f"Bearer {token}"})).text
            anonymous = (await http.get("/")).text
            refused = (await http.get("/", headers={"Authorization": f"Bearer {other_audience}"})).text
            card = (await http.get("/.well-known/mcp.json", headers={"Authorization": f"Bearer {token}"})).json()
            bare_card = (await http.get("/.well-known/mcp.json")).json()
    assert '<body data-grant="yes">' in page
    assert "Signed in as <b>alice@example.com</b> through the client <code>inspector</code>" in page
    assert "acme_read_item" in page and "acme_delete_item" not in page
    assert token not in page
    for html in (anonymous, refused):
        assert "data-grant" not in html and "Signed in" not in html and "acme_read_item" not in html
    assert card["packs"] == ["acme"] and [tool["name"] for tool in card["tools"]] == ["acme_read_item"]
    assert "tools" not in bare_card


def test_a_tools_auth_scopes_must_be_scope_tokens() -> None:
    for bad in ("items delete", 'items"x', "", "items\\x"):
        with pytest.raises(ValueError, match="auth scope"):
            tool(name="acme_x", description="X.", input=NoArgs, auth=[bad])(delete_item.handler)
    assert delete_item.spec().auth == ("items:delete",)
    assert "auth" not in delete_item.spec().to_wire()


def test_the_caller_and_a_tools_own_scopes_cross_an_isolated_packs_pipe(
    tmp_path: Path, issuer: Any, isolation_packs: ModuleType
) -> None:
    (tmp_path / "site").mkdir()
    site = isolation_packs.write_site(tmp_path / "site")
    work = tmp_path / "work"
    work.mkdir()
    isolation_packs.workflow(work, tools="  acme: {}\n", server=f"  auth:\n    issuer: {issuer.base_url}\n")
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-local,iso-acme"
    env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    server = ServedWorkflow(work, env)
    try:
        url = server.url
        who = issuer.token(aud=url, scope="acme:who", client_id="cli-7")
        plain = issuer.token(aud=url, scope="other")

        async def scenario() -> tuple[Any, list[str], list[str], httpx.Response]:
            http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {who}"})
            async with http, mcp.Client(streamable_http_client(url, http_client=http)) as client:
                result = await client.call_tool("acme_whoami", {})
            return result, await _listed(url, who), await _listed(url, plain), await _call(url, plain, "acme_whoami")

        result, seen, unseen, refused = anyio.run(scenario)
    finally:
        server.stop()
    assert result.is_error is False
    assert result.structured_content == {
        "subject": "alice@example.com",
        "client_id": "cli-7",
        "scopes": ["acme:who"],
        "issuer": issuer.base_url,
    }
    assert "acme_whoami" in seen and "acme_whoami" not in unseen and "acme_pid" in unseen
    assert refused.status_code == 403 and 'scope="other acme:who"' in refused.headers["www-authenticate"]


def _check(directory: Path, monkeypatch: pytest.MonkeyPatch, auth: str, *args: str) -> int:
    from lorenz.cli import main

    front = f"tracker:\n  kind: local\n  path: ./board\nserver:\n  auth:\n{auth}"
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\nWork the board.\n", encoding="utf-8")
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "lorenz-local")
    monkeypatch.delenv("LORENZ_WORKFLOW", raising=False)
    monkeypatch.chdir(directory)
    return main(["check", *args])


def test_check_online_fetches_the_issuers_metadata_and_keys(
    tmp_path: Path, issuer: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fetches = issuer.jwks_fetches
    assert _check(tmp_path, monkeypatch, f"    issuer: {issuer.base_url}\n") == 0
    assert issuer.jwks_fetches == fetches  # offline by default
    capsys.readouterr()
    assert _check(tmp_path, monkeypatch, f"    issuer: {issuer.base_url}\n", "--online") == 0
    out = capsys.readouterr().out
    assert issuer.jwks_fetches == fetches + 1
    base = issuer.base_url
    assert (
        f"ok: server.auth.issuer {base}: metadata at {base}/.well-known/oauth-authorization-server,"
        f" signing keys at {base}/jwks: rsa-1 (RS256), ec-1 (ES256)" in out
    )
    assert _check(tmp_path, monkeypatch, f"    issuer: {issuer.base_url}\n", "--online", "--json") == 0
    assert json.loads(capsys.readouterr().out)["oauth"] == {
        "metadata": f"{issuer.base_url}/.well-known/oauth-authorization-server",
        "jwksUri": f"{issuer.base_url}/jwks",
        "keys": [{"kid": "rsa-1", "alg": "RS256"}, {"kid": "ec-1", "alg": "ES256"}],
    }


@pytest.mark.parametrize(
    ("auth", "message"),
    [
        (
            "    issuer: {base}/tenant\n",
            "--online: server.auth.issuer: no authorization server metadata at "
            "{base}/.well-known/oauth-authorization-server/tenant (HTTP 404) nor "
            "{base}/tenant/.well-known/openid-configuration (HTTP 404)",
        ),
        (
            "    issuer: {base}\n    jwks_uri: {base}/missing-keys\n",
            "--online: server.auth.jwks_uri: the signing keys could not be fetched from {base}/missing-keys (HTTP 404)",
        ),
        (
            "    issuer: {base}\n    jwks_uri: http://127.0.0.1:9/keys\n",
            "--online: server.auth.jwks_uri: the signing keys could not be fetched from http://127.0.0.1:9/keys "
            "(ConnectError)",
        ),
    ],
    ids=["no-metadata", "keys-404", "unreachable"],
)
def test_check_online_names_the_key_whose_fetch_failed(
    tmp_path: Path,
    issuer: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    auth: str,
    message: str,
) -> None:
    assert _check(tmp_path, monkeypatch, auth.format(base=issuer.base_url)) == 0  # offline: nothing fetched
    capsys.readouterr()
    assert _check(tmp_path, monkeypatch, auth.format(base=issuer.base_url), "--online") == 1
    assert message.format(base=issuer.base_url) in capsys.readouterr().err


async def test_introspection_answers_are_cached_while_active(tmp_path: Path, issuer: Any) -> None:
    introspection = (
        f"    introspection: {{endpoint: {issuer.base_url}/introspect, client_id: lorenz, client_secret: $I}}\n"
    )
    (tmp_path / "WORKFLOW.md").write_text(
        f"---\ntracker:\n  kind: lorenz-testing\nserver:\n  auth:\n    issuer: {issuer.base_url}\n{introspection}---\n"
    )
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", ""), "I": "intro-secret"}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[Plugin()], reload=False) as running:
        now = int(time.time())
        issuer.opaque["cached-good"] = {"active": True, "sub": "bob", "aud": running.url, "exp": now + 600}
        issuer.opaque["cached-expired"] = {"active": True, "sub": "bob", "aud": running.url, "exp": now - 5}
        issuer.opaque["cached-inactive"] = {"active": False}
        for _ in range(3):
            assert (await _post(running.url, "cached-good", "tools/list", {})).status_code == 200
            # Past its exp (within the clock skew allowed): accepted, but never kept.
            assert (await _post(running.url, "cached-expired", "tools/list", {})).status_code == 200
            assert (await _post(running.url, "cached-inactive", "tools/list", {})).status_code == 401
        asked = issuer.introspections
        # An inactive answer is kept too (briefly): the issuer is asked about it once.
        assert (asked.count("cached-good"), asked.count("cached-expired"), asked.count("cached-inactive")) == (1, 3, 1)
        # The issuer revokes it: the cached answer still holds until the TTL, then it is asked again.
        issuer.opaque["cached-good"] = {"active": False}
        assert (await _post(running.url, "cached-good", "tools/list", {})).status_code == 200


def test_the_introspection_cache_keeps_an_answer_until_exp_or_the_ttl() -> None:
    from mcp.server.auth.provider import AccessToken

    from lorenz.host.auth.cache import IntrospectionCache

    now = [1000.0]
    cache = IntrospectionCache(ttl=60, size=2, clock=lambda: now[0])

    def access(expires_at: int | None) -> AccessToken:
        return AccessToken(token="t", client_id="c", scopes=[], expires_at=expires_at)

    cache.put("soon", access(1010))
    cache.put("late", access(5000))
    assert cache.get("soon") is not None and cache.get("late") is not None
    now[0] = 1010.0
    assert cache.get("soon") is None  # its exp came first
    assert cache.get("late") is not None
    now[0] = 1060.0
    assert cache.get("late") is None  # the TTL came first
    cache.put("gone", access(1000))
    assert cache.get("gone") is None and len(cache) == 0  # already expired: not kept
    for token in ("a", "b", "c"):
        cache.put(token, access(None))
    assert len(cache) == 2 and cache.get("a") is None and cache.get("c") is not None  # the oldest dropped


async def test_a_challenge_names_only_scope_tokens(tmp_path: Path, issuer: Any) -> None:
    with _serve(tmp_path, issuer, MAPPED) as running:
        odd = issuer.token(aud=running.url, scope='tools:read x"y')
        refused = await _call(running.url, odd, "acme_delete_item")
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'scope="tools:read tools:write items:delete"' in challenge and 'x"y' not in challenge
