"""``linear_graphql`` on :mod:`lorenz.authoring`: typed input, an ``outputSchema`` for Linear's
``{data}`` envelope, annotations and the declared failures (missing or refused key, rate limit,
Linear down, a missing entity), with the messages the tool has always answered.

Loaded by the first listing or call (:class:`lorenz_linear.tools.LinearToolPack`), not at registration.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from attrs import field, frozen

from lorenz import (
    ArgumentError,
    RetryPolicy,
    ToolResult,
    error_message,
    redact_text,
    redact_value,
    strict_object_schema,
    string_schema,
    summarize_body,
    timeout_message,
    tool_failure,
    tool_success,
)
from lorenz.authoring import CallContext, ErrorContract, Pack, Tool, describe, hints, tool

from .options import tool_credentials

if TYPE_CHECKING:
    import httpx

    from .transport import Clock, GraphQLRequest, Sleep

__all__ = ["LINEAR_GRAPHQL", "MISSING_AUTH", "QUERY_REQUIRED", "TypedLinearPack", "linear_tool"]

LINEAR_GRAPHQL = "linear_graphql"
QUERY_REQUIRED = "`linear_graphql` requires a non-empty `query` string."
VARIABLES_NOT_OBJECT = "`linear_graphql.variables` must be a JSON object when provided."
MISSING_AUTH = "Lorenz is missing Linear auth. Set `linear.api_key` in `WORKFLOW.md` or export `LINEAR_API_KEY`."
TRANSPORT_FAILED = "Linear GraphQL request failed before receiving a successful response."

#: The schema the tool has always published (a nullable ``variables`` the kit would not generate).
INPUT_SCHEMA: Mapping[str, Any] = strict_object_schema(
    {
        "query": string_schema("GraphQL query or mutation document to execute against Linear."),
        "variables": {
            "type": ["object", "null"],
            "description": "Optional GraphQL variables object.",
            "additionalProperties": True,
        },
    },
    "query",
)

_KEY_RECOVERY = (
    "Set tools.linear.api_key (or a linear tracker's tracker.api_key) in WORKFLOW.md, or export "
    "LINEAR_API_KEY, to a valid Linear API key; then call again."
)
ERRORS = (
    ErrorContract(reason="unauthorized", when="Linear has no key, or refused it (HTTP 401).", recovery=_KEY_RECOVERY),
    ErrorContract(
        reason="forbidden",
        when="The key may not run this operation (HTTP 403).",
        recovery="Use a key whose Linear user may run this operation, or ask for less.",
    ),
    ErrorContract(
        reason="rate_limited",
        when="Linear kept answering HTTP 429 after the retries.",
        recovery="Wait retryAfter seconds (or a minute), then call linear_graphql again.",
        retryable=True,
    ),
    ErrorContract(
        reason="service_unavailable",
        when="Linear answered with an HTTP 5xx status.",
        recovery="Linear is failing; wait a minute and call linear_graphql again.",
        retryable=True,
    ),
    ErrorContract(
        reason="request_rejected",
        when="Linear refused the request with another HTTP 4xx status.",
        recovery="Read the body in the error, fix the query or variables, and call again.",
    ),
    ErrorContract(
        reason="not_found",
        when="Linear answered that an entity the operation names does not exist.",
        recovery="Look the id up first (e.g. query issues or teams by key) and call again with an existing id.",
    ),
)
_BY_STATUS = {401: "unauthorized", 403: "forbidden", 429: "rate_limited"}


@frozen(kw_only=True)
class GraphQLArgs:
    query: str = field(metadata=describe("GraphQL query or mutation document to execute against Linear."))
    variables: Mapping[str, Any] = field(factory=dict, metadata=describe("Optional GraphQL variables object."))


@frozen(kw_only=True)
class Envelope:
    """Linear's response as it sent it (secrets redacted): ``data`` on success."""

    data: dict[str, Any] | None = field(
        default=None,
        metadata=describe("The operation's result, shaped as the query asked.", schema={"type": "object"}),
    )


def read_operation(ctx: CallContext, raw: Mapping[str, Any]) -> GraphQLArgs:
    """The tool's own checks and words (a bare string query is made ``{"query": ...}`` by the pack)."""
    query = raw.get("query")
    if not isinstance(query, str) or not query.strip():
        raise ArgumentError(QUERY_REQUIRED)
    variables = raw.get("variables")
    if variables is not None and not isinstance(variables, Mapping):
        raise ArgumentError(VARIABLES_NOT_OBJECT)
    return GraphQLArgs(query=query, variables=variables or {})


def as_before(raw: Any, exc: ArgumentError) -> ToolResult:
    return tool_failure(error_message(exc))


def linear_tool(
    policy: RetryPolicy | None = None, sleep: Sleep | None = None, now: Clock | None = None
) -> Tool[GraphQLArgs, Envelope]:
    """The tool, with the 429 retry loop tuned by ``policy``/``sleep``/``now`` (tests)."""

    # Any query or mutation goes through as it is: a mutation may delete, so nothing is promised.
    @tool(
        name=LINEAR_GRAPHQL,
        title="Linear GraphQL",
        description="Run a Linear GraphQL operation using Lorenz's configured Linear credentials.",
        input=GraphQLArgs,
        output=Envelope,
        input_schema=INPUT_SCHEMA,
        read_arguments=read_operation,
        argument_errors=as_before,
        annotations=hints(read_only=False, destructive=True, idempotent=False, open_world=True),
        errors=ERRORS,
    )
    async def linear_graphql(ctx: CallContext, args: GraphQLArgs) -> Any:
        import httpx

        from .transport import (  # httpx: on the first call, not when listing
            LINEAR_RETRY_POLICY,
            GraphQLRequest,
            logger,
            post_graphql,
            secrets_with,
        )

        credentials = tool_credentials(ctx.settings)
        if not credentials.api_key:
            raise ctx.fail("unauthorized", MISSING_AUTH)
        request = GraphQLRequest(
            endpoint=credentials.endpoint,
            api_key=credentials.api_key,
            query=args.query,
            variables=args.variables,
            secrets=secrets_with(ctx.settings.secrets, credentials.api_key),
        )
        try:
            response = await post_graphql(ctx.http, request, policy=policy or LINEAR_RETRY_POLICY, sleep=sleep, now=now)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            reason = redact_text(timeout_message(exc, "linear") or error_message(exc), request.secrets)
            logger.error("Linear GraphQL request failed: %s operation=%s", reason, request.operation)
            # Undeclared on purpose: this failure's ``reason`` key has always held the transport's text.
            return tool_failure(TRANSPORT_FAILED, reason=reason)
        return _result(ctx, response, request)

    return linear_graphql


def _http_failure(ctx: CallContext, response: httpx.Response, request: GraphQLRequest) -> Exception:
    from .transport import logger  # httpx: on the first call, not when listing

    status = response.status_code
    body = summarize_body(response.text, request.secrets)
    logger.error("Linear GraphQL request failed status=%s operation=%s body=%s", status, request.operation, body)
    message = f"Linear GraphQL request failed with HTTP {status}."
    reason = _BY_STATUS.get(status) or ("service_unavailable" if status >= 500 else "request_rejected")
    details: dict[str, Any] = {"status": status, "body": body}
    wait = _retry_after(response)
    if reason == "rate_limited" and wait is not None:
        details["retryAfter"] = wait
    return ctx.fail(reason, message, **details)


def _retry_after(response: httpx.Response) -> float | None:
    try:
        seconds = float(response.headers.get("retry-after", ""))
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _result(ctx: CallContext, response: httpx.Response, request: GraphQLRequest) -> Any:
    """HTTP status first, then GraphQL ``errors`` (the reverse of the tracker client's order)."""
    try:
        body = json.loads(response.text)
    except ValueError as exc:
        if not response.is_success:
            raise _http_failure(ctx, response, request) from None
        return tool_failure(f"linear_invalid_json: {redact_text(str(exc), request.secrets)}")
    if not response.is_success:
        raise _http_failure(ctx, response, request)
    redacted = redact_value(body, request.secrets)
    errors = body.get("errors") if isinstance(body, Mapping) else None
    if isinstance(errors, list) and errors:
        if _not_found(errors) and isinstance(redacted, dict):
            # Linear's body kept as it is; the declared failure rides beside its ``errors``.
            failure = ctx.fail("not_found", _first_message(redacted)).to_result()
            return ToolResult(success=False, result={**redacted, **(failure.result or {})})
        return ToolResult(success=False, result=redacted)
    return tool_success(redacted)


def _not_found(errors: list[Any]) -> bool:
    return any(
        isinstance(error, Mapping) and str(error.get("message", "")).lower().startswith("entity not found")
        for error in errors
    )


def _first_message(body: Mapping[str, Any]) -> str:
    return next(
        (str(e["message"]) for e in body.get("errors", ()) if isinstance(e, Mapping) and "message" in e),
        "Entity not found",
    )


class TypedLinearPack(Pack):
    """The ``linear`` pack as the kit runs it (:class:`lorenz_linear.tools.LinearToolPack` delegates here)."""

    # The host checks arguments against the published inputSchema; the tool words its own refusals.
    validates_arguments: ClassVar[bool] = False

    def __init__(self, tool: Tool[GraphQLArgs, Envelope]) -> None:
        super().__init__(name="linear", tools=[tool], description="Linear's GraphQL API with Lorenz's key.")

    def parse_options(self, raw: Mapping[str, Any] | None) -> Any:
        """``tools.linear`` as given: the provider's ``validate_options`` checks it when the workflow
        loads, and the tool reads its key and endpoint through :func:`tool_credentials`."""
        return dict(raw or {})
