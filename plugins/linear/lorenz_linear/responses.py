"""Classifying a Linear GraphQL response: the ``data`` of a good one, a redacted error for any other."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from lorenz import redact_text, summarize_body

from .transport import GraphQLRequest, logger

__all__ = ["LinearApiError", "response_data"]


class LinearApiError(RuntimeError):
    """A Linear request or response was unusable. The message is already redacted."""


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _fail(response: httpx.Response, request: GraphQLRequest, message: str) -> LinearApiError:
    logger.error(
        "Linear GraphQL request failed status=%s operation=%s body=%s",
        response.status_code,
        request.operation,
        summarize_body(response.text, request.secrets),
    )
    return LinearApiError(message)


def response_data(response: httpx.Response, request: GraphQLRequest) -> Mapping[str, Any]:
    """Classify a response: JSON, then 429, then GraphQL ``errors``, then status, then ``data``."""
    status = response.status_code
    try:
        body = json.loads(response.text)
    except ValueError as exc:
        if not response.is_success:
            raise _fail(response, request, f"linear api status {status}") from None
        raise LinearApiError(f"linear_invalid_json: {redact_text(str(exc), request.secrets)}") from None
    if status == 429:
        raise _fail(response, request, "linear api status 429")
    errors = body.get("errors") if isinstance(body, Mapping) else None
    if isinstance(errors, list) and errors:
        detail = redact_text(_json(errors), request.secrets)
        raise _fail(response, request, f"linear_graphql_errors: {detail}")
    if not response.is_success:
        raise _fail(response, request, f"linear api status {status}")
    data = body.get("data") if isinstance(body, Mapping) else None
    if not isinstance(data, Mapping):
        raise _fail(response, request, "linear_unknown_payload")
    return data
