"""Settings builders shared by the lorenz-jira tests."""

from __future__ import annotations

from typing import Any

from jira_fake_rest import API_TOKEN, EMAIL

from lorenz import Settings, TrackerSettings


def rest_settings(base_url: str, *, assignee: str | None = None, **options: Any) -> Settings:
    """``kind: jira`` settings pointing at ``base_url`` with the fake's credentials."""
    return Settings(
        tracker=TrackerSettings(
            kind="jira",
            api_key=API_TOKEN,
            assignee=assignee,
            active_states=("To Do",),
            options={"baseUrl": base_url, "email": EMAIL, "projectKeys": ["ENG"], **options},
        ),
        secrets=frozenset({API_TOKEN, EMAIL}),
    )


def mcp_settings(url: str, *, token: str = "mcp-token", assignee: str | None = None, **mcp: Any) -> Settings:
    """``kind: jira-mcp`` settings pointing at the fake MCP server."""
    return Settings(
        tracker=TrackerSettings(
            kind="jira-mcp",
            assignee=assignee,
            active_states=("To Do",),
            options={"projectKeys": ["ENG"], "mcp": {"url": url, "token": token, **mcp}},
        ),
        secrets=frozenset({token}),
    )
