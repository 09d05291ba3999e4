"""The ``slack`` pack's tools by name, and the query's row fields: shared by the tool specs and
the handlers, which the pack loads only on its first call."""

from __future__ import annotations

__all__ = ["DEFAULT_SELECT", "EXPAND", "TOOL_NAMES"]

TOOL_NAMES = (
    "slack_update_status",
    "slack_comment",
    "slack_workpad",
    "slack_read_thread",
    "slack_query",
    "slack_user_info",
    "slack_channel_context",
)
DEFAULT_SELECT = ("issueId", "title", "state", "labels")
#: What ``slack_query``'s ``expand`` may add to each row.
EXPAND = ("thread", "reactions")
