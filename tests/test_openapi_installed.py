"""A pack generated from an OpenAPI document (nested objects, a ``$ref`` cycle, four security schemes
used alone, together and not at all), installed with ``lorenz install`` into a venv of its own,
mounted with ``lorenz mount`` and served by ``lorenz serve``: over the official MCP client its tools
answer as a loopback fake of the API answers from the document's examples, documented error
statuses are failures with clear messages, and no credential is ever echoed.

The venv sees this environment's packages (the core, pip, hatchling) through a ``.pth``, as in
tests/test_cli_install.py, so nothing is downloaded."""

from __future__ import annotations

import base64
import http.server
import json
import os
import re
import subprocess
import sys
import sysconfig
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import mcp
import pytest

from lorenz.authoring.openapi.load import load_document
from lorenz.testing import ServedWorkflow

pytestmark = pytest.mark.slow

SHOP = Path(__file__).parent / "fixtures" / "openapi" / "shop.yaml"
SECRETS = {
    "SHOP_BEARER_AUTH": "bearer-s3cret-value",
    "SHOP_BASIC_AUTH": "ada:basic-s3cret-value",
    "SHOP_HEADER_KEY": "header-s3cret-value",
    "SHOP_QUERY_KEY": "query-s3cret-value",
}
#: A path parameter of one of these values makes the fake answer that documented status.
FAILING = ("404", "429", "503")


class FakeShop(http.server.ThreadingHTTPServer):
    """The Shop API as its document says: each operation's first 2xx with its example, a 401 for a
    missing or wrong credential, a documented error status when asked for it."""

    def __init__(self, document: dict[str, Any]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.document = document
        self.requests: list[dict[str, Any]] = []

    def operation(self, method: str, path: str) -> tuple[dict[str, Any], dict[str, str]] | None:
        for template, item in self.document["paths"].items():
            pattern = "^/v2" + re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(template)) + "$"
            found = re.match(pattern, path)
            if found and method.lower() in item:
                return item[method.lower()], found.groupdict()
        return None

    def allowed(self, op: dict[str, Any], headers: Any, query: dict[str, list[str]]) -> bool:
        schemes = self.document["components"]["securitySchemes"]
        sent = {
            "bearerAuth": headers.get("Authorization") == f"Bearer {SECRETS['SHOP_BEARER_AUTH']}",
            "basicAuth": headers.get("Authorization")
            == "Basic " + base64.b64encode(SECRETS["SHOP_BASIC_AUTH"].encode()).decode(),
            "headerKey": headers.get(schemes["headerKey"]["name"]) == SECRETS["SHOP_HEADER_KEY"],
            "queryKey": query.get(schemes["queryKey"]["name"]) == [SECRETS["SHOP_QUERY_KEY"]],
        }
        alternatives = op.get("security", self.document["security"])
        return not alternatives or any(all(sent[name] for name in alt) for alt in alternatives)


def _example(response: dict[str, Any]) -> Any:
    media = (response.get("content") or {}).get("application/json") or {}
    if "example" in media:
        return media["example"]
    return next(iter(media.get("examples", {}).values()), {}).get("value")


class _Handler(http.server.BaseHTTPRequestHandler):
    server: FakeShop

    def _answer(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.server.requests.append(
            {"method": self.command, "path": parts.path, "query": query, "headers": dict(self.headers), "body": body}
        )
        found = self.server.operation(self.command, parts.path)
        if found is None:
            return self._send(404, {"message": "no such path"})
        op, params = found
        if not self.server.allowed(op, self.headers, query):
            return self._send(401, {"message": "bad credential"})
        failing = next((value for value in params.values() if value in FAILING), None)
        if failing is not None and failing in op["responses"]:
            headers = {"Retry-After": "5"} if failing == "429" else {}
            return self._send(int(failing), _example(op["responses"][failing]), headers)
        if isinstance(body, dict) and (body.get("customer") or {}).get("name") == "422":
            # What some APIs do: echo the request, credential included, in the error.
            return self._send(422, {**_example(op["responses"]["422"]), "yourKey": self.headers["X-Shop-Key"]})
        status = min(s for s in op["responses"] if s.startswith("2"))
        return self._send(int(status), _example(op["responses"][status]))

    do_GET = do_POST = do_DELETE = _answer

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for key, value in {
            "Content-Type": "application/json",
            "Content-Length": str(len(data)),
            **(headers or {}),
        }.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def shop() -> Iterator[FakeShop]:
    server = FakeShop(load_document(str(SHOP)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()


def _venv(root: Path) -> Path:
    """A fresh venv over this environment's packages; returns its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")], check=True)
    python = root / "venv" / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    here = sysconfig.get_paths()["purelib"]
    Path(purelib, "_lorenz_test_env.pth").write_text(f"import site; site.addsitedir({here!r})\n", encoding="utf-8")
    return python


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LORENZ_", "PIP_", "VIRTUAL_ENV"))}
    env.pop("PYTHONPATH", None)
    # Offline and fast: the core and the build backend are there already, nothing to fetch.
    return {**env, "PIP_NO_BUILD_ISOLATION": "0", "PIP_NO_DEPS": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1", **SECRETS}


def _lorenz(python: Path, *args: str, cwd: Path) -> str:
    done = subprocess.run(
        [str(python), "-m", "lorenz", *args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, f"lorenz {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def _error(result: Any) -> dict[str, Any]:
    assert result.is_error is True, result
    error: dict[str, Any] = result.structured_content["error"]
    return error


def test_generated_pack_installed_mounted_and_served(shop: FakeShop, tmp_path: Path) -> None:
    port = shop.server_address[1]
    spec = tmp_path / "shop.yaml"
    spec.write_text(
        SHOP.read_text(encoding="utf-8").replace("https://shop.example.test/v2", f"http://127.0.0.1:{port}/v2"),
        encoding="utf-8",
    )
    python = _venv(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    (work / "WORKFLOW.md").write_text("---\ntracker: {kind: local}\n---\nWork the board.\n", encoding="utf-8")
    _lorenz(python, "new-pack", "shop", "--from-openapi", str(spec), "--dir", str(tmp_path / "lorenz-shop"), cwd=work)
    installed = _lorenz(python, "install", "-y", str(tmp_path / "lorenz-shop"), cwd=work)
    assert "installed lorenz-shop 0.1.0: pack shop" in installed.splitlines()
    options = [f"--option={name.removeprefix('SHOP_').lower()}=${name}" for name in SECRETS]
    _lorenz(python, "mount", "shop", *options, cwd=work)
    workflow = (work / "WORKFLOW.md").read_text(encoding="utf-8")
    assert "$SHOP_BEARER_AUTH" in workflow and not any(secret in workflow for secret in SECRETS.values())

    server = ServedWorkflow(work, _env(), [str(python), "-m", "lorenz", "serve", "--port", "0", "--no-reload"])
    try:
        anyio.run(_over_mcp, server.url, shop)
    finally:
        server.stop()
    logged = server.stderr()
    assert not [secret for secret in SECRETS.values() if secret in logged], logged


async def _over_mcp(url: str, shop: FakeShop) -> None:
    async with mcp.Client(url) as client:
        names = sorted(tool.name for tool in (await client.list_tools()).tools if tool.name.startswith("shop_"))
        assert names == [
            "shop_cancel_order",
            "shop_get_category",
            "shop_get_order",
            "shop_get_status",
            "shop_place_order",
        ]

        status = await client.call_tool("shop_get_status", {})
        assert status.structured_content == {"open": True}
        assert "authorization" not in {k.lower() for k in shop.requests[-1]["headers"]}  # security: []

        # The document's example, less the key it does not declare (customer.loyalty).
        order = await client.call_tool("shop_get_order", {"orderId": 42})
        assert order.is_error is False, order
        assert order.structured_content == {
            "id": 42,
            "status": "open",
            "customer": {"name": "Ada", "address": {"street": "1 Main St", "city": "Oslo", "postalCode": "01234"}},
            "lines": [{"lineId": 1, "sku": "BOOK-1", "quantity": 2}],  # lineId is readOnly: answers only
            "total": 31.5,
        }
        assert shop.requests[-1]["headers"]["Authorization"] == f"Bearer {SECRETS['SHOP_BEARER_AUTH']}"

        new = {
            "customer": {"name": "Bob", "address": {"street": "2 Side St", "city": "Bergen"}},
            "lines": [{"sku": "PEN-7", "quantity": 1}],
        }
        placed = await client.call_tool("shop_place_order", new)
        assert placed.structured_content == {
            "id": 43,
            "status": "open",
            "customer": {"name": "Bob", "address": None},
            "lines": [{"lineId": 2, "sku": "PEN-7", "quantity": 1}],
            "total": None,
        }
        sent = shop.requests[-1]
        assert sent["body"] == new  # nested classes back to the API's JSON, unset fields left out
        assert sent["headers"]["X-Shop-Key"] == SECRETS["SHOP_HEADER_KEY"]
        refused = await client.call_tool("shop_place_order", {**new, "lines": []})
        assert "lines" in _error(refused)["message"] and shop.requests[-1] is sent  # checked before any request

        category = await client.call_tool("shop_get_category", {"categoryId": 3})
        assert category.structured_content == {
            "id": 3,
            "name": "Novels",
            "parent": {"id": 1, "name": "Books", "parent": None, "children": None},
            "children": [{"id": 7, "name": "Crime", "parent": None, "children": [{"id": 9, "name": "Nordic"}]}],
        }
        assert shop.requests[-1]["query"] == {"key": [SECRETS["SHOP_QUERY_KEY"]]}

        cancelled = await client.call_tool("shop_cancel_order", {"orderId": 42})
        assert cancelled.structured_content == {"status": 204}
        both = shop.requests[-1]
        assert both["headers"]["X-Shop-Key"] == SECRETS["SHOP_HEADER_KEY"]
        assert both["query"] == {"key": [SECRETS["SHOP_QUERY_KEY"]]}

        missing = _error(await client.call_tool("shop_get_order", {"orderId": 404}))
        assert missing["reason"] == "not_found"
        assert "answered 404" in missing["message"]
        assert missing["recovery"] == "Check the identifiers in the arguments, or list or search to find the right one."
        limited = _error(await client.call_tool("shop_get_order", {"orderId": 429}))
        assert (limited["reason"], limited["retryAfter"], limited["retryable"]) == ("rate_limited", 5, True)
        down = _error(await client.call_tool("shop_get_order", {"orderId": 503}))
        assert (down["reason"], down["retryable"]) == ("service_unavailable", True)

        rejected = _error(await client.call_tool("shop_place_order", {**new, "customer": {"name": "422"}}))
        assert rejected["reason"] == "validation_error"
        assert rejected["message"].startswith("The API answered 422: ")
        assert "out of stock" in rejected["message"]
        assert not [secret for secret in SECRETS.values() if secret in json.dumps(rejected)], rejected
