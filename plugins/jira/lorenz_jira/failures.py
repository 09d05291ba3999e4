"""The ``jira_*`` tools' failure modes: their error contracts, and the classification of whatever a
backend raised into one of them. The message stays the one the pack has always answered."""

from __future__ import annotations

import re
from collections.abc import Iterator

from lorenz import PaginationError, error_message
from lorenz.authoring import (
    BASELINE_ERRORS,
    ErrorContract,
    ToolFailure,
    failure_from,
    forbidden,
    not_found,
    rate_limited,
    service_unavailable,
    timeout,
    unauthorized,
)

from .backend import JiraError

__all__ = ["CONTRACTS", "classify", "contracts"]

_REST_KEYS = "tracker.base_url, tracker.email and tracker.api_key"
_MCP_KEYS = "tracker.mcp.url (and tracker.mcp.token when the server needs one)"

CONTRACTS: dict[str, ErrorContract] = {
    contract.reason: contract
    for contract in (
        ErrorContract(
            reason="not_configured",
            when="The workflow does not configure a usable Jira site (a missing or invalid tracker key).",
            recovery=f"Do not retry; ask the operator to set {_REST_KEYS} (kind jira) or {_MCP_KEYS} (kind "
            "jira-mcp) in WORKFLOW.md.",
        ),
        ErrorContract(
            reason="unauthorized",
            when="Jira refused the configured credentials (HTTP 401).",
            recovery="Do not retry; ask the operator to check tracker.email and tracker.api_key (kind jira) or "
            "tracker.mcp.token (kind jira-mcp).",
            code=-32006,
        ),
        ErrorContract(
            reason="forbidden",
            when="The credentials may not see or change this issue (HTTP 403).",
            recovery="Do not retry this issue; pick one in the configured projects or ask the operator for access.",
            code=-32005,
        ),
        ErrorContract(
            reason="not_found",
            when="The issue (or comment) does not exist or the credentials cannot see it.",
            recovery="Check the key, or call jira_query to list the issue keys you can use.",
            code=-32001,
        ),
        BASELINE_ERRORS["rate_limited"],
        BASELINE_ERRORS["service_unavailable"],
        BASELINE_ERRORS["timeout"],
        ErrorContract(
            reason="status_unavailable",
            when="No workflow transition of the issue leads to the requested status.",
            recovery="Retry with the name of a status the issue can move to next, e.g. 'In Progress' or 'Done'; "
            "jira_read_issue shows its current status.",
        ),
        ErrorContract(
            reason="too_many_results",
            when="The search ran past the pack's page or item limit.",
            recovery="Narrow the search (a stricter JQL, fewer states or fewer issueIds) and call again.",
        ),
        ErrorContract(
            reason="jira_error",
            when="Jira (or the Jira MCP server) answered with another error, e.g. a JQL syntax error.",
            recovery="Read the message, correct the argument it names (JQL, status, assignee) and call again.",
        ),
    )
}

#: The reasons each tool declares besides the ones every tool does.
_EXTRA: dict[str, tuple[str, ...]] = {
    "jira_query": ("too_many_results",),
    "jira_update_status": ("status_unavailable",),
    "jira_create_issue": ("status_unavailable",),
}
_COMMON = (
    "not_configured",
    "unauthorized",
    "forbidden",
    "not_found",
    "rate_limited",
    "service_unavailable",
    "timeout",
    "jira_error",
)


def contracts(tool: str) -> list[ErrorContract]:
    """The error contracts ``tool`` declares."""
    return [CONTRACTS[reason] for reason in (*_COMMON, *_EXTRA.get(tool, ()))]


_STATUS = re.compile(r"\bstatus (\d{3}): ")
_MISSING = re.compile(r"\b(does not exist|not found)\b", re.IGNORECASE)
_CONFIG = re.compile(
    r"^(tracker\.[\w.]+ (is required|must be)|tracker\.jql or tracker\.project_keys|unsupported tracker\.)"
)
_FACTORIES = {401: unauthorized, 403: forbidden, 404: not_found}


def _causes(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _declared(failure: ToolFailure, message: str) -> ToolFailure:
    """``failure``'s reason with the pack's own contract, message and the failure's details."""
    contract = CONTRACTS.get(failure.reason, BASELINE_ERRORS.get(failure.reason))
    if contract is None:
        return failure
    return ToolFailure.of(
        contract,
        message,
        retryable=failure.retryable,
        details=failure.details,
        recovery=failure.recovery if failure.reason in ("rate_limited", "service_unavailable") else None,
    )


def _by_status(status: int, message: str) -> ToolFailure | None:
    factory = _FACTORIES.get(status)
    if factory is not None:
        return factory(message, status=status)
    if status == 429:
        return rate_limited(message, status=status)
    if 500 <= status <= 599:
        return service_unavailable(message, status=status)
    return None


def classify(exc: BaseException) -> ToolFailure:
    """The declared failure for what a tool's backend raised; the message is ``error_message(exc)``
    (the pack redacts it on the way out)."""
    if isinstance(exc, ToolFailure):
        return exc
    message = error_message(exc)
    for link in _causes(exc):
        known = failure_from(link)  # an HTTP status (with Retry-After) or a timeout
        if known is not None:
            return _declared(known, message)
    if isinstance(exc, PaginationError):
        return ToolFailure.of(CONTRACTS["too_many_results"], message)
    if isinstance(exc, JiraError):
        status = exc.status
        found = _STATUS.search(message) if status is None else None
        by_status = _by_status(status if status is not None else int(found.group(1)) if found else 0, message)
        if by_status is not None:
            return _declared(by_status, message)
        if message.startswith("jira issue not found"):
            return ToolFailure.of(CONTRACTS["not_found"], message)
        if message.startswith("jira transition not found"):
            return ToolFailure.of(CONTRACTS["status_unavailable"], message)
        if _MISSING.search(message):  # a Jira MCP server's own words for a missing issue
            return ToolFailure.of(CONTRACTS["not_found"], message)
        if " timed out after " in message:
            return _declared(timeout(message), message)
    if _CONFIG.search(message):
        return ToolFailure.of(CONTRACTS["not_configured"], message)
    return ToolFailure.of(CONTRACTS["jira_error"], message)
