"""The ``linear_graphql`` tool against the loopback fake: input rules, credentials, results and failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from linear_fake import FakeLinear, linear_settings

from lorenz import Settings, ToolContext, ToolResult, TrackerSettings, discover, execute_mounted_tool
from lorenz.testing import parse_config
from lorenz_linear import LinearToolPack

pytestmark = pytest.mark.anyio

QUERY_REQUIRED = "`linear_graphql` requires a non-empty `query` string."
MISSING_AUTH = "Lorenz is missing Linear auth. Set `linear.api_key` in `WORKFLOW.md` or export `LINEAR_API_KEY`."
VIEWER = "query LorenzTsViewer { viewer { id } }"
#: What the declared failures add to the error object (the message and other keys are unchanged).
UNAUTHORIZED = {
    "code": -32006,
    "reason": "unauthorized",
    "retryable": False,
    "recovery": "Set tools.linear.api_key (or a linear tracker's tracker.api_key) in WORKFLOW.md, or export "
    "LINEAR_API_KEY, to a valid Linear API key; then call again.",
}
REJECTED = {
    "reason": "request_rejected",
    "retryable": False,
    "recovery": "Read the body in the error, fix the query or variables, and call again.",
}
RATE_LIMITED = {
    "code": -32003,
    "reason": "rate_limited",
    "retryable": True,
    "recovery": "Wait retryAfter seconds (or a minute), then call linear_graphql again.",
}


class Sleeps(list[float]):
    async def __call__(self, delay: float) -> None:
        self.append(delay)


async def call(
    settings: Settings,
    http: httpx.AsyncClient,
    input: Any,
    *,
    name: str = "linear_graphql",
    sleeps: Sleeps | None = None,
) -> ToolResult:
    pack = LinearToolPack(sleep=sleeps if sleeps is not None else Sleeps())
    result: ToolResult = await pack.execute_tool(name, input, ToolContext(settings=settings, http=http))
    return result


def records(caplog: pytest.LogCaptureFixture, level: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "lorenz_linear" and r.levelname == level]


def test_spec_is_exact() -> None:
    """The pack is ``linear`` with one tool whose input schema matches the reference exactly."""
    pack = LinearToolPack()
    [spec] = pack.tool_specs(Settings())
    assert pack.name == "linear"
    wire = spec.to_wire()
    # Added by the kit: a title, annotations (a mutation may delete) and the outputSchema.
    assert wire.pop("title") == "Linear GraphQL"
    assert wire.pop("annotations") == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
    }
    assert wire.pop("outputSchema")["type"] == "object"
    assert wire == {
        "name": "linear_graphql",
        "description": "Run a Linear GraphQL operation using Lorenz's configured Linear credentials.",
        "inputSchema": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "query": {
                    "type": "string",
                    "description": "GraphQL query or mutation document to execute against Linear.",
                },
                "variables": {
                    "type": ["object", "null"],
                    "description": "Optional GraphQL variables object.",
                    "additionalProperties": True,
                },
            },
            "required": ["query"],
        },
    }


async def test_input_and_auth_failures_send_nothing(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Unknown tool, missing query and missing auth each fail with their message before any request."""
    no_key = linear_settings(fake.url, api_key=None)
    unknown = await call(no_key, http, {}, name="unknown")
    assert unknown.to_dict() == {
        "success": False,
        "error": 'Unsupported tool: "unknown".',
        "result": {"error": {"message": 'Unsupported tool: "unknown".', "supportedTools": ["linear_graphql"]}},
    }
    for bad_query in ({}, "   ", {"query": "   ", "variables": None}, {"query": 5}, 7):
        result = await call(no_key, http, bad_query)
        assert (result.success, result.error) == (False, QUERY_REQUIRED)
        assert result.result == {"error": {"message": QUERY_REQUIRED}}
    for good_query in (VIEWER, {"query": VIEWER}):
        result = await call(no_key, http, good_query)
        assert result.to_dict() == {
            "success": False,
            "error": MISSING_AUTH,
            "result": {"error": {"message": MISSING_AUTH, **UNAUTHORIZED}},
        }
    assert fake.requests == []


async def test_variables_must_be_an_object(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A non-object ``variables`` fails; ``null`` is sent as ``{}``."""
    settings = linear_settings(fake.url)
    bad = await call(settings, http, {"query": VIEWER, "variables": []})
    assert bad.error == "`linear_graphql.variables` must be a JSON object when provided."
    assert fake.requests == []
    good = await call(settings, http, {"query": VIEWER, "variables": None})
    assert good.success
    assert fake.requests[0].body == {"query": VIEWER, "variables": {}}


async def test_success_returns_the_whole_envelope(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """A bare string is the query; success returns Linear's ``{data}`` envelope with variables passed through."""
    settings = linear_settings(fake.url)
    result = await call(settings, http, VIEWER)
    assert result.to_dict() == {
        "success": True,
        "result": {"data": {"viewer": {"id": "viewer-1", "name": "Test", "email": "test@example.com"}}},
    }
    query = "query Viewer($id: String!) { viewer { id } }"
    await call(settings, http, {"query": query, "variables": {"id": "viewer-1"}})
    assert fake.requests[1].body == {"query": query, "variables": {"id": "viewer-1"}}
    assert fake.requests[1].headers["authorization"] == "linear-token"


async def test_mutations_pass_through_unrestricted(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Mutations are forwarded as they are: the pack has no allow-list."""
    fake.add_issue("id-1", "MT-1")
    mutation = "mutation LorenzTsArchiveIssue($id: String!) { issueArchive(id: $id) { success } }"
    result = await call(linear_settings(fake.url), http, {"query": mutation, "variables": {"id": "id-1"}})
    assert result.to_dict() == {"success": True, "result": {"data": {"issueArchive": {"success": True}}}}


async def test_graphql_errors_with_http_200(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """HTTP 200 with ``errors`` is a failure carrying the body and no ``error`` summary."""
    fake.script({"errors": [{"message": "bad query"}]})
    result = await call(linear_settings(fake.url), http, VIEWER)
    assert result.to_dict() == {"success": False, "result": {"errors": [{"message": "bad query"}]}}


async def test_http_400_with_errors_is_an_http_failure(
    fake: FakeLinear, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A 400 with ``errors`` fails on the status, with the body summarised, and logs once."""
    fake.script({"errors": [{"message": "bad query"}]}, status=400)
    result = await call(linear_settings(fake.url), http, VIEWER)
    message = "Linear GraphQL request failed with HTTP 400."
    assert result.to_dict() == {
        "success": False,
        "error": message,
        "result": {
            "error": {"message": message, "status": 400, "body": '{"errors":[{"message":"bad query"}]}', **REJECTED}
        },
    }
    [line] = records(caplog, "ERROR")
    assert line.startswith("Linear GraphQL request failed status=400 operation=LorenzTsViewer body=")


async def test_persistent_rate_limit(
    fake: FakeLinear, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """Five 429s with ``Retry-After: 0`` make five requests, then fail with HTTP 429 and the body."""
    for _ in range(5):
        fake.script({"message": "rate limited"}, status=429, headers={"Retry-After": "0"})
    result = await call(linear_settings(fake.url), http, VIEWER)
    message = "Linear GraphQL request failed with HTTP 429."
    assert result.to_dict() == {
        "success": False,
        "error": message,
        "result": {
            "error": {
                "message": message,
                "status": 429,
                "body": '{"message":"rate limited"}',
                "retryAfter": 0.0,
                **RATE_LIMITED,
            }
        },
    }
    assert len(fake.requests) == 5
    assert len(records(caplog, "WARNING")) == 4


async def test_one_rate_limit_then_success(
    fake: FakeLinear, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """One 429 then success: two requests, a success, and one warning naming the retry and operation."""
    fake.script({"message": "rate limited"}, status=429, headers={"Retry-After": "0"})
    result = await call(linear_settings(fake.url), http, VIEWER)
    assert result.success and len(fake.requests) == 2
    [warning] = records(caplog, "WARNING")
    assert "status=429 retry=1/4 delay_ms=0" in warning
    assert "operation=LorenzTsViewer" in warning and "rate limited" in warning


async def test_rate_limit_backoff_without_retry_after(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Without ``Retry-After`` the waits are 1 s, 2 s, 4 s, 8 s (capped at 30 s)."""
    for _ in range(5):
        fake.script({"message": "rate limited"}, status=429)
    sleeps = Sleeps()
    result = await call(linear_settings(fake.url), http, VIEWER, sleeps=sleeps)
    assert result.result["error"]["status"] == 429
    assert sleeps == [1.0, 2.0, 4.0, 8.0]


@pytest.mark.parametrize(
    ("status", "text", "expected"),
    [
        (200, "not json", {"error_prefix": "linear_invalid_json: "}),
        (502, "<html>Bad Gateway</html>", {"status": 502, "body": "<html>Bad Gateway</html>"}),
    ],
)
async def test_non_json_bodies(
    fake: FakeLinear, http: httpx.AsyncClient, status: int, text: str, expected: dict[str, Any]
) -> None:
    """A non-JSON 200 is ``linear_invalid_json``; a non-JSON error status is an HTTP failure with the body."""
    fake.script(text=text, status=status)
    result = await call(linear_settings(fake.url), http, VIEWER)
    assert not result.success and result.error is not None
    if "error_prefix" in expected:
        assert result.error.startswith(expected["error_prefix"])
    else:
        assert result.error == f"Linear GraphQL request failed with HTTP {status}."
        assert result.result["error"]["status"] == expected["status"]
        assert result.result["error"]["body"] == expected["body"]


async def test_long_error_body_is_truncated_then_transport_error(
    fake: FakeLinear, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A 500 body is cut to 1000 characters plus ``...<truncated>``; a dropped connection is a transport failure."""
    body = {"errors": [{"message": "y" * 1200, "extensions": {"code": "BAD_USER_INPUT"}}]}
    fake.script(body, status=500)
    result = await call(linear_settings(fake.url), http, VIEWER)
    raw = json.dumps(body, separators=(",", ":"))
    assert result.result["error"]["body"] == raw[:1000] + "...<truncated>"
    [line] = records(caplog, "ERROR")
    assert "status=500" in line and "operation=LorenzTsViewer" in line and "truncated" in line

    async def drop(request: httpx.Request) -> None:
        raise httpx.RemoteProtocolError("socket closed", request=request)

    async with httpx.AsyncClient(event_hooks={"request": [drop]}) as broken:
        failed = await call(linear_settings(fake.url), broken, VIEWER)
    message = "Linear GraphQL request failed before receiving a successful response."
    assert failed.to_dict() == {
        "success": False,
        "error": message,
        "result": {"error": {"message": message, "reason": "socket closed"}},
    }
    assert records(caplog, "ERROR")[1] == "Linear GraphQL request failed: socket closed operation=LorenzTsViewer"


async def test_unreachable_endpoint_is_a_transport_failure(http: httpx.AsyncClient) -> None:
    """A refused connection on loopback is reported as failing before any response."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = await call(linear_settings(f"http://127.0.0.1:{port}/graphql"), http, VIEWER)
    assert result.error == "Linear GraphQL request failed before receiving a successful response."
    assert result.result["error"]["reason"]


async def test_an_endpoint_that_never_answers_is_a_named_timeout(
    silent_server: str, short_timeouts: httpx.AsyncBaseTransport
) -> None:
    """`linear_graphql` against a Linear that never answers fails with a reason naming host and limit."""
    async with httpx.AsyncClient(transport=short_timeouts) as http:
        result = await call(linear_settings(f"{silent_server}/graphql"), http, VIEWER)
    assert result.error == "Linear GraphQL request failed before receiving a successful response."
    assert result.result["error"]["reason"] == f"linear request to {silent_server} timed out after 0.5 s"


async def test_non_ascii_api_key_is_a_transport_failure(
    fake: FakeLinear, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A key with a smart quote fails as a transport failure (no exception, key never echoed)."""
    secret = "lin_api_\u201csmart\u201d"
    result = await call(linear_settings(fake.url, api_key=secret), http, VIEWER)
    assert result.error == "Linear GraphQL request failed before receiving a successful response."
    reason = "linear api key contains characters that cannot be sent in an HTTP header"
    assert result.result["error"]["reason"] == reason and not fake.requests
    for text in (json.dumps(result.to_dict()), *records(caplog, "ERROR")):
        assert "smart" not in text


async def test_secrets_never_reach_results_or_logs(
    fake: FakeLinear, http: httpx.AsyncClient, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """A key from ``$LINEAR_API_KEY`` echoed by Linear is redacted in the result and the log."""
    secret = "lin_api_tool_secret_1234"
    settings = parse_config(
        {"tracker": {"kind": "linear", "api_key": "$LINEAR_API_KEY", "endpoint": fake.url, "project_slug": "mono"}},
        env={"LINEAR_API_KEY": secret},
        trackers=discover(env={"LORENZ_LOAD_PLUGINS": "lorenz-linear"}).trackers,
        base_dir=tmp_path,
    )
    echoed = f"bad key {secret}; Authorization: Bearer {secret}; see op://vault/item/linear-client"
    fake.script({"errors": [{"message": echoed}]}, status=500)
    fake.script({"errors": [{"message": echoed}]}, status=200)
    http_failure = await call(settings, http, VIEWER)
    graphql_failure = await call(settings, http, VIEWER)
    for text in (json.dumps(http_failure.to_dict()), json.dumps(graphql_failure.to_dict()), *records(caplog, "ERROR")):
        assert secret not in text and "op://" not in text
        assert "[REDACTED]" in text


async def test_pack_credentials_win_over_the_tracker(fake: FakeLinear, http: httpx.AsyncClient, tmp_path: Path) -> None:
    """``tools.linear`` key and endpoint are used over the tracker's; ``$VAR`` values are resolved."""
    config = {
        "tracker": {"kind": "dispatch"},
        "trackers": {"dispatch": {"provider": "linear", "api_key": "tracker-token", "project_slug": "mono"}},
        "tools": {"linear": {"api_key": "$PACK_LINEAR_KEY", "endpoint": fake.url}},
    }
    discovery = discover(env={"LORENZ_LOAD_PLUGINS": "lorenz-linear"})
    settings = parse_config(
        config, env={"PACK_LINEAR_KEY": "pack-token"}, trackers=discovery.trackers, base_dir=tmp_path
    )
    fake.api_key = "pack-token"
    result = await call(settings, http, VIEWER)
    assert result.success
    assert fake.requests[0].headers["authorization"] == "pack-token"


async def test_foreign_tracker_key_is_never_sent(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Under a non-Linear tracker its key is not used: without ``tools.linear`` auth the call fails unsent."""
    settings = Settings(tracker=TrackerSettings(kind="memory", api_key="foreign-token", endpoint=fake.url))
    result = await call(settings, http, VIEWER)
    assert result.error == MISSING_AUTH
    assert fake.requests == []
    mounted = Settings(
        tracker=TrackerSettings(kind="memory", api_key="foreign-token"),
        tool_options={"linear": {"apiKey": "linear-token", "endpoint": fake.url}},
    )
    assert (await call(mounted, http, VIEWER)).success
    assert fake.requests[0].headers["authorization"] == "linear-token"


async def test_mounted_call_routes_to_the_pack(fake: FakeLinear, http: httpx.AsyncClient) -> None:
    """Through the core's mounting, ``linear_graphql`` reaches the fake and unknown names list it."""
    pack = LinearToolPack()
    context = ToolContext(settings=linear_settings(fake.url), http=http)
    assert (await execute_mounted_tool([pack], "linear_graphql", {"query": VIEWER}, context)).success
    unknown = await execute_mounted_tool([pack], "unknown", {}, context)
    assert unknown.result == {
        "error": {"message": 'Unsupported tool: "unknown".', "supportedTools": ["linear_graphql"]}
    }


async def test_every_request_has_a_timeout(fake: FakeLinear) -> None:
    """Each request the tool sends, retries included, carries the 30 s timeout."""
    timeouts: list[Any] = []

    async def record(request: httpx.Request) -> None:
        timeouts.append(request.extensions.get("timeout"))

    fake.script({"message": "rate limited"}, status=429, headers={"Retry-After": "0"})
    async with httpx.AsyncClient(timeout=None, event_hooks={"request": [record]}) as http:
        assert (await call(linear_settings(fake.url), http, VIEWER)).success
    assert timeouts == [{"connect": 30.0, "read": 30.0, "write": 30.0, "pool": 30.0}] * 2


@pytest.mark.parametrize("endpoint", ["not a url", "http://[::1"])
async def test_malformed_endpoint_is_a_transport_failure(http: httpx.AsyncClient, endpoint: str) -> None:
    """A malformed ``tools.linear.endpoint`` fails like a transport error, without raising."""
    settings = Settings(tool_options={"linear": {"apiKey": "k-123", "endpoint": endpoint}})
    result = await call(settings, http, VIEWER)
    assert result.error == "Linear GraphQL request failed before receiving a successful response."
