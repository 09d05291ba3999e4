"""The ``slack`` tool pack: seven tools an agent uses on the Slack thread it was dispatched for.

There is deliberately no create tool: only humans create Slack issues. The tools run in
:mod:`.handlers`, which (with the Web API transport and ``httpx``) loads on the first call, not
when the plugin registers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from lorenz import (
    Permissions,
    Settings,
    ToolContext,
    ToolResult,
    ToolSpec,
    needs_tracker_kind,
    query_input_properties,
    unsupported_tool_failure,
)

from .catalog import DEFAULT_SELECT, EXPAND, TOOL_NAMES
from .options import slack_endpoint

if TYPE_CHECKING:
    from .transport import SlackTransport

__all__ = ["SlackToolPack", "slack_tool_specs"]


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


_ISSUE_ID = _string("The Slack issue id, '<channel>:<ts>' (e.g. C0123456789:1717000000.000100).")


def slack_tool_specs() -> list[ToolSpec]:
    """The seven tools, in their published order."""
    return [
        ToolSpec(
            name="slack_update_status",
            description=(
                "Move a Slack issue to another state by posting the bot's authoritative 'status: <State>' "
                "reply in its thread; the bot's reactions on the request are only a visibility mirror. "
                "'status' must be one of the workflow's active or terminal states."
            ),
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {"issueId": _ISSUE_ID, "status": _string("The new state, e.g. 'In Progress'.")},
                "required": ["issueId", "status"],
            },
        ),
        ToolSpec(
            name="slack_comment",
            description="Reply in the issue's Slack thread (the requester is notified). Broadcasts are defused.",
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {"issueId": _ISSUE_ID, "body": _string("The reply text (Slack mrkdwn).")},
                "required": ["issueId", "body"],
            },
        ),
        ToolSpec(
            name="slack_workpad",
            description=(
                "Create or update the issue's workpad: one bot message in the thread, edited in place, "
                "holding a plan checklist and a short progress note (with Cancel/Details buttons when "
                "Socket Mode is configured). A section you omit keeps its current text."
            ),
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "issueId": _ISSUE_ID,
                    "plan": _string("The plan, e.g. a '- [ ] step' checklist."),
                    "note": _string("A short progress note."),
                },
                "required": ["issueId"],
            },
        ),
        ToolSpec(
            name="slack_read_thread",
            description=(
                "Read a Slack issue: the source message, its thread-derived status and status history, "
                "the request, the workpad, reactions, a permalink and every reply."
            ),
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {"issueId": _ISSUE_ID},
                "required": ["issueId"],
            },
        ),
        ToolSpec(
            name="slack_query",
            description=(
                "Query tracked Slack issues in the configured channels with their thread-derived state. "
                "Row fields: issueId, channel, ts, title, state, stateType, labels, text, url. Filter with "
                "'where', sort with 'order_by', page with 'limit'/'offset', project with 'select'; "
                "'expand' adds 'thread' and/or 'reactions'. 'channels' is intersected with the "
                "configured channels."
            ),
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "channels": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": (
                            "Slack channel ids to search, e.g. ['C0123456789']; kept only if configured "
                            "(default: every configured channel)."
                        ),
                    },
                    **query_input_properties(
                        f"Row fields to return (default {', '.join(DEFAULT_SELECT)}); also channel, ts, "
                        "stateType, text, url, reactions."
                    ),
                    "expand": {
                        "type": "array",
                        "items": {"type": "string", "enum": list(EXPAND)},
                        "description": "Extra data per row: 'thread' (every reply) and/or 'reactions'.",
                    },
                },
            },
        ),
        ToolSpec(
            name="slack_user_info",
            description="Profile of a Slack user ('U…' id): name, real name, display name, whether a bot.",
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {"userId": _string("The Slack user id, e.g. U0123ABC.")},
                "required": ["userId"],
            },
        ),
        ToolSpec(
            name="slack_channel_context",
            description=(
                "Channel messages around a tracked issue's source message: 'before' (default 10, "
                "counting the anchor) and 'after' (default 10), each at most 50."
            ),
            input_schema={
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "issueId": _ISSUE_ID,
                    "before": {
                        "type": "number",
                        "description": (
                            "How many messages up to and including the anchor: an integer >= 0, default 10, "
                            "capped at 50."
                        ),
                    },
                    "after": {
                        "type": "number",
                        "description": "How many messages after the anchor: an integer >= 0, default 10, capped at 50.",
                    },
                },
                "required": ["issueId"],
            },
        ),
    ]


TransportFactory = Callable[[Settings, ToolContext], "SlackTransport"]


def _web_transport(settings: Settings, context: ToolContext) -> SlackTransport:
    from .transport import SlackWebTransport

    return SlackWebTransport(settings, http=context.http)


class SlackToolPack:
    """The ``slack`` pack. It takes no ``tools.slack`` options (hence no ``validate_options``)."""

    name = "slack"

    def __init__(self, transport_factory: TransportFactory | None = None) -> None:
        self._transport_factory = transport_factory or _web_transport

    def permissions(self, settings: Settings) -> Permissions:
        """Sandboxed (``server.sandboxed_packs``): the configured Web API's host."""
        return Permissions.reaching(slack_endpoint(settings))

    def tool_specs(self, settings: Settings) -> Sequence[ToolSpec]:
        """The seven slack tools."""
        return slack_tool_specs()

    def check_settings(self, settings: Settings) -> list[str]:
        """The token and channels are the slack tracker's (its ``validate_dispatch`` checks them)."""
        return needs_tracker_kind(settings, ("slack",), ("tracker.api_key", "tracker.channels"))

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        """Run a slack tool over the Web API through the host's HTTP client."""
        if name not in TOOL_NAMES:
            return unsupported_tool_failure(name, TOOL_NAMES)
        from .handlers import execute_slack_tool

        transport = self._transport_factory(context.settings, context)
        return await execute_slack_tool(name, input, context.settings, transport)
