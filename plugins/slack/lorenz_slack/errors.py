"""The ``slack`` tools' declared failures, and the one mapping from what Slack (or the trust boundary)
raised to a failure with a reason, ``retryable`` and a recovery. The message stays the exception's own,
redacted, exactly as the pack has always worded it."""

from __future__ import annotations

from typing import Any

from lorenz import Settings, error_message, redact_text
from lorenz.authoring import BASELINE_ERRORS, ErrorContract, ToolFailure

__all__ = ["READ_ERRORS", "WRITE_ERRORS", "slack_failure"]

_TOKEN = "tracker.api_key (or SLACK_BOT_TOKEN)"

BOT_NOT_CONFIGURED = ErrorContract(
    reason="bot_not_configured",
    when="The workflow does not name the bot's Slack user id, so no Slack tool can run.",
    recovery="Do not retry; ask the operator to set tracker.bot_user_id (or SLACK_BOT_USER_ID) in WORKFLOW.md.",
)
CHANNEL_NOT_CONFIGURED = ErrorContract(
    reason="channel_not_configured",
    when="The issueId names a channel that is not one of tracker.channels.",
    recovery="Call slack_query to list the tracked issues and use one of their issueId values.",
)
ISSUE_NOT_FOUND = ErrorContract(
    reason="issue_not_found",
    when="No message exists at the issueId's channel and timestamp.",
    recovery="Call slack_query to list the tracked issues and use one of their issueId values.",
    code=BASELINE_ERRORS["not_found"].code,
)
NOT_TRACKED = ErrorContract(
    reason="not_tracked",
    when="The message exists but is not an issue this tracker owns (a bot mention by an allowed user).",
    recovery="Call slack_query to list the tracked issues; only a bot mention in a watched channel is one.",
)
NOT_IN_CHANNEL = ErrorContract(
    reason="not_in_channel",
    when="Slack answered not_in_channel: the bot is not a member of the channel.",
    recovery="Ask a human to invite the bot to the channel (/invite @bot), then call the tool again.",
)
CHANNEL_NOT_FOUND = ErrorContract(
    reason="channel_not_found",
    when="Slack answered channel_not_found: the channel does not exist or the bot cannot see it.",
    recovery="Check the channel id in the issueId, or ask the operator to fix tracker.channels.",
)
SLACK_ERROR = ErrorContract(
    reason="slack_error",
    when="Slack refused the call with an error code the message names.",
    recovery="Read the Slack error code in the message; do not repeat the same call unchanged.",
)
UNAUTHORIZED = ErrorContract(
    reason="unauthorized",
    when="Slack refused the bot token (invalid_auth, not_authed, token_revoked, ...).",
    recovery=f"Do not retry; ask the operator to check the bot token in {_TOKEN}.",
)
FORBIDDEN = ErrorContract(
    reason="forbidden",
    when="The bot token lacks an OAuth scope this call needs (missing_scope).",
    recovery="Do not retry; ask the operator to add the missing scope to the Slack app and reinstall it.",
)
RATE_LIMITED = ErrorContract(
    reason="rate_limited",
    when="Slack kept answering 429 (ratelimited) after the pack's own retries.",
    recovery="Wait the retryAfter seconds (a minute if absent), then call the tool again.",
    retryable=True,
)
UNAVAILABLE = ErrorContract(
    reason="service_unavailable",
    when="Slack failed (5xx), timed out, or could not be reached.",
    recovery="Wait a little, call slack_read_thread to see whether a write landed, then retry.",
    retryable=True,
)

#: What every tool may meet; writes and reads share them (a read never posts, so it never double-posts).
READ_ERRORS = (
    BOT_NOT_CONFIGURED,
    CHANNEL_NOT_CONFIGURED,
    ISSUE_NOT_FOUND,
    NOT_TRACKED,
    NOT_IN_CHANNEL,
    CHANNEL_NOT_FOUND,
    SLACK_ERROR,
    UNAUTHORIZED,
    FORBIDDEN,
    RATE_LIMITED,
    UNAVAILABLE,
)
WRITE_ERRORS = READ_ERRORS

_AUTH_CODES = frozenset(
    {"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive", "no_permission"}
)
_BY_TRUST = {c.reason: c for c in (BOT_NOT_CONFIGURED, CHANNEL_NOT_CONFIGURED, ISSUE_NOT_FOUND, NOT_TRACKED)}
_BY_CODE = {"not_in_channel": NOT_IN_CHANNEL, "channel_not_found": CHANNEL_NOT_FOUND, "missing_scope": FORBIDDEN}


def _contract(exc: Exception) -> tuple[ErrorContract | None, dict[str, Any]]:
    from .transport import SlackApiError, SlackTransportError  # the transport: only a failed call
    from .trust import SlackTrustError  # only a failed call

    if isinstance(exc, SlackTrustError):
        return _BY_TRUST.get(exc.reason), {}
    if isinstance(exc, SlackApiError):
        details: dict[str, Any] = {"slackError": exc.code}
        if exc.code in _AUTH_CODES:
            return UNAUTHORIZED, details
        if exc.code == "ratelimited":
            return RATE_LIMITED, details
        return _BY_CODE.get(exc.code, SLACK_ERROR), details
    if isinstance(exc, SlackTransportError):
        if exc.status == 429:
            return RATE_LIMITED, {"status": 429} | ({"retryAfter": exc.retry_after} if exc.retry_after else {})
        if exc.timed_out or exc.ambiguous or (exc.status or 0) >= 500:
            return UNAVAILABLE, {"status": exc.status} if exc.status else {}
    return None, {}


def slack_failure(exc: Exception, settings: Settings) -> ToolFailure:
    """The failure for ``exc``: the pack's message (redacted), with the reason that fits, or
    ``internal_error`` for anything unforeseen."""
    message = redact_text(error_message(exc), settings.secrets)
    contract, details = _contract(exc)
    if contract is None:
        return ToolFailure(message, reason="internal_error", retryable=False, recovery=None, details={})
    after = details.get("retryAfter")
    recovery = f"Wait {after:g} seconds, then call the tool again." if isinstance(after, float | int) else None
    return ToolFailure.of(contract, message, recovery=recovery, details=details)
