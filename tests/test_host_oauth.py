"""``server.auth``: the host as an OAuth 2.1 resource server, against an authorization server on
loopback issuing real RS256/ES256 tokens (``tests/oauth_issuer.py``), called by the official SDK
client and by plain HTTP: metadata discovery, refusals with their challenge, scopes mapped to
tools, the caller reaching the pack and the call log, key rotation, and ``--workers 2``."""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib.util
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import httpx2
import jwt
import mcp
import pytest
from attrs import field, frozen
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

from lorenz import ToolProvider, hookimpl
from lorenz.authoring import CallContext, Pack, tool
from lorenz.host import serve_in_thread
from lorenz.settings.errors import ConfigError
from lorenz.settings.server import parse_server
from lorenz.testing import FakeTracker, loopback_server

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

HERE = Path(__file__).parent


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


oauth_issuer = _load("oauth_issuer")
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}


@frozen(kw_only=True)
class ItemArgs:
    item: str = "x"


@frozen(kw_only=True)
class Who:
    subject: str | None = None
    clientId: str | None = None
    scopes: list[str] = field(factory=list)


@tool(name="acme_read_item", description="Read an item.", input=ItemArgs, annotations={"readOnlyHint": True})
async def read_item(ctx: CallContext, args: ItemArgs) -> dict[str, Any]:
    return {"item": args.item}


@tool(name="acme_write_item", description="Write an item.", input=ItemArgs)
async def write_item(ctx: CallContext, args: ItemArgs) -> dict[str, Any]:
    return {"written": args.item}


@tool(name="acme_whoami", description="Who is calling.", input=ItemArgs, output=Who, annotations={"readOnlyHint": True})
async def whoami(ctx: CallContext, args: ItemArgs) -> Who:
    caller = ctx.caller
    if caller is None:
        return Who()
    return Who(subject=caller.subject, clientId=caller.client_id, scopes=list(caller.scopes))


class Plugin:
    __name__ = "acme-plugin"

    @hookimpl
    def lorenz_register_tool_packs(self, register: Callable[[ToolProvider], None]) -> None:
        register(Pack(name="acme", tools=[read_item, write_item, whoami]))

    @hookimpl
    def lorenz_register_trackers(self, register: Callable[[Any], None]) -> None:
        register(FakeTracker(packs=["acme"]))


@pytest.fixture(scope="module")
def issuer() -> Iterator[Any]:
    authority = oauth_issuer.Issuer()
    with loopback_server(authority.app()) as served:
        authority.base_url = served.base_url
        yield authority


def _workflow(directory: Path, issuer: Any, extra: str = "") -> None:
    auth = (
        f"  auth:\n    issuer: {issuer.base_url}\n    scopes:\n"
        '      "tools:read": ["acme_read_*", "acme_whoami"]\n      "tools:write": ["*"]\n'
    )
    front = f"tracker:\n  kind: lorenz-testing\nserver:\n  call_log: calls.jsonl\n{auth}{extra}"
    (directory / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")


@pytest.fixture
def server(tmp_path: Path, issuer: Any) -> Iterator[Any]:
    _workflow(tmp_path, issuer)
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", "")}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[Plugin()], reload=False) as running:
        yield running


def _client(url: str, token: str) -> tuple[httpx2.AsyncClient, mcp.Client]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    return http, mcp.Client(streamable_http_client(url, http_client=http))


async def _post(url: str, token: str | None, method: str, params: dict[str, Any]) -> httpx.Response:
    headers = dict(HEADERS)
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    async with httpx.AsyncClient() as http:
        return await http.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers=headers
        )


def _read_lines(path: Path) -> list[dict[str, Any]]:
    """The call log's lines once there is one (its writer is a thread of its own)."""
    deadline = time.monotonic() + 5
    while not (path.exists() and path.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [json.loads(line) for line in path.read_text().splitlines()]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _hmac_with_public_key(issuer: Any, audience: str) -> str:
    """An HS256 token keyed with the issuer's published RSA key: the classic algorithm confusion."""
    header = _b64(json.dumps({"alg": "HS256", "kid": "rsa-1", "typ": "JWT"}).encode())
    now = int(time.time())
    claims = {"iss": issuer.base_url, "aud": audience, "sub": "mallory", "exp": now + 600}
    payload = _b64(json.dumps(claims).encode())
    secret = json.dumps(issuer.jwks()["keys"][0]).encode()
    signature = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{_b64(signature)}"


async def test_the_sdk_client_calls_a_tool_and_the_pack_sees_the_caller(server: Any, issuer: Any) -> None:
    token = issuer.token(aud=server.url, scope="tools:read tools:write")
    http, client = _client(server.url, token)
    async with http, client:
        result = await client.call_tool("acme_whoami", {})
    assert not result.is_error
    assert result.structured_content == {
        "subject": "alice@example.com",
        "clientId": "test-client",
        "scopes": ["tools:read", "tools:write"],
    }
    log = Path(server.live.snapshot().settings.base_dir) / "calls.jsonl"
    records = await anyio.to_thread.run_sync(_read_lines, log)
    assert records[-1]["tool"] == "acme_whoami"
    assert records[-1]["subject"] == "alice@example.com" and records[-1]["clientId"] == "test-client"
    assert token not in log.read_text()


async def test_an_es256_token_is_accepted(server: Any, issuer: Any) -> None:
    reply = await _post(server.url, issuer.token("ec-1", aud=server.url, scope="tools:read"), "tools/list", {})
    assert reply.status_code == 200, reply.text


async def test_protected_resource_metadata_names_the_issuer(server: Any, issuer: Any) -> None:
    base = server.url.removesuffix("/mcp")
    async with httpx.AsyncClient() as http:
        for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            reply = await http.get(base + path)
            assert reply.status_code == 200, path
            document = reply.json()
            assert document["resource"] == server.url
            assert [url.rstrip("/") for url in document["authorization_servers"]] == [issuer.base_url]
            assert document["scopes_supported"] == ["tools:read", "tools:write"]
            assert document["bearer_methods_supported"] == ["header"]


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda issuer, url: None, id="no-token"),
        pytest.param(lambda issuer, url: issuer.token(aud="https://other.example/mcp"), id="other-audience"),
        pytest.param(lambda issuer, url: issuer.token(aud=url, exp=int(time.time()) - 600), id="expired"),
        pytest.param(lambda issuer, url: issuer.token(aud=url, nbf=int(time.time()) + 600), id="not-yet-valid"),
        pytest.param(lambda issuer, url: issuer.token(aud=url, iss="https://evil.example"), id="other-issuer"),
        pytest.param(lambda issuer, url: issuer.token("stranger", aud=url), id="unknown-key"),
        pytest.param(
            lambda issuer, url: jwt.encode(
                {"iss": issuer.base_url, "aud": url, "sub": "x", "exp": int(time.time()) + 600}, None, algorithm="none"
            ),
            id="alg-none",
        ),
        pytest.param(_hmac_with_public_key, id="hmac-with-public-key"),
        pytest.param(lambda issuer, url: "opaque-garbage", id="opaque"),
    ],
)
async def test_refused_tokens_get_401_with_the_metadata_challenge(server: Any, issuer: Any, make: Any) -> None:
    if "stranger" not in issuer.keys:
        issuer.add_key("stranger", "RS256", publish=False)
    token = make(issuer, server.url)
    reply = await _post(server.url, token, "tools/list", {})
    assert reply.status_code == 401
    challenge = reply.headers["www-authenticate"]
    metadata = server.url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    assert challenge.startswith("Bearer ") and f'resource_metadata="{metadata}"' in challenge
    assert ('error="invalid_token"' in challenge) is (token is not None)
    assert "tools" not in reply.text


async def test_a_read_token_sees_and_calls_only_read_tools(server: Any, issuer: Any) -> None:
    token = issuer.token(aud=server.url, scope="tools:read")
    http, client = _client(server.url, token)
    async with http, client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools)
        read = await client.call_tool("acme_read_item", {"item": "a"})
    assert names == ["acme_read_item", "acme_whoami"]
    assert not read.is_error
    reply = await _post(server.url, token, "tools/call", {"name": "acme_write_item", "arguments": {}})
    assert reply.status_code == 403
    challenge = reply.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="tools:read tools:write"' in challenge
    assert reply.json()["error"] == "insufficient_scope" and "tools:write" in reply.json()["error_description"]
    quoted = await _post(server.url, token, "tools/call", {"name": 'acme_write_"é\\', "arguments": {}})
    assert quoted.status_code == 403 and 'acme_write_"é' not in quoted.headers["www-authenticate"]
    write = await _post(
        server.url,
        issuer.token(aud=server.url, scope="tools:write"),
        "tools/call",
        {"name": "acme_write_item", "arguments": {"item": "b"}},
    )
    assert write.status_code == 200 and not write.json()["result"].get("isError")


async def test_a_key_rotation_is_picked_up_once_per_interval(server: Any, issuer: Any) -> None:
    assert (await _post(server.url, issuer.token(aud=server.url), "tools/list", {})).status_code == 200
    fetches = issuer.jwks_fetches
    issuer.add_key(f"rotated-{fetches}", "RS256")
    rotated = issuer.token(f"rotated-{fetches}", aud=server.url)
    assert (await _post(server.url, rotated, "tools/list", {})).status_code == 200
    assert issuer.jwks_fetches == fetches + 1
    # Made-up key ids do not make the host fetch the keys again within the interval.
    issuer.add_key(f"unpublished-{fetches}", "RS256", publish=False)
    for _ in range(3):
        stranger = issuer.token(f"unpublished-{fetches}", aud=server.url)
        assert (await _post(server.url, stranger, "tools/list", {})).status_code == 401
    assert issuer.jwks_fetches == fetches + 1
    assert (await _post(server.url, rotated, "tools/list", {})).status_code == 200


async def test_oauth_client_provider_discovers_logs_in_and_calls_a_tool(server: Any, issuer: Any) -> None:
    """The SDK's OAuthClientProvider: 401 → protected resource metadata → the issuer's metadata →
    registration → authorization (approved at once) → token for this resource → the call."""
    redirected: list[str] = []

    class Memory:
        tokens: OAuthToken | None = None
        client: OAuthClientInformationFull | None = None

        async def get_tokens(self) -> OAuthToken | None:
            return self.tokens

        async def set_tokens(self, tokens: OAuthToken) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return self.client

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            self.client = client_info

    async def redirect(url: str) -> None:
        async with httpx.AsyncClient() as http:
            reply = await http.get(url)
        assert reply.status_code == 302
        redirected.append(reply.headers["location"])

    async def callback() -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(redirected[-1]).query)
        return AuthorizationCodeResult(code=query["code"][0], state=query.get("state", [None])[0])

    storage = Memory()
    provider = OAuthClientProvider(
        server.url,
        OAuthClientMetadata(
            redirect_uris=["http://127.0.0.1:1/callback"], client_name="lorenz-test", scope="tools:read tools:write"
        ),
        storage,
        redirect_handler=redirect,
        callback_handler=callback,
    )
    http = httpx2.AsyncClient(auth=provider)
    async with http, mcp.Client(streamable_http_client(server.url, http_client=http)) as client:
        result = await client.call_tool("acme_whoami", {})
    assert redirected, "the client never went to the authorization server"
    assert not result.is_error
    assert result.structured_content is not None and result.structured_content["subject"] == "alice@example.com"
    assert storage.tokens is not None
    claims = jwt.decode(storage.tokens.access_token, options={"verify_signature": False})
    assert claims["aud"] == server.url  # the RFC 8707 resource the client asked for


async def test_opaque_tokens_are_introspected(tmp_path: Path, issuer: Any) -> None:
    introspection = "    introspection: {endpoint: %s/introspect, client_id: lorenz, client_secret: $INTRO}\n"
    _workflow(tmp_path, issuer, introspection % issuer.base_url)
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", ""), "INTRO": "intro-secret"}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[Plugin()], reload=False) as running:
        now = int(time.time())
        good = {"active": True, "sub": "bob", "client_id": "cli", "scope": "tools:read", "aud": running.url}
        issuer.opaque["opaque-good"] = {**good, "exp": now + 600, "iss": issuer.base_url}
        issuer.opaque["opaque-elsewhere"] = {**good, "aud": "https://other.example/mcp"}
        issuer.opaque["opaque-inactive"] = {"active": False}
        http, client = _client(running.url, "opaque-good")
        async with http, client:
            result = await client.call_tool("acme_whoami", {})
        assert result.structured_content == {"subject": "bob", "clientId": "cli", "scopes": ["tools:read"]}
        for refused in ("opaque-elsewhere", "opaque-inactive", "opaque-unknown"):
            assert (await _post(running.url, refused, "tools/list", {})).status_code == 401, refused


@pytest.mark.parametrize(
    ("aud", "accepted"),
    [
        (None, False),  # no aud at all: maybe a token the issuer gave a client for another resource
        ([], False),
        ("", False),
        ([7, None], False),
        ({"url": "{url}"}, False),
        (["{url}", 7], False),  # not a list of audiences
        ("{url}", True),
        (["https://other.example/mcp", "{url}/"], True),  # a list naming this server (trailing slash too)
    ],
)
async def test_an_introspection_answer_must_name_this_audience(
    tmp_path: Path, issuer: Any, aud: Any, accepted: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """As a JWT without ``aud`` is refused, so is an introspection answer: only an ``aud`` (a
    string or a list) naming this server's audience lets an opaque token in."""
    introspection = "    introspection: {endpoint: %s/introspect, client_id: lorenz, client_secret: $INTRO}\n"
    _workflow(tmp_path, issuer, introspection % issuer.base_url)
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", ""), "INTRO": "intro-secret"}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[Plugin()], reload=False) as running:
        answer: dict[str, Any] = {"active": True, "sub": "bob", "scope": "tools:read"}
        if aud is not None:
            answer["aud"] = json.loads(json.dumps(aud).replace("{url}", running.url))
        issuer.opaque["opaque"] = answer
        reply = await _post(running.url, "opaque", "tools/list", {})
    assert reply.status_code == (200 if accepted else 401), reply.text
    said = [record.getMessage() for record in caplog.records if 'answered without "aud"' in record.getMessage()]
    assert len(said) == (0 if accepted else 1)  # each answer here names no audience, or this one


async def test_static_tokens_keep_working_beside_oauth(tmp_path: Path, issuer: Any) -> None:
    _workflow(tmp_path, issuer, '  tokens:\n    - {token: ci-token-value-1, tools: ["acme_read_*"], name: ci}\n')
    env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", "")}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[Plugin()], reload=False) as running:
        reply = await _post(running.url, "ci-token-value-1", "tools/list", {})
        assert reply.status_code == 200
        assert [tool["name"] for tool in reply.json()["result"]["tools"]] == ["acme_read_item"]
        assert (await _post(running.url, "ci-token-value-2", "tools/list", {})).status_code == 401


@pytest.mark.parametrize(
    ("auth", "message"),
    [
        ({"issuer": "http://login.example.com/"}, "server.auth.issuer must be an https URL"),
        ({"issuer": "https://login.example.com/", "audience": "nope"}, "server.auth.audience must be an http(s) URL"),
        ({"issuer": "https://login.example.com/", "scopes": {"tools:read": []}}, "server.auth.scopes.tools:read"),
        ({"issuer": "https://login.example.com/", "scopes": {"a b": ["*"]}}, "server.auth.scopes.a b must be"),
        (
            {"isuer": "https://login.example.com/"},
            'server.auth contains unsupported keys: isuer (did you mean "issuer"?)',
        ),
        (
            {
                "issuer": "https://x.example/",
                "introspection": {
                    "endpoint": "https://x.example/i",
                    "client_id": "c",
                    "client_secret": "$UNSET_SECRET",
                },
            },
            "server.auth.introspection.client_secret: $UNSET_SECRET is not set",
        ),
    ],
)
def test_the_auth_section_is_validated(auth: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_server({"auth": auth}, env={}, record_secret=lambda secret: None)
    assert message in str(caught.value)


def test_every_worker_accepts_the_token(tmp_path: Path, issuer: Any) -> None:
    """``lorenz serve --workers 2``: each worker fetches the keys itself and accepts the token."""
    workers = _load("test_host_workers")
    workers.whoami_workspace(tmp_path)
    auth = f"server:\n  auth:\n    issuer: {issuer.base_url}\n"
    text = (tmp_path / "WORKFLOW.md").read_text().replace("---\nprompt", f"{auth}---\nprompt")
    (tmp_path / "WORKFLOW.md").write_text(text)
    before = issuer.jwks_fetches
    with workers.lorenz_serve(tmp_path, "-p", "worker_pack.py", "serve", "--port", "0", "--workers", "2") as server:
        url = server.base_url + "/mcp"
        token = issuer.token(aud=url)
        foreign = issuer.token(aud="http://127.0.0.1:9999/mcp")
        port = server.base_url.rsplit(":", 1)[1]
        renamed_token = issuer.token(aud=f"http://localhost:{port}/mcp")

        async def calls() -> set[int]:
            pids: set[int] = set()
            headers = {**HEADERS, "Authorization": f"Bearer {token}", "Connection": "close"}
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "whoami_pid", "arguments": {}},
            }
            async with httpx.AsyncClient(headers=headers, timeout=30) as http:
                for _ in range(8):
                    refused = await http.post(url, json=body, headers={"Authorization": "Bearer nope.nope.nope"})
                    assert refused.status_code == 401
                    # Each worker's audience is the bound port, not what the Host header names;
                    # and a Host naming another port is another server's.
                    spoofed = {"Authorization": f"Bearer {foreign}", "Host": "127.0.0.1:9999"}
                    assert (await http.post(url, json=body, headers=spoofed)).status_code == 421
                    renamed = {"Authorization": f"Bearer {renamed_token}", "Host": f"localhost:{port}"}
                    assert (await http.post(url, json=body, headers=renamed)).status_code == 401
                for _ in range(40):
                    reply = await http.post(url, json=body)
                    assert reply.status_code == 200, reply.text
                    pids.add(reply.json()["result"]["structuredContent"]["pid"])
            return pids

        pids = anyio.run(calls)
    assert len(pids) == 2
    assert issuer.jwks_fetches == before + 2  # one fetch per worker, kept for the next calls
