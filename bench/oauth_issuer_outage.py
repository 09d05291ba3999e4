"""What an issuer outage and a flood of unknown tokens cost (``server.auth``), in-process on loopback.

    .venv/bin/python bench/oauth_issuer_outage.py [--concurrent 8] [--slow 6] [--random 60]

The host is ``serve_in_thread`` with ``server.auth`` (and introspection) against the loopback
issuer of the tests (``tests/oauth_issuer.py``). Four scenarios, each on a fresh server: the JWKS
answering 500; the JWKS answering after ``--slow`` seconds; ``--random`` distinct random opaque
tokens at once; one unknown opaque token sent 20 times. Each reports the status codes the clients
got, the slowest answer, and the requests that reached the issuer.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import secrets
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from lorenz import hookimpl
from lorenz.host import serve_in_thread
from lorenz.testing import FakeTracker, loopback_server

ROOT = Path(__file__).resolve().parents[1]
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}


def _issuer_module() -> Any:
    spec = importlib.util.spec_from_file_location("oauth_issuer", ROOT / "tests" / "oauth_issuer.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Plugin:
    __name__ = "bench-plugin"

    @hookimpl
    def lorenz_register_trackers(self, register: Any) -> None:
        register(FakeTracker())


async def _send(url: str, tokens: list[str]) -> tuple[Counter[int], float]:
    async with httpx.AsyncClient(timeout=60) as http:

        async def one(token: str) -> tuple[int, float]:
            start = time.perf_counter()
            reply = await http.post(url, json=LIST, headers={**HEADERS, "Authorization": f"Bearer {token}"})
            return reply.status_code, time.perf_counter() - start

        answers = await asyncio.gather(*(one(token) for token in tokens))
    return Counter(status for status, _ in answers), max(seconds for _, seconds in answers)


def scenario(name: str, issuer: Any, prepare: Callable[[Any, str], list[str]]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        auth = (
            f"  auth:\n    issuer: {issuer.base_url}\n"
            f"    introspection: {{endpoint: {issuer.base_url}/introspect, client_id: lorenz, client_secret: $I}}\n"
        )
        (Path(directory) / "WORKFLOW.md").write_text(f"---\ntracker:\n  kind: lorenz-testing\nserver:\n{auth}---\n")
        env = {"LORENZ_LOAD_PLUGINS": "", "PATH": os.environ.get("PATH", ""), "I": "intro-secret"}
        with serve_in_thread(cwd=Path(directory), env=env, plugins=[Plugin()], reload=False) as running:
            before = (issuer.metadata_fetches, issuer.jwks_fetches, len(issuer.introspections))
            statuses, slowest = asyncio.run(_send(running.url, prepare(issuer, running.url)))
            after = (issuer.metadata_fetches, issuer.jwks_fetches, len(issuer.introspections))
    metadata, jwks, introspections = (b - a for a, b in zip(before, after, strict=True))
    print(
        f"{name}: statuses {dict(sorted(statuses.items()))}, slowest {slowest:.2f} s; at the issuer: "
        f"{metadata} metadata, {jwks} JWKS, {introspections} introspection requests"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrent", type=int, default=8)
    parser.add_argument("--slow", type=float, default=6.0)
    parser.add_argument("--random", type=int, default=60)
    args = parser.parse_args()
    oauth_issuer = _issuer_module()
    authority = oauth_issuer.Issuer()
    with loopback_server(authority.app()) as served:
        authority.base_url = served.base_url

        def jwts(issuer: Any, url: str) -> list[str]:
            return [issuer.token(aud=url, jti=str(n)) for n in range(args.concurrent)]

        authority.jwks_status = 500
        scenario(f"{args.concurrent} JWTs, JWKS answering 500", authority, jwts)
        authority.jwks_status = 200
        authority.jwks_gate = gate = threading.Event()
        timer = threading.Timer(args.slow, gate.set)
        timer.start()
        scenario(f"{args.concurrent} JWTs, JWKS answering after {args.slow:g} s", authority, jwts)
        timer.cancel()
        gate.set()
        authority.jwks_gate = None
        scenario(
            f"{args.random} random opaque tokens at once",
            authority,
            lambda issuer, url: [secrets.token_urlsafe(24) for _ in range(args.random)],
        )
        unknown = secrets.token_urlsafe(24)
        scenario("one unknown opaque token 20 times at once", authority, lambda issuer, url: [unknown] * 20)
    return 0


if __name__ == "__main__":
    sys.exit(main())
