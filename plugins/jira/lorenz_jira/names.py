"""The ``jira`` pack's constants that registration and listing need without loading the kit."""

from __future__ import annotations

__all__ = ["DEFAULT_SELECT", "JIRA_TOOL_NAMES"]

#: The fields ``jira_query`` returns when no ``select`` is given.
DEFAULT_SELECT: tuple[str, ...] = ("id", "identifier", "title", "state", "stateType", "labels", "url")

#: The seven tools, in the order ``tools/list`` shows them.
JIRA_TOOL_NAMES: tuple[str, ...] = (
    "jira_read_issue",
    "jira_query",
    "jira_update_status",
    "jira_list_comments",
    "jira_comment",
    "jira_update_comment",
    "jira_create_issue",
)
