"""A loopback fake of Linear's GraphQL endpoint, served by uvicorn on 127.0.0.1:0.

It answers the tracker client's operations from in-memory issues and projects (filtering and cursor
paging like Linear does), records every request, and plays scripted responses first: a queue of
``(status, headers, body)`` entries, optionally bound to one operation, for rate limits, GraphQL
errors, non-JSON bodies and odd pages.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from typing import Any

from attrs import define, field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

_OPERATION = re.compile(r"(?:query|mutation)\s+(\w+)")


@define
class Recorded:
    """One request as the fake received it."""

    operation: str | None
    query: str
    variables: dict[str, Any]
    headers: dict[str, str]
    body: Any


@define
class Scripted:
    status: int
    body: Any
    headers: dict[str, str]
    operation: str | None


@define
class FakeIssue:
    """An issue as stored by the fake; :meth:`node` renders it like Linear's ``Issue`` type."""

    id: str
    identifier: str
    title: str
    project: str = "mono"
    state: dict[str, Any] = field(factory=lambda: {"id": "state-todo", "name": "Todo", "type": "unstarted"})
    description: str | None = None
    priority: int = 2
    labels: list[str] = field(factory=list)
    blockers: list[dict[str, Any]] = field(factory=list)
    assignee: str | None = None
    branch_name: str | None = None


@define
class FakeProject:
    id: str
    name: str
    slug_id: str
    labels: list[str] = field(factory=list)
    #: ``[{id, key, name, states: [{id, name, type}]}]``
    teams: list[dict[str, Any]] = field(factory=list)


def _page(items: list[Any], first: int, after: str | None, prefix: str) -> tuple[list[Any], dict[str, Any]]:
    """Slice ``items`` like a Relay connection; cursors are ``<prefix>-cursor-<index of the last item + 1>``."""
    start = 0
    if after:
        start = int(after.rsplit("-", 1)[1])
    chunk = items[start : start + first]
    end = start + len(chunk)
    has_next = end < len(items)
    return chunk, {"hasNextPage": has_next, "endCursor": f"{prefix}-cursor-{end}" if chunk else None}


class FakeLinear:
    """State and behaviour of the fake; :attr:`app` is the ASGI app, :attr:`url` its endpoint once served."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.url = ""
        self.app = Starlette(routes=[Route("/graphql", self._handle, methods=["POST"])])
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.requests: list[Recorded] = []
            self.scripted: list[Scripted] = []
            self.api_key: str | None = "linear-token"
            self.viewer = {"id": "viewer-1", "name": "Test", "email": "test@example.com"}
            self.issues: list[FakeIssue] = []
            self.projects: list[FakeProject] = []
            #: Caps every nested connection page (labels, relations, teams, states) to force paging.
            self.nested_page_size = 50

    # -- scripting -----------------------------------------------------------------------

    def script(
        self,
        body: Any = None,
        *,
        status: int = 200,
        headers: Mapping[str, str] | None = None,
        text: str | None = None,
        operation: str | None = None,
    ) -> None:
        """Queue one response (JSON ``body``, or raw ``text``), for ``operation`` or for any request."""
        with self._lock:
            self.scripted.append(Scripted(status, text if text is not None else body, dict(headers or {}), operation))

    def operations(self) -> list[str | None]:
        return [request.operation for request in self.requests]

    def add_issue(self, issue_id: str, identifier: str, **kwargs: Any) -> FakeIssue:
        """A realistic issue: title ``Issue <identifier>``, priority 2, Todo, label ``Lorenz:Backend``,
        blocked by ``MT-0``."""
        kwargs.setdefault("title", f"Issue {identifier}")
        kwargs.setdefault("labels", ["Lorenz:Backend"])
        kwargs.setdefault("blockers", [{"id": "id-0", "identifier": "MT-0", "state": {"name": "Done"}}])
        issue = FakeIssue(id=issue_id, identifier=identifier, **kwargs)
        with self._lock:
            self.issues.append(issue)
        return issue

    # -- rendering -----------------------------------------------------------------------

    def _connection(self, items: list[Any], first: int, after: str | None, prefix: str) -> dict[str, Any]:
        nodes, info = _page(items, min(first, self.nested_page_size), after, prefix)
        return {"nodes": nodes, "pageInfo": info}

    def _labels(self, issue: FakeIssue, first: int = 50, after: str | None = None) -> dict[str, Any]:
        return self._connection([{"name": name} for name in issue.labels], first, after, "label")

    def _relations(self, issue: FakeIssue, first: int = 50, after: str | None = None) -> dict[str, Any]:
        relations = [{"type": "blocks", "issue": blocker} for blocker in issue.blockers]
        return self._connection(relations, first, after, "relation")

    def node(self, issue: FakeIssue) -> dict[str, Any]:
        return {
            "id": issue.id,
            "identifier": issue.identifier,
            "title": issue.title,
            "description": issue.description,
            "priority": issue.priority,
            "state": dict(issue.state),
            "branchName": issue.branch_name or f"mt/{issue.identifier.lower()}",
            "url": f"https://linear.app/acme/issue/{issue.identifier}",
            "assignee": {"id": issue.assignee} if issue.assignee else None,
            "labels": self._labels(issue),
            "inverseRelations": self._relations(issue),
            "createdAt": "2026-04-01T10:00:00.000Z",
            "updatedAt": "2026-04-02T10:00:00.000Z",
        }

    def _states(self, team: Mapping[str, Any], first: int = 50, after: str | None = None) -> dict[str, Any]:
        return self._connection(list(team.get("states", [])), first, after, "state")

    def _team(self, team: Mapping[str, Any]) -> dict[str, Any]:
        return {"id": team["id"], "key": team["key"], "name": team["name"], "states": self._states(team)}

    def _teams(self, project: FakeProject, first: int, after: str | None) -> dict[str, Any]:
        nodes, info = _page(project.teams, min(first, self.nested_page_size), after, "team")
        return {"nodes": [self._team(team) for team in nodes], "pageInfo": info}

    def _find_issue(self, key: str) -> FakeIssue | None:
        return next((i for i in self.issues if key in (i.id, i.identifier)), None)

    # -- operations ----------------------------------------------------------------------

    def _answer(self, operation: str | None, query: str, variables: dict[str, Any]) -> tuple[int, Any]:
        v = variables
        if operation == "LorenzTsViewer" or (operation not in _HANDLED and "viewer" in query):
            return 200, {"data": {"viewer": dict(self.viewer)}}
        if operation == "LorenzTsPoll":
            matching = [
                i for i in self.issues if i.project in v["projectSlugs"] and i.state.get("name") in v["stateNames"]
            ]
            nodes, info = _page(matching, v["first"], v.get("after"), "issue")
            return 200, {"data": {"issues": {"nodes": [self.node(i) for i in nodes], "pageInfo": info}}}
        if operation == "LorenzTsIssuesById":
            found = [i for i in self.issues if i.id in v["ids"]][: v["first"]]
            return 200, {"data": {"issues": {"nodes": [self.node(i) for i in found]}}}
        if operation == "LorenzTsIssueByIdentifier":
            issue = self._find_issue(v["id"])
            return 200, {"data": {"issue": self.node(issue) if issue else None}}
        if operation in ("LorenzTsIssueLabels", "LorenzTsIssueInverseRelations"):
            issue = self._find_issue(v["id"])
            if issue is None:
                return 200, {"data": {"issue": None}}
            if operation == "LorenzTsIssueLabels":
                return 200, {"data": {"issue": {"labels": self._labels(issue, v["first"], v.get("after"))}}}
            relations = self._relations(issue, v["first"], v.get("after"))
            return 200, {"data": {"issue": {"inverseRelations": relations}}}
        if operation == "LorenzTsProjectsByLabels":
            labelled = [p for p in self.projects if set(p.labels) & set(v["labels"])]
            nodes, info = _page(labelled, v["first"], v.get("after"), "project")
            return 200, {"data": {"projects": {"nodes": [{"slugId": p.slug_id} for p in nodes], "pageInfo": info}}}
        if operation == "LorenzTsProject":
            projects = [p for p in self.projects if p.slug_id == v["slug"]][:1]
            nodes = [
                {"id": p.id, "name": p.name, "slugId": p.slug_id, "teams": self._teams(p, 10, None)} for p in projects
            ]
            return 200, {"data": {"projects": {"nodes": nodes}}}
        if operation == "LorenzTsProjectTeams":
            project = next((p for p in self.projects if p.id == v["id"]), None)
            teams = self._teams(project, v["first"], v.get("after")) if project else None
            return 200, {"data": {"project": {"teams": teams} if project else None}}
        if operation == "LorenzTsTeamStates":
            team = next((t for p in self.projects for t in p.teams if t["id"] == v["id"]), None)
            states = self._states(team, v["first"], v.get("after")) if team else None
            return 200, {"data": {"team": {"states": states} if team else None}}
        if operation == "LorenzTsCreateIssue":
            spec = v["input"]
            project = next((p for p in self.projects if p.id == spec["projectId"]), None)
            state = next(
                (s for p in self.projects for t in p.teams for s in t["states"] if s["id"] == spec["stateId"]),
                {"id": spec["stateId"], "name": "Todo", "type": "unstarted"},
            )
            issue = FakeIssue(
                id=f"new-{len(self.issues) + 1}",
                identifier=f"MT-{99 + len(self.issues)}",
                title=spec["title"],
                description=spec.get("description"),
                project=project.slug_id if project else "mono",
                state=dict(state),
                priority=spec.get("priority", 0),
            )
            self.issues.append(issue)
            return 200, {"data": {"issueCreate": {"success": True, "issue": self.node(issue)}}}
        if operation == "LorenzTsUpdateIssue":
            issue = self._find_issue(v["id"])
            if issue is None:
                return 200, {"data": {"issueUpdate": {"success": False, "issue": None}}}
            state_id = v["input"]["stateId"]
            issue.state = next(
                (dict(s) for p in self.projects for t in p.teams for s in t["states"] if s["id"] == state_id),
                {"id": state_id, "name": "Done", "type": "completed"},
            )
            return 200, {"data": {"issueUpdate": {"success": True, "issue": self.node(issue)}}}
        if operation == "LorenzTsArchiveIssue":
            issue = self._find_issue(v["id"])
            if issue is not None:
                self.issues.remove(issue)
            return 200, {"data": {"issueArchive": {"success": issue is not None}}}
        message = f"Unknown operation {operation or '(anonymous)'}"
        return 400, {"errors": [{"message": message, "extensions": {"code": "GRAPHQL_VALIDATION_FAILED"}}]}

    async def _handle(self, request: Request) -> Response:
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            return JSONResponse({"errors": [{"message": "Body must be JSON"}]}, status_code=400)
        query = body.get("query") if isinstance(body, dict) else None
        query = query if isinstance(query, str) else ""
        variables = body.get("variables") if isinstance(body, dict) else None
        variables = variables if isinstance(variables, dict) else {}
        match = _OPERATION.search(query)
        operation = match.group(1) if match else None
        with self._lock:
            self.requests.append(Recorded(operation, query, variables, dict(request.headers), body))
            scripted = next((s for s in self.scripted if s.operation in (None, operation)), None)
            if scripted is not None:
                self.scripted.remove(scripted)
        if scripted is not None:
            if isinstance(scripted.body, str):
                return Response(scripted.body, status_code=scripted.status, headers=scripted.headers)
            return JSONResponse(scripted.body, status_code=scripted.status, headers=scripted.headers)
        if self.api_key is not None and request.headers.get("authorization") != self.api_key:
            return JSONResponse(
                {"errors": [{"message": "Authentication required, not authenticated"}]}, status_code=401
            )
        with self._lock:
            status, answer = self._answer(operation, query, variables)
        return JSONResponse(answer, status_code=status)


_HANDLED = {
    "LorenzTsViewer",
    "LorenzTsPoll",
    "LorenzTsIssuesById",
    "LorenzTsIssueByIdentifier",
    "LorenzTsIssueLabels",
    "LorenzTsIssueInverseRelations",
    "LorenzTsProjectsByLabels",
    "LorenzTsProject",
    "LorenzTsProjectTeams",
    "LorenzTsTeamStates",
    "LorenzTsCreateIssue",
    "LorenzTsUpdateIssue",
    "LorenzTsArchiveIssue",
}


def linear_settings(
    url: str,
    *,
    api_key: str | None = "linear-token",
    options: Mapping[str, Any] | None = None,
    assignee: str | None = None,
    active_states: tuple[str, ...] = ("Todo",),
    secrets: frozenset[str] = frozenset(),
) -> Any:
    """Settings of a ``linear`` dispatch tracker pointed at ``url`` (default project slug ``mono``)."""
    from lorenz import Settings, TrackerSettings

    return Settings(
        tracker=TrackerSettings(
            kind="linear",
            endpoint=url,
            api_key=api_key,
            assignee=assignee,
            active_states=active_states,
            options=dict(options) if options is not None else {"projectSlug": "mono"},
        ),
        secrets=secrets,
    )
