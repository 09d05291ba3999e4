"""Typed failures through the real host: ``ctx.fail`` overrides, ``ErrorContract(code=...)``, the
baseline factories, the classification of exceptions escaping a handler, and what lint accepts."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import mcp
import pytest
from attrs import field, frozen
from jsonschema import Draft202012Validator

from lorenz import hookimpl
from lorenz.authoring import (
    BASELINE_ERRORS,
    CallContext,
    ErrorContract,
    Pack,
    ToolFailure,
    describe,
    failure_from,
    forbidden,
    not_found,
    rate_limited,
    service_unavailable,
    timeout,
    tool,
    unauthorized,
    validation_error,
)
from lorenz.authoring.lint import lint_pack
from lorenz.host import serve_in_thread
from lorenz.testing import HostFactory

pytestmark = pytest.mark.anyio

FACTORIES: dict[str, Callable[..., ToolFailure]] = {
    "not_found": not_found,
    "validation_error": validation_error,
    "rate_limited": rate_limited,
    "unauthorized": unauthorized,
    "forbidden": forbidden,
    "service_unavailable": service_unavailable,
    "timeout": timeout,
}
CODES = {
    "service_unavailable": -32000,
    "not_found": -32001,
    "rate_limited": -32003,
    "timeout": -32004,
    "forbidden": -32005,
    "unauthorized": -32006,
    "validation_error": -32007,
}
RETRYABLE = {"rate_limited", "service_unavailable", "timeout"}
#: An upstream URL carrying credentials in every place a URL can: userinfo, path and query.
SECRET_URL = "https://bot:hunter2-pass@api.example.com/v1/tok_0123456789abcdef/items?access_token=abcdef0123456789"


@frozen(kw_only=True)
class Args:
    what: str = field(default="", metadata=describe("What to do."))
    status: int = field(default=200, metadata=describe("Status the upstream answers."))


@tool(
    name="fails_busy",
    description="Fails with a declared, per-call adjusted contract.",
    input=Args,
    errors=[
        ErrorContract(
            reason="queue_full",
            when="The local queue is at capacity.",
            recovery="Wait a few seconds before retrying the call.",
            code=-32003,
        ),
        ErrorContract(reason="plain", when="A plain failure.", recovery="Do the other thing instead, please."),
        ErrorContract(
            reason="not_found", when="No such note.", recovery="List the notes and pick one of their titles."
        ),
    ],
)
async def busy(ctx: CallContext, args: Args) -> dict[str, Any]:
    if args.what == "override":
        raise ctx.fail(
            "queue_full", "Queue full now.", recovery="Use the other queue instead of this one.", retryable=True
        )
    if args.what == "code":
        raise ctx.fail("queue_full", code=-32099, depth=12)
    if args.what == "plain":
        raise ctx.fail("plain")
    if args.what == "declared_baseline":
        raise ctx.fail("not_found", "No note 'x'.")
    if args.what == "undeclared_baseline":
        raise ctx.fail("timeout", "The index took too long.")
    if args.what == "spoof":
        raise ctx.fail("plain", reason="other", message="other")
    return {}


@tool(name="fails_factory", description="Raises or returns a baseline failure.", input=Args)
async def factory(ctx: CallContext, args: Args) -> dict[str, Any]:
    reason, _, how = args.what.partition(":")
    make = FACTORIES[reason]
    failure = make("Upstream said no.", retry_after=30) if reason == "rate_limited" else make("Upstream said no.")
    if how == "returned":
        return failure  # type: ignore[return-value]
    raise failure


@tool(name="fails_fetch", description="Fetches an upstream URL and raises for its status.", input=Args)
async def fetch(ctx: CallContext, args: Args) -> dict[str, Any]:
    response = await ctx.http.get(SECRET_URL)
    response.raise_for_status()
    return {"status": response.status_code}


PACK = Pack(name="fails", tools=[busy, factory, fetch])


def upstream(status: int, headers: dict[str, str] | None = None) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers=headers or {}, json={"detail": "upstream says no"})

    return httpx.MockTransport(answer)


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error is True
    assert result.structured_content is not None
    error: dict[str, Any] = result.structured_content["error"]
    return error


# -- ctx.fail -----------------------------------------------------------------------------------


async def test_fail_overrides_win_over_the_contract(lorenz_host: HostFactory) -> None:
    """Regression: ``ctx.fail(..., recovery=, retryable=)`` raised TypeError inside ``to_result`` and
    the agent got the bare word ``recovery``; the per-call values now win over the contract's."""
    result = await lorenz_host(PACK).call_mcp("fails_busy", {"what": "override"})
    assert error_of(result) == {
        "message": "Queue full now.",
        "reason": "queue_full",
        "retryable": True,
        "recovery": "Use the other queue instead of this one.",
        "code": -32003,
    }
    assert result.content[0].text == (
        "Error: Queue full now.\n\nReason: queue_full (retryable)\nRecovery: Use the other queue instead of this one."
    )


async def test_contract_code_and_details(lorenz_host: HostFactory) -> None:
    """A contract's ``code`` is in the data (a per-call ``code`` wins); a contract without one adds
    no key; keyword details still land in the error object."""
    host = lorenz_host(PACK)
    coded = error_of(await host.call_mcp("fails_busy", {"what": "code"}))
    assert coded["code"] == -32099 and coded["depth"] == 12 and coded["retryable"] is False
    assert coded["message"] == "The local queue is at capacity."
    assert "code" not in error_of(await host.call_mcp("fails_busy", {"what": "plain"}))


async def test_a_detail_cannot_replace_the_reason(lorenz_host: HostFactory) -> None:
    """Details named like the envelope's own keys are dropped, not a TypeError."""
    error = error_of(await lorenz_host(PACK).call_mcp("fails_busy", {"what": "spoof"}))
    assert error["reason"] == "plain" and error["message"] == "A plain failure."


async def test_baseline_reasons_through_ctx_fail(lorenz_host: HostFactory) -> None:
    """A declared baseline reason keeps its own recovery and gains the baseline code; an undeclared
    baseline reason is the baseline failure, not ``undeclared_reason``."""
    host = lorenz_host(PACK)
    declared = error_of(await host.call_mcp("fails_busy", {"what": "declared_baseline"}))
    assert declared["recovery"] == "List the notes and pick one of their titles."
    assert declared["code"] == -32001
    baseline = error_of(await host.call_mcp("fails_busy", {"what": "undeclared_baseline"}))
    assert baseline == {
        "message": "The index took too long.",
        "reason": "timeout",
        "retryable": True,
        "recovery": BASELINE_ERRORS["timeout"].recovery,
        "code": -32004,
    }


# -- the factories ------------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["raised", "returned"])
@pytest.mark.parametrize("reason", sorted(FACTORIES))
async def test_factory_gives_its_reason(lorenz_host: HostFactory, reason: str, how: str) -> None:
    """Each factory, raised or returned by a handler, is its baseline reason with recovery and code,
    and fits the tool's advertised error envelope."""
    result = await lorenz_host(PACK).call_mcp("fails_factory", {"what": f"{reason}:{how}"})
    error = error_of(result)
    assert error["message"] == "Upstream said no."
    assert error["reason"] == reason
    assert error["code"] == CODES[reason]
    assert error["retryable"] is (reason in RETRYABLE)
    assert len(error["recovery"].split()) >= 5
    assert f"Recovery: {error['recovery']}" in result.content[0].text
    if reason == "rate_limited":
        assert error["retryAfter"] == 30
    else:
        assert "retryAfter" not in error


def test_factory_defaults_and_overrides() -> None:
    """Without a message a factory says its ``when``; ``recovery``/``retryable`` can be adjusted."""
    failure = not_found(recovery="Search the catalogue by title first.", retryable=True)
    assert failure.message == BASELINE_ERRORS["not_found"].when
    data = failure.to_result().result["error"]
    assert data["recovery"] == "Search the catalogue by title first." and data["retryable"] is True


# -- exceptions escaping a handler --------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (401, "unauthorized"),
        (403, "forbidden"),
        (404, "not_found"),
        (429, "rate_limited"),
        (500, "service_unavailable"),
        (503, "service_unavailable"),
    ],
)
async def test_http_status_errors_are_classified(lorenz_host: HostFactory, status: int, reason: str) -> None:
    """``raise_for_status()`` escaping a handler is the baseline failure for its status, and its
    message names only the method and origin: no password, path token or query token."""
    host = lorenz_host(PACK, transport=upstream(status))
    result = await host.call_mcp("fails_fetch", {})
    error = error_of(result)
    assert error["reason"] == reason
    assert error["code"] == CODES[reason]
    assert error["status"] == status
    assert error["message"].startswith(f"fails_fetch failed: GET https://api.example.com answered {status} ")
    for leak in ("hunter2", "tok_0123456789abcdef", "abcdef0123456789", "/v1/"):
        assert leak not in result.content[0].text
        assert leak not in str(result.structured_content)


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        ("7", 7),
        ("86400", 120),  # capped like send_with_retry caps it
        (format_datetime(datetime.now(UTC) + timedelta(days=2), usegmt=True), 120),
        ("soon", None),
    ],
    ids=["seconds", "capped", "http-date", "unreadable"],  # the date changes: parallel workers must agree on names
)
async def test_rate_limited_carries_retry_after(lorenz_host: HostFactory, header: str, expected: int | None) -> None:
    """A 429's ``Retry-After`` (seconds or an HTTP date) becomes ``retryAfter``, capped at 120 s."""
    host = lorenz_host(PACK, transport=upstream(429, {"Retry-After": header}))
    error = error_of(await host.call_mcp("fails_fetch", {}))
    assert error["reason"] == "rate_limited"
    assert error.get("retryAfter") == expected


async def test_httpx_timeout_is_classified(lorenz_host: HostFactory) -> None:
    """An httpx timeout escaping a handler is a retryable ``timeout`` with its code."""

    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("The read operation timed out", request=request)

    error = error_of(await lorenz_host(PACK, transport=httpx.MockTransport(slow)).call_mcp("fails_fetch", {}))
    assert error == {
        "message": "fails_fetch failed: The read operation timed out",
        "reason": "timeout",
        "retryable": True,
        "recovery": "Wait a little and call the tool again.",
        "code": -32004,
    }


async def test_other_statuses_stay_internal_errors(lorenz_host: HostFactory) -> None:
    """A status with no baseline meaning (409) is still ``internal_error``, as before."""
    error = error_of(await lorenz_host(PACK, transport=upstream(409)).call_mcp("fails_fetch", {}))
    assert error["reason"] == "internal_error" and "code" not in error


def test_failure_from_in_client_code() -> None:
    """Client code can map an exception itself; unknown exceptions give ``None``."""
    request = httpx.Request("DELETE", SECRET_URL)
    error = httpx.HTTPStatusError("nope", request=request, response=httpx.Response(403, request=request))
    failure = failure_from(error)
    assert failure is not None and failure.reason == "forbidden"
    assert failure.message == "DELETE https://api.example.com answered 403 Forbidden"
    assert failure_from(ValueError("x")) is None


async def test_error_envelope_schema_admits_code_and_retry_after(lorenz_host: HostFactory) -> None:
    """The widened outputSchema of a typed tool accepts the failure with ``code`` and ``retryAfter``."""

    @frozen(kw_only=True)
    class Out:
        n: int = field(metadata=describe("A number."))

    @tool(name="fails_typed", description="Typed output.", input=Args, output=Out)
    async def typed(ctx: CallContext, args: Args) -> Out:
        raise rate_limited("Slow down.", retry_after=2.5)

    result = await lorenz_host(Pack(name="fails", tools=[typed])).call_mcp("fails_typed", {})
    assert error_of(result)["retryAfter"] == 2.5
    schema = typed.output_schema
    assert schema is not None
    Draft202012Validator(schema).validate(result.structured_content)
    assert schema["properties"]["error"]["properties"]["code"]["type"] == "integer"


# -- over real HTTP -----------------------------------------------------------------------------


@tool(name="fails_remote", description="Raises a classified exception.", input=Args)
async def remote(ctx: CallContext, args: Args) -> dict[str, Any]:
    if args.what == "factory":
        raise not_found("No item 42.")
    request = httpx.Request("GET", SECRET_URL)
    httpx.Response(args.status, headers={"Retry-After": "9"}, request=request).raise_for_status()
    return {}


class RemotePlugin:
    __name__ = "fails-plugin"

    @hookimpl
    def lorenz_register_tool_packs(self, register: Any) -> None:
        register(Pack(name="fails", tools=[remote]))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_classified_failures_reach_an_http_client(tmp_path: Path, host_pack: Any, mode: str) -> None:
    """The official SDK client over HTTP (both eras) sees the factory's and the classified
    exception's reason, code and ``retryAfter``, with no credential from the URL."""
    front = "tracker:\n  kind: demo\ntools:\n  fails: {}\n"
    (tmp_path / "WORKFLOW.md").write_text(f"---\n{front}---\n", encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": ""}
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[host_pack, RemotePlugin()]) as server:
        async with mcp.Client(server.url, mode=mode) as client:
            found = error_of(await client.call_tool("fails_remote", {"what": "factory"}))
            limited = await client.call_tool("fails_remote", {"status": 429})
    assert (found["reason"], found["code"], found["message"]) == ("not_found", -32001, "No item 42.")
    error = error_of(limited)
    assert (error["reason"], error["code"], error["retryAfter"]) == ("rate_limited", -32003, 9)
    assert "hunter2" not in limited.content[0].text and "access_token" not in limited.content[0].text


# -- lint ---------------------------------------------------------------------------------------


def test_lint_accepts_undeclared_baseline_reasons() -> None:
    """``ctx.fail("timeout")`` and the factories need no declaration; a typo still does."""
    diagnostics = lint_pack(PACK, contract=False)
    assert not [d for d in diagnostics if d.rule == "fail-undeclared-reason"], diagnostics

    @tool(name="fails_typo", description="Fails with a typo.", input=Args)
    async def typo(ctx: CallContext, args: Args) -> dict[str, Any]:
        raise ctx.fail("not_fund")

    found = [
        d for d in lint_pack(Pack(name="fails", tools=[typo]), contract=False) if d.rule == "fail-undeclared-reason"
    ]
    assert len(found) == 1 and 'ctx.fail("not_fund")' in found[0].message


def test_lint_flags_a_code_that_is_not_an_integer() -> None:
    """``ErrorContract(code=...)`` must be an integer."""
    contract = ErrorContract(reason="odd", when="Odd.", recovery="Do the other thing instead, please.", code="x")  # type: ignore[arg-type]

    @tool(name="fails_odd", description="Odd.", input=Args, errors=[contract])
    async def odd(ctx: CallContext, args: Args) -> dict[str, Any]:
        return {}

    rules = [d.rule for d in lint_pack(Pack(name="fails", tools=[odd]), contract=False)]
    assert "error-contract-code-type" in rules
