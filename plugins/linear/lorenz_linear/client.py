"""The runtime client of the ``linear`` tracker: GraphQL over the host's httpx client."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping, Sequence
from functools import partial
from typing import Any

import httpx

from lorenz import (
    Issue,
    PaginationGuard,
    RetryPolicy,
    Settings,
    error_message,
    redact_text,
    report_progress,
    timeout_message,
)

from . import queries
from .connections import PaginationLimits, complete_connection, connection_nodes
from .normalize import (
    LinearProject,
    issue_record,
    issue_source,
    normalize_linear_issue,
    required_string,
)
from .options import SELECTOR_REQUIRED, linear_endpoint, linear_tracker_options
from .projects import fetch_project
from .responses import LinearApiError, response_data
from .transport import LINEAR_RETRY_POLICY, Clock, GraphQLRequest, Sleep, logger, post_graphql, secrets_with

__all__ = ["LinearApiError", "LinearClient"]

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)
_POLL_PAGE_SIZE = 50
_IDS_BATCH_SIZE = 50
_LABEL_PROJECTS_PAGE_SIZE = 100


def _page_info(connection: object) -> Mapping[str, Any]:
    info = connection.get("pageInfo") if isinstance(connection, Mapping) else None
    return info if isinstance(info, Mapping) else {}


class LinearClient:
    """Polls a Linear workspace for the issues of the configured projects.

    Every request goes through ``http`` (the host's client; a short-lived one when ``None``) with the
    core's retry policy. ``sleep``/``now`` feed the retry loop and ``limits`` every paging loop; tests
    inject them.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        http: httpx.AsyncClient | None = None,
        policy: RetryPolicy = LINEAR_RETRY_POLICY,
        sleep: Sleep | None = None,
        now: Clock | None = None,
        limits: PaginationLimits = PaginationLimits(),  # noqa: B008  (frozen, shared safely)
    ) -> None:
        self.settings = settings
        self._http = http
        self._policy = policy
        self._sleep = sleep
        self._now = now
        self._limits = limits
        self._options = linear_tracker_options(settings)
        self._api_key = settings.tracker.api_key or None
        self._endpoint = linear_endpoint(settings)
        self._secrets = secrets_with(settings.secrets, self._api_key)
        # Resolved once and cached; a failure is not cached, so the next poll retries.
        self._project_slugs: list[str] | None = None
        self._assignee: tuple[str | None] | None = None

    # -- transport --------------------------------------------------------------------------

    async def graphql(self, query: str, variables: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
        """Run one operation and return its ``data``; raise :class:`LinearApiError` on any failure."""
        if not self._api_key:
            msg = "missing Linear API key"
            raise LinearApiError(msg)
        request = GraphQLRequest(
            endpoint=self._endpoint,
            api_key=self._api_key,
            query=query,
            variables=variables or {},
            secrets=self._secrets,
        )
        try:
            response = await post_graphql(self._http, request, policy=self._policy, sleep=self._sleep, now=self._now)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            message = redact_text(timeout_message(exc, "linear") or error_message(exc), self._secrets)
            logger.error("Linear GraphQL request failed: %s operation=%s", message, request.operation)
            raise LinearApiError(message) from None
        return response_data(response, request)

    def _guard(self, resource: str) -> PaginationGuard:
        return self._limits.guard("linear", resource)

    # -- lookups ----------------------------------------------------------------------------

    async def viewer(self) -> Mapping[str, Any]:
        """The authenticated user: ``{id, name, email}``."""
        data = await self.graphql(queries.VIEWER)
        viewer = data.get("viewer")
        if not isinstance(viewer, Mapping):
            msg = "linear_unknown_payload"
            raise LinearApiError(msg)
        return viewer

    async def resolve_project_slugs(self) -> list[str]:
        """The project slugs to poll: ``project_slugs``, else the projects carrying ``project_labels``,
        else ``[project_slug]``. Cached after the first success."""
        if self._project_slugs is None:
            options = self._options
            if options.project_slugs:
                slugs = list(options.project_slugs)
            elif options.project_labels:
                slugs = await self._slugs_for_labels(list(options.project_labels))
            elif options.project_slug:
                slugs = [options.project_slug]
            else:
                raise LinearApiError(SELECTOR_REQUIRED)
            self._project_slugs = slugs
        return list(self._project_slugs)

    async def _pages(
        self, resource: str, query: str, key: str, variables: Mapping[str, Any], page_size: int
    ) -> AsyncIterator[list[Any]]:
        """The node lists of a cursor-paged connection ``data[key]``, page by page, under the guard."""
        guard = self._guard(resource)
        after: str | None = None
        read = 0
        while True:
            data = await self.graphql(query, {**variables, "first": page_size, "after": after})
            connection = data.get(key)
            nodes = connection_nodes(connection)
            if nodes is None:
                msg = "linear_unknown_payload"
                raise LinearApiError(msg)
            guard.record_page()
            guard.record_items(len(nodes))
            yield nodes
            info = _page_info(connection)
            if info.get("hasNextPage") is not True:
                return
            read += len(nodes)  # within a tool call, say how far the paging got
            await report_progress(read, None, f"{read} {resource} read so far")
            after = guard.next_cursor(info.get("endCursor"), "endCursor")

    async def _slugs_for_labels(self, labels: list[str]) -> list[str]:
        slugs: dict[str, None] = {}
        pages = self._pages(
            "projectsByLabels", queries.PROJECTS_BY_LABELS, "projects", {"labels": labels}, _LABEL_PROJECTS_PAGE_SIZE
        )
        async for nodes in pages:
            for node in nodes:
                slug = node.get("slugId") if isinstance(node, Mapping) else None
                if isinstance(slug, str) and slug:
                    slugs.setdefault(slug, None)
        if not slugs:
            msg = f"no linear projects found for labels: {', '.join(labels)}"
            raise LinearApiError(msg)
        return list(slugs)

    async def assignee_filter(self) -> str | None:
        """The user id issues must be assigned to (``me`` is the viewer), or ``None`` for no filter.

        Only ``Issue.assigned_to_worker`` depends on it; the poll itself is not narrowed.
        """
        if self._assignee is None:
            configured = (self.settings.tracker.assignee or "").strip()
            if not configured:
                value = None
            elif configured.lower() == "me":
                value = required_string(await self.viewer(), "id")
            else:
                value = configured
            self._assignee = (value,)
        return self._assignee[0]

    # -- issues -----------------------------------------------------------------------------

    async def _issue_connection(self, query: str, key: str, issue_id: str, after: str) -> object:
        data = await self.graphql(query, {"id": issue_id, "first": queries.CONNECTION_PAGE_SIZE, "after": after})
        issue = data.get("issue")
        return issue.get(key) if isinstance(issue, Mapping) else None

    async def _issue(self, node: object, assignee: str | None) -> Issue | None:
        """Complete an issue node's labels and relations, then normalise it (``None`` when malformed)."""
        if not isinstance(node, Mapping):
            return None
        issue_id = node.get("id")
        if not isinstance(issue_id, str) or not issue_id:
            return normalize_linear_issue(node, assignee)
        source = issue_source(node)
        labels, labels_degraded = await complete_connection(
            node.get("labels"),
            source=source,
            connection="issue.labels",
            fetch_page=partial(self._issue_connection, queries.ISSUE_LABELS, "labels", issue_id),
            limits=self._limits,
            secrets=self._secrets,
        )
        relations, relations_degraded = await complete_connection(
            node.get("inverseRelations"),
            source=source,
            connection="issue.inverseRelations",
            fetch_page=partial(self._issue_connection, queries.ISSUE_INVERSE_RELATIONS, "inverseRelations", issue_id),
            limits=self._limits,
            secrets=self._secrets,
        )
        degraded = [entry for entry in (labels_degraded, relations_degraded) if entry is not None]
        record = issue_record(node, labels=labels, relations=relations, degraded=degraded)
        return normalize_linear_issue(record, assignee)

    async def fetch_candidate_issues(self) -> list[Issue]:
        """The issues of the configured projects in ``tracker.active_states``."""
        return await self.fetch_issues_by_states(self.settings.tracker.active_states)

    async def fetch_issues_by_states(self, states: Sequence[object]) -> list[Issue]:
        """Every issue of the configured projects in one of ``states`` (by name), following pages."""
        names = list(dict.fromkeys(str(state) for state in states))
        if not names:
            return []
        assignee = await self.assignee_filter()
        slugs = await self.resolve_project_slugs()
        issues: list[Issue] = []
        variables = {"projectSlugs": slugs, "stateNames": names}
        async for nodes in self._pages("issues", queries.POLL, "issues", variables, _POLL_PAGE_SIZE):
            for node in nodes:
                issue = await self._issue(node, assignee)
                if issue is not None:
                    issues.append(issue)
        return issues

    async def fetch_issues_by_ids(self, ids: Sequence[str]) -> list[Issue]:
        """The issues with these ids or identifiers (``MT-9``), in the requested order; missing ones omitted.

        Ids go in batches of 50; a failing batch only raises when every id in it is a UUID. Ids still
        missing that look like identifiers are then looked up one by one.
        """
        unique = list(dict.fromkeys(str(value) for value in ids))
        if not unique:
            return []
        self._guard("issuesByIds").record_items(len(unique))
        assignee = await self.assignee_filter()
        found: dict[str, Issue] = {}
        for start in range(0, len(unique), _IDS_BATCH_SIZE):
            batch = unique[start : start + _IDS_BATCH_SIZE]
            try:
                data = await self.graphql(queries.ISSUES_BY_ID, {"ids": batch, "first": len(batch)})
            except LinearApiError:
                if all(_UUID.match(value) for value in batch):
                    raise
                continue
            for node in connection_nodes(data.get("issues")) or []:
                issue = await self._issue(node, assignee)
                if issue is not None:
                    found.setdefault(issue.id, issue)
        known = set(found) | {issue.identifier for issue in found.values()}
        for value in unique:
            if value in known or _UUID.match(value):
                continue
            try:
                data = await self.graphql(queries.ISSUE_BY_IDENTIFIER, {"id": value})
            except LinearApiError:
                continue
            issue = await self._issue(data.get("issue"), assignee)
            if issue is not None and issue.id not in found:
                found[issue.id] = issue
                known.update((issue.id, issue.identifier))
        position = {value: index for index, value in enumerate(unique)}
        return sorted(
            found.values(), key=lambda issue: position.get(issue.id, position.get(issue.identifier, len(unique)))
        )

    # -- projects ---------------------------------------------------------------------------

    async def project_by_slug(self, slug: str | None = None) -> LinearProject:
        """A project with every team and each team's states (``slug`` defaults to ``project_slug``)."""
        slug = slug or self._options.project_slug
        if not slug:
            msg = "tracker.project_slug is required"
            raise LinearApiError(msg)
        return await fetch_project(self.graphql, slug, limits=self._limits, secrets=self._secrets)

    # -- mutations (used by the runtime, not exposed as agent tools) ------------------------

    async def _mutated_issue(self, data: Mapping[str, Any], operation: str) -> Issue:
        payload = data.get(operation)
        issue_node = payload.get("issue") if isinstance(payload, Mapping) else None
        if not isinstance(payload, Mapping) or payload.get("success") is not True or issue_node is None:
            msg = f"linear {operation} failed"
            raise LinearApiError(msg)
        issue = await self._issue(issue_node, None)
        if issue is None:
            msg = f"linear {operation} returned malformed issue"
            raise LinearApiError(msg)
        return issue

    async def create_issue(
        self,
        *,
        team_id: str,
        project_id: str,
        state_id: str,
        title: str,
        description: str,
        assignee_id: str | None = None,
        priority: int | None = None,
    ) -> Issue:
        """Create an issue in a project/team/state; ``assignee_id``/``priority`` are sent only when given."""
        issue_input: dict[str, Any] = {
            "teamId": team_id,
            "projectId": project_id,
            "stateId": state_id,
            "title": title,
            "description": description,
        }
        if assignee_id is not None:
            issue_input["assigneeId"] = assignee_id
        if priority is not None:
            issue_input["priority"] = priority
        data = await self.graphql(queries.CREATE_ISSUE, {"input": issue_input})
        return await self._mutated_issue(data, "issueCreate")

    async def update_issue_state(self, issue_id: str, state_id: str) -> Issue:
        """Move an issue to another workflow state."""
        data = await self.graphql(queries.UPDATE_ISSUE, {"id": issue_id, "input": {"stateId": state_id}})
        return await self._mutated_issue(data, "issueUpdate")

    async def archive_issue(self, issue_id: str) -> None:
        """Archive an issue."""
        data = await self.graphql(queries.ARCHIVE_ISSUE, {"id": issue_id})
        payload = data.get("issueArchive")
        if not isinstance(payload, Mapping) or payload.get("success") is not True:
            msg = "linear issueArchive failed"
            raise LinearApiError(msg)
