"""The ``linear`` tool pack: ``linear_graphql``, any GraphQL operation with Lorenz's Linear credentials.

The transport (:mod:`.transport`, ``httpx``) loads on the first call, not at registration.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lorenz import (
    Permissions,
    RetryPolicy,
    Settings,
    ToolContext,
    ToolResult,
    ToolSpec,
    error_message,
    redact_text,
    redact_value,
    summarize_body,
    timeout_message,
    tool_failure,
    tool_success,
    unsupported_tool_failure,
)

from .options import tool_credentials, validate_tool_options

if TYPE_CHECKING:
    import httpx

    from .transport import Clock, GraphQLRequest, Sleep

__all__ = ["LINEAR_GRAPHQL", "SKILL_DIR", "LinearToolPack", "linear_tool_specs"]

LINEAR_GRAPHQL = "linear_graphql"
SKILL_DIR = Path(__file__).resolve().parent / "skills" / "lorenz-linear"

QUERY_REQUIRED = "`linear_graphql` requires a non-empty `query` string."
VARIABLES_NOT_OBJECT = "`linear_graphql.variables` must be a JSON object when provided."
MISSING_AUTH = "Lorenz is missing Linear auth. Set `linear.api_key` in `WORKFLOW.md` or export `LINEAR_API_KEY`."
TRANSPORT_FAILED = "Linear GraphQL request failed before receiving a successful response."

_SPEC = ToolSpec(
    name=LINEAR_GRAPHQL,
    description="Run a Linear GraphQL operation using Lorenz's configured Linear credentials.",
    input_schema={
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
)


def linear_tool_specs() -> list[ToolSpec]:
    """The pack's one tool."""
    return [_SPEC]


def _operation(input: object) -> tuple[str, Mapping[str, Any]] | ToolResult:
    """``(query, variables)`` from the tool input (a bare string is the query), or the failure."""
    if isinstance(input, str):
        query: object = input
        variables: object = None
    elif isinstance(input, Mapping):
        query = input.get("query")
        variables = input.get("variables")
    else:
        return tool_failure(QUERY_REQUIRED)
    if not isinstance(query, str) or not query.strip():
        return tool_failure(QUERY_REQUIRED)
    if variables is not None and not isinstance(variables, Mapping):
        return tool_failure(VARIABLES_NOT_OBJECT)
    return query, variables or {}


class LinearToolPack:
    """Pack ``linear``. Forwards any query or mutation as-is: safety rests on the key's scope and the
    bundled ``lorenz-linear`` skill. ``sleep``/``now``/``policy`` tune the 429 retry loop (tests; the
    default policy is :data:`~.transport.LINEAR_RETRY_POLICY`)."""

    name = "linear"

    def __init__(
        self,
        *,
        policy: RetryPolicy | None = None,
        sleep: Sleep | None = None,
        now: Clock | None = None,
    ) -> None:
        self.skills: tuple[str, ...] = (str(SKILL_DIR),)
        self._policy = policy
        self._sleep = sleep
        self._now = now

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        return linear_tool_specs()

    def permissions(self, settings: Settings) -> Permissions:
        """Sandboxed (``server.sandboxed_packs``): the configured GraphQL endpoint's host."""
        return Permissions.reaching(tool_credentials(settings).endpoint)

    def validate_options(self, options: Mapping[str, Any]) -> None:
        """``tools.linear`` accepts ``apiKey``/``api_key`` and ``endpoint``, all strings."""
        validate_tool_options(options)

    def check_settings(self, settings: Settings) -> list[str]:
        """Without a key (``tools.linear`` or a linear tracker's) every call fails."""
        if tool_credentials(settings).api_key:
            return []
        return ["tools.linear.api_key is required (or a linear tracker's tracker.api_key)"]

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        import httpx

        from .transport import LINEAR_RETRY_POLICY, GraphQLRequest, logger, post_graphql, secrets_with

        if name != LINEAR_GRAPHQL:
            return unsupported_tool_failure(name, [LINEAR_GRAPHQL])
        operation = _operation(input)
        if isinstance(operation, ToolResult):
            return operation
        query, variables = operation
        credentials = tool_credentials(context.settings)
        if not credentials.api_key:
            return tool_failure(MISSING_AUTH)
        request = GraphQLRequest(
            endpoint=credentials.endpoint,
            api_key=credentials.api_key,
            query=query,
            variables=variables,
            secrets=secrets_with(context.settings.secrets, credentials.api_key),
        )
        policy = LINEAR_RETRY_POLICY if self._policy is None else self._policy
        try:
            response = await post_graphql(context.http, request, policy=policy, sleep=self._sleep, now=self._now)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            reason = redact_text(timeout_message(exc, "linear") or error_message(exc), request.secrets)
            logger.error("Linear GraphQL request failed: %s operation=%s", reason, request.operation)
            return tool_failure(TRANSPORT_FAILED, reason=reason)
        return _result(response, request)


def _http_failure(response: httpx.Response, request: GraphQLRequest) -> ToolResult:
    from .transport import logger

    body = summarize_body(response.text, request.secrets)
    logger.error(
        "Linear GraphQL request failed status=%s operation=%s body=%s",
        response.status_code,
        request.operation,
        body,
    )
    message = f"Linear GraphQL request failed with HTTP {response.status_code}."
    return tool_failure(message, status=response.status_code, body=body)


def _result(response: httpx.Response, request: GraphQLRequest) -> ToolResult:
    """HTTP status first, then GraphQL ``errors`` (the reverse of the tracker client's order)."""
    try:
        body = json.loads(response.text)
    except ValueError as exc:
        if not response.is_success:
            return _http_failure(response, request)
        return tool_failure(f"linear_invalid_json: {redact_text(str(exc), request.secrets)}")
    if not response.is_success:
        return _http_failure(response, request)
    redacted = redact_value(body, request.secrets)
    errors = body.get("errors") if isinstance(body, Mapping) else None
    if isinstance(errors, list) and errors:
        return ToolResult(success=False, result=redacted)
    return tool_success(redacted)
