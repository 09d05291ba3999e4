"""The ``jira`` and ``jira-mcp`` tracker providers and their runtime client.

The transports (:mod:`.rest`, :mod:`.mcp_client`) and ``httpx`` load when a backend is opened, and
the options (:mod:`.options`) when the tracker is configured: not when the plugin registers (every
command registers it; ``lorenz plugins`` lists the trackers without paying for them).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from lorenz import Issue, Settings, TrackerContext

if TYPE_CHECKING:
    import httpx

    from .backend import JiraBackend
    from .options import JiraOptions

__all__ = ["JIRA_PACK", "JiraMcpTracker", "JiraTracker", "JiraTrackerClient", "open_backend"]

#: The pack both kinds mount.
JIRA_PACK = "jira"


def open_backend(settings: Settings, http: httpx.AsyncClient) -> JiraBackend:
    """The MCP client for ``jira-mcp`` settings, else the REST client, over ``http``."""
    from .options import jira_options

    options = jira_options(settings)
    if settings.tracker.kind == "jira-mcp":
        from .mcp_client import JiraMcpClient  # the transport: on first use, not at registration

        return JiraMcpClient(options, http, secrets=settings.secrets)
    from .rest import JiraRestClient  # the transport: on first use, not at registration

    return JiraRestClient(options, http, secrets=settings.secrets)


class JiraTrackerClient:
    """The runtime client: the host's HTTP client when given, else a short-lived one per call."""

    def __init__(self, settings: Settings, http: httpx.AsyncClient | None = None) -> None:
        self.settings = settings
        self._http = http

    @asynccontextmanager
    async def _backend(self) -> AsyncIterator[JiraBackend]:
        if self._http is not None:
            yield open_backend(self.settings, self._http)
            return
        import httpx

        from lorenz import DEFAULT_TIMEOUT  # lorenz.http: on first use, not at registration

        async with httpx.AsyncClient(timeout=DEFAULT_TIMEOUT) as http:
            yield open_backend(self.settings, http)

    async def fetch_candidate_issues(self) -> list[Issue]:
        async with self._backend() as backend:
            return await backend.fetch_candidate_issues()

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        async with self._backend() as backend:
            return await backend.fetch_issues_by_ids(ids)

    async def fetch_issues_by_states(self, states: Sequence[str]) -> list[Issue]:
        async with self._backend() as backend:
            return await backend.fetch_issues_by_states(states)


def _require_scope(options: JiraOptions) -> None:
    if not (options.jql and options.jql.strip()) and not options.project_keys:
        raise ValueError("tracker.jql or tracker.project_keys is required for jira trackers")


class JiraTracker:
    """``kind: jira``: Jira Cloud over REST v3 with Basic auth (email + API token)."""

    kind = "jira"
    env_fallbacks: Mapping[str, str] = {"api_key": "JIRA_API_KEY"}

    @property
    def config_aliases(self) -> Mapping[str, str]:
        from .options import CONFIG_ALIASES

        return CONFIG_ALIASES

    def parse_options(self, options: Mapping[str, Any], context: TrackerContext) -> dict[str, Any]:
        """Validate and normalise ``base_url``, ``email``, ``project_keys``, ``jql``, ``issue_type``, ``mcp``."""
        from .options import parse_jira_options

        return parse_jira_options(options, kind=self.kind, env=context.env, resolve_secret=context.resolve_secret)

    def validate_dispatch(self, settings: Settings) -> None:
        """Require the site, the credentials and a scope (``jql`` or ``project_keys``)."""
        from .options import jira_options

        options = jira_options(settings)
        if not options.base_url:
            raise ValueError("tracker.base_url is required for jira tracker")
        if not options.email:
            raise ValueError("tracker.email is required for jira tracker")
        if not options.api_key:
            raise ValueError("tracker.api_key is required for jira tracker")
        _require_scope(options)

    def create_client(self, settings: Settings, context: TrackerContext) -> JiraTrackerClient:
        return JiraTrackerClient(settings, context.http)

    def default_tool_packs(self, settings: Settings) -> list[str]:
        return [JIRA_PACK]

    def project_url(self, settings: Settings) -> str | None:
        """The issues page of the first project key, when the site is known."""
        from .options import jira_options

        options = jira_options(settings)
        if not options.api_base or not options.project_keys:
            return None
        return f"{options.api_base}/jira/software/c/projects/{quote(options.project_keys[0], safe='')}/issues"


class JiraMcpTracker(JiraTracker):
    """``kind: jira-mcp``: Jira through a remote MCP server (``tracker.mcp``)."""

    kind = "jira-mcp"
    env_fallbacks: Mapping[str, str] = {}

    def validate_dispatch(self, settings: Settings) -> None:
        """Require ``mcp.url`` and a scope."""
        from .options import jira_options

        options = jira_options(settings)
        if not options.mcp.url:
            raise ValueError("tracker.mcp.url is required for jira-mcp tracker")
        _require_scope(options)
