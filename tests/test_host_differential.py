"""The lean path and the SDK's transport answer a generated corpus of requests alike.

Each request of a seeded corpus (both protocol eras; plain and secured configurations; varied
headers, ids, methods, nesting, batches, notifications, broken bodies) is sent to two servers
that differ only in ``server.fast_path``. Status, the headers a client reads and the reply must
match for every one.
"""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from lorenz.host import RunningServer, serve_in_thread
from lorenz.host.mcp import stateless

ADMIN = "admin-token-0123456789"
SCOPED = "scoped-token-0123456789"
SECURED = f"""server:
  token: {ADMIN}
  tokens: [{{token: {SCOPED}, tools: [demo_add], name: ci}}]
  disabled_tools: [demo_list]
"""
MODERN = "2026-07-28"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "differential", "version": "1"},
}
#: Headers whose values a client acts on (not Date, not Content-Length).
COMPARED_HEADERS = ("content-type", "www-authenticate", "allow", "mcp-session-id", "access-control-allow-origin")

Request = tuple[bytes, list[tuple[str, str]]]


def _nested(rng: random.Random) -> Any:
    depth = rng.choice([0, 1, 5, 60, 196, 197, 198, 199, 230])
    value: Any = rng.choice([1, "x", [], {}])
    for _ in range(depth):
        value = {"k": value} if rng.random() < 0.7 else [value]
    return value


def _arguments(rng: random.Random) -> Any:
    return rng.choice(
        [
            {"a": 1, "b": 2},
            {"a": "one", "b": 2},
            {"a": 1},
            {"a": 1, "b": 2, "extra": _nested(rng)},
            {"a": 1, "b": 2, "s": "caf\u00e9 \u2603"},
            {},
            [],
            None,
            "text",
        ]
    )


def _params(rng: random.Random, method: str) -> Any:
    if method == "tools/call":
        params: Any = {"name": rng.choice(["demo_add", "demo_fail", "demo_boom", "demo_list", "nope", ""])}
        if rng.random() < 0.9:
            params["arguments"] = _arguments(rng)
        if rng.random() < 0.05:
            params = {"arguments": {}}
        return params
    if method == "initialize":
        return {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "d", "version": "1"}}
    if method == "resources/read":
        return {"uri": rng.choice(["skill://nope/SKILL.md", "file:///etc/passwd", ""])}
    if method == "notifications/cancelled":
        return {"requestId": 7, "reason": "test"}
    return rng.choice([None, {}, {"cursor": "x"}, {"_meta": {"progressToken": 3}}])


METHODS = [
    "tools/call",
    "tools/call",
    "tools/call",
    "tools/list",
    "initialize",
    "server/discover",
    "ping",
    "resources/list",
    "resources/read",
    "prompts/list",
    "acme/custom",
    "notifications/initialized",
    "notifications/cancelled",
]


def _message(rng: random.Random, modern: bool) -> tuple[Any, str | None, str | None]:
    """A JSON-RPC value, its method and the tool name it calls (for the routing headers)."""
    method = rng.choice(METHODS)
    message: dict[str, Any] = {"jsonrpc": rng.choice(["2.0"] * 19 + ["1.0"]), "method": method}
    if not method.startswith("notifications/") or rng.random() < 0.1:
        message["id"] = rng.choice([7, "abc", 0, -3] * 5 + [None, 1.5, True, {"x": 1}])
    params = _params(rng, method)
    if modern:
        params = {**(params if isinstance(params, dict) else {}), "_meta": MODERN_META}
        if rng.random() < 0.05:
            del params["_meta"]
    if params is not None:
        message["params"] = params
    roll = rng.random()
    if roll < 0.03:
        return [message, message], method, None
    if roll < 0.05:
        return {"jsonrpc": "2.0", "id": 7, "result": {}}, None, None
    name = params.get("name") if isinstance(params, dict) else None
    return message, method, name if isinstance(name, str) else None


def _body(rng: random.Random, value: Any) -> bytes:
    body = json.dumps(value).encode()
    roll = rng.random()
    if roll < 0.02:
        return body[: len(body) // 2]
    if roll < 0.03:
        return body + b" trailing"
    if roll < 0.04:
        return body.replace(b'"a"', b'"\\ud800"', 1)
    if roll < 0.05:
        return b"\xff\xfe" + body
    return body


def _headers(rng: random.Random, modern: bool, method: str | None, name: str | None, secured: bool) -> list[Any]:
    headers: list[tuple[str, str]] = []
    content_type = rng.choice(
        ["application/json"] * 12
        + ["Application/JSON", "application/json; charset=utf-8", "text/plain", None, "application/json, text/plain"]
    )
    if content_type is not None:
        headers.append(("Content-Type", content_type))
    accept = rng.choice(
        ["application/json, text/event-stream"] * 10
        + ["application/json", "*/*", "text/event-stream", None, "application/*", "Application/JSON"]
    )
    if accept is not None:
        headers.append(("Accept", accept))
    if modern:
        headers.append(("MCP-Protocol-Version", rng.choice([MODERN] * 12 + ["2099-01-01"])))
        if method is not None and rng.random() < 0.93:
            headers.append(("Mcp-Method", method if rng.random() < 0.95 else "tools/list"))
        if name is not None and rng.random() < 0.93:
            headers.append(("Mcp-Name", name if rng.random() < 0.95 else "other"))
        if rng.random() < 0.04:
            headers.append(("Mcp-Param-A", "1"))
        if rng.random() < 0.03:
            headers.append(("mcp-method", method or "ping"))
    else:
        version = rng.choice(["2025-11-25"] * 8 + ["2025-06-18", "2025-03-26", None, "1999-01-01"])
        if version is not None:
            headers.append(("MCP-Protocol-Version", version))
    if secured:
        token = rng.choice([ADMIN] * 5 + [SCOPED] * 3 + [None, "wrong"])
        if token is not None:
            headers.append(("Authorization", f"Bearer {token}"))
    if rng.random() < 0.04:
        headers.append(("Origin", rng.choice(["http://evil.example", "http://127.0.0.1"])))
    return headers


def corpus(seed: int, size: int, *, secured: bool) -> list[Request]:
    rng = random.Random(seed)
    requests: list[Request] = []
    for _ in range(size):
        modern = rng.random() < 0.5
        value, method, name = _message(rng, modern)
        requests.append((_body(rng, value), _headers(rng, modern, method, name, secured)))
    return requests


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory, host_pack: ModuleType) -> Iterator[dict[str, RunningServer]]:
    running: dict[str, RunningServer] = {}
    with contextlib.ExitStack() as stack:
        for config, server_keys in (("plain", ""), ("secured", SECURED)):
            for fast in (True, False):
                directory: Path = tmp_path_factory.mktemp(f"{config}-{fast}")
                section = server_keys or "server:\n"
                workflow = f"---\ntracker:\n  kind: demo\n{section}  fast_path: {str(fast).lower()}\n---\nBe brief.\n"
                (directory / "WORKFLOW.md").write_text(workflow)
                running[f"{config}-{fast}"] = stack.enter_context(
                    serve_in_thread(cwd=directory, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[host_pack])
                )
        yield running


def answer(client: httpx.Client, server: RunningServer, request: Request) -> tuple[Any, ...]:
    body, headers = request
    response = client.post(server.url, content=body, headers=headers)
    try:
        reply: Any = response.json()
    except ValueError:
        reply = response.text
    kept = tuple((name, response.headers.get(name)) for name in COMPARED_HEADERS)
    return response.status_code, kept, reply


@pytest.mark.slow
@pytest.mark.parametrize("config", ["plain", "secured"])
def test_the_fast_path_answers_a_generated_corpus_as_the_sdk(
    servers: dict[str, RunningServer], config: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    lean: list[bool] = []
    route = stateless.StatelessEndpoint._route

    def spy(self: stateless.StatelessEndpoint, *args: Any) -> Any:
        taken = route(self, *args)
        lean.append(taken is not None)
        return taken

    monkeypatch.setattr(stateless.StatelessEndpoint, "_route", spy)
    requests = corpus(2026 if config == "plain" else 1207, 300, secured=config == "secured")
    differences: list[str] = []
    statuses: set[int] = set()
    with httpx.Client(timeout=30) as client:
        for index, request in enumerate(requests):
            fast = answer(client, servers[f"{config}-True"], request)
            sdk = answer(client, servers[f"{config}-False"], request)
            statuses.add(sdk[0])
            if fast != sdk:
                differences.append(f"#{index} {request!r}\n  fast: {fast!r}\n  sdk:  {sdk!r}")
    assert not differences, f"{len(differences)} of {len(requests)} differ:\n" + "\n".join(differences[:5])
    # The corpus reaches the answers that matter (else agreement proves little).
    assert {200, 202, 400, 406, 415}.issubset(statuses), statuses
    assert sum(lean) >= len(requests) // 4, f"the lean path answered only {sum(lean)}"
    if config == "secured":
        assert 401 in statuses
