"""A loopback fake of the Jira Cloud REST v3 API (the routes and shapes lorenz-jira uses).

Stateful (issues, comments, transitions, a tiny JQL subset) and scriptable: ``script(route,
...)`` queues canned responses (a status, a JSON or raw body, headers) that a route serves
before its normal behaviour. Every request is recorded.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from attrs import define, field
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

EMAIL = "bot@example.com"
API_TOKEN = "jira-token"
CURRENT_ACCOUNT = "account-current"
CREATED = "2026-06-01T00:00:00.000+0000"

# name, target status, status category
TRANSITIONS = (("11", "To Do", "new"), ("21", "In Progress", "indeterminate"), ("31", "Done", "done"))


def adf(text: str) -> dict[str, Any]:
    """A one-paragraph ADF document."""
    return {
        "type": "doc",
        "version": 1,
        "content": [{"type": "paragraph", "content": [{"type": "text", "text": text}]}],
    }


def adf_text(doc: object) -> str:
    """The concatenated text of an ADF document (for assertions inside the fake)."""
    if isinstance(doc, dict):
        if isinstance(doc.get("text"), str):
            return str(doc["text"])
        return "\n".join(adf_text(child) for child in doc.get("content", []))
    return ""


@define
class Recorded:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any


@define
class Scripted:
    status: int = 200
    json_body: Any = None
    text: str | None = None
    headers: dict[str, str] = field(factory=dict)


class FakeJira:
    """One fake Jira site. ``base_url`` is set once the server listens."""

    def __init__(self) -> None:
        self.base_url = ""
        self.reset()
        self.app = Starlette(
            routes=[
                Route("/rest/api/3/search/jql", self._search, methods=["POST"]),
                Route("/rest/api/3/myself", self._myself, methods=["GET"]),
                Route("/rest/api/3/issue", self._create, methods=["POST"]),
                Route("/rest/api/3/issue/{key}", self._read, methods=["GET"]),
                Route("/rest/api/3/issue/{key}/transitions", self._transitions, methods=["GET", "POST"]),
                Route("/rest/api/3/issue/{key}/comment", self._comments, methods=["GET", "POST"]),
                Route("/rest/api/3/issue/{key}/comment/{comment_id}", self._update_comment, methods=["PUT"]),
            ]
        )

    def reset(self) -> None:
        self.issues: dict[str, dict[str, Any]] = {}
        self.comments: dict[str, list[dict[str, Any]]] = {}
        self.requests: list[Recorded] = []
        self.scripts: dict[str, list[Scripted]] = {}
        self.search_page_size: int | None = None
        self.comment_page_size: int | None = None
        self._sequence = 0

    # -- fixtures -------------------------------------------------------------------------------

    def add_issue(
        self,
        key: str = "ENG-1",
        *,
        issue_id: str | None = None,
        summary: str = "Fix login",
        description: str | None = "Fix the thing",
        status: str = "To Do",
        category: str = "new",
        labels: tuple[str, ...] = ("agent", "Lorenz:Backend"),
        assignee: str | None = "account-1",
        priority: str | None = "High",
        blocked_by: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        self._sequence += 1
        links = [
            {
                "type": {"name": "Blocks", "inward": "is blocked by", "outward": "blocks"},
                "inwardIssue": {
                    "id": self.issues[other]["id"],
                    "key": other,
                    "fields": {"status": self.issues[other]["fields"]["status"]},
                },
            }
            for other in blocked_by
        ]
        record = {
            "id": issue_id or str(10000 + self._sequence),
            "key": key,
            "fields": {
                "summary": summary,
                "description": adf(description) if description is not None else None,
                "status": {"name": status, "statusCategory": {"key": category}},
                "labels": list(labels),
                "issuelinks": links,
                "assignee": {"accountId": assignee, "displayName": assignee} if assignee else None,
                "priority": {"name": priority} if priority else None,
                "created": CREATED,
                "updated": CREATED,
                "project": {"key": key.split("-")[0]},
            },
        }
        self.issues[key] = record
        return record

    def add_comment(self, key: str, text: str, comment_id: str | None = None) -> dict[str, Any]:
        self._sequence += 1
        issue_id = self.issues[key]["id"]
        cid = comment_id or f"comment-{self._sequence}"
        comment = {
            "id": cid,
            "body": adf(text),
            "author": {"accountId": "account-1", "displayName": "Bot"},
            "created": CREATED,
            "updated": CREATED,
            "self": f"{self.base_url}/rest/api/3/issue/{issue_id}/comment/{cid}",
        }
        self.comments.setdefault(key, []).append(comment)
        return comment

    def script(
        self,
        route: str,
        *,
        status: int = 200,
        json_body: Any = None,
        text: str | None = None,
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """Queue a canned reply for ``route`` (search, myself, create, read, transitions, comments,
        update_comment)."""
        for _ in range(times):
            self.scripts.setdefault(route, []).append(Scripted(status, json_body, text, dict(headers or {})))

    def calls(self, method: str | None = None, path_suffix: str = "") -> list[Recorded]:
        return [r for r in self.requests if (method is None or r.method == method) and r.path.endswith(path_suffix)]

    # -- plumbing -------------------------------------------------------------------------------

    async def _enter(self, request: Request, route: str) -> Response | None:
        raw = await request.body()
        body = json.loads(raw) if raw else None
        self.requests.append(Recorded(request.method, request.url.path, request.url.query, dict(request.headers), body))
        expected = "Basic " + base64.b64encode(f"{EMAIL}:{API_TOKEN}".encode()).decode()
        if request.headers.get("authorization") != expected:
            return JSONResponse({"errorMessages": ["Client must be authenticated to access this resource."]}, 401)
        queue = self.scripts.get(route)
        if queue:
            canned = queue.pop(0)
            if canned.text is not None:
                return Response(canned.text, canned.status, headers=canned.headers, media_type="text/html")
            if canned.json_body is None:
                return Response(b"", canned.status, headers=canned.headers)
            return JSONResponse(canned.json_body, canned.status, headers=canned.headers)
        return None

    def _find(self, ref: str) -> dict[str, Any] | None:
        return self.issues.get(ref) or next((i for i in self.issues.values() if i["id"] == ref), None)

    @staticmethod
    def _missing() -> JSONResponse:
        return JSONResponse({"errorMessages": ["Issue does not exist or you do not have permission to see it."]}, 404)

    # -- JQL subset ---------------------------------------------------------------------------

    def _matches(self, issue: dict[str, Any], jql: str) -> bool:
        return all(self._clause(issue, clause.strip()) for clause in jql.split(" AND "))

    def _clause(self, issue: dict[str, Any], clause: str) -> bool:
        fields = issue["fields"]
        if clause.startswith("(") and clause.endswith(")"):
            return self._matches(issue, clause[1:-1])
        if (match := re.fullmatch(r"(\w+) in \((.*)\)", clause)) is not None:
            values = [v.replace('\\"', '"') for v in re.findall(r'"((?:[^"\\]|\\.)*)"', match.group(2))]
            actual = {
                "key": issue["key"],
                "id": issue["id"],
                "status": fields["status"]["name"],
                "project": fields["project"]["key"],
            }.get(match.group(1))
            if actual is None:
                raise ValueError(f"Field '{match.group(1)}' does not exist")
            return actual in values
        if clause == 'labels = "agent"':
            return "agent" in fields["labels"]
        if clause == "assignee = currentUser()":
            return (fields["assignee"] or {}).get("accountId") == CURRENT_ACCOUNT
        if (match := re.fullmatch(r'assignee = "(.*)"', clause)) is not None:
            return (fields["assignee"] or {}).get("accountId") == match.group(1)
        raise ValueError(f"Error in the JQL Query: unsupported clause {clause!r}")

    # -- routes ---------------------------------------------------------------------------------

    async def _search(self, request: Request) -> Response:
        if (early := await self._enter(request, "search")) is not None:
            return early
        body = self.requests[-1].body
        try:
            found = [i for i in self.issues.values() if self._matches(i, body["jql"])]
        except ValueError as exc:
            return JSONResponse({"errorMessages": [str(exc)]}, 400)
        size = self.search_page_size or int(body.get("maxResults", 50))
        start = int(str(body.get("nextPageToken", "page-0")).removeprefix("page-"))
        page: dict[str, Any] = {"issues": found[start : start + size]}
        if start + size < len(found):
            page["nextPageToken"] = f"page-{start + size}"
        return JSONResponse(page)

    async def _myself(self, request: Request) -> Response:
        if (early := await self._enter(request, "myself")) is not None:
            return early
        return JSONResponse({"accountId": CURRENT_ACCOUNT, "displayName": "Lorenz Bot"})

    async def _read(self, request: Request) -> Response:
        if (early := await self._enter(request, "read")) is not None:
            return early
        issue = self._find(request.path_params["key"])
        return JSONResponse(issue) if issue is not None else self._missing()

    async def _transitions(self, request: Request) -> Response:
        if (early := await self._enter(request, "transitions")) is not None:
            return early
        issue = self._find(request.path_params["key"])
        if issue is None:
            return self._missing()
        if request.method == "GET":
            return JSONResponse(
                {
                    "transitions": [
                        {"id": tid, "name": name, "to": {"name": name, "statusCategory": {"key": category}}}
                        for tid, name, category in TRANSITIONS
                    ]
                }
            )
        wanted = (self.requests[-1].body or {}).get("transition", {}).get("id")
        for tid, name, category in TRANSITIONS:
            if tid == wanted:
                issue["fields"]["status"] = {"name": name, "statusCategory": {"key": category}}
                return Response(b"", 204)
        return JSONResponse({"errorMessages": ["Transition id is not valid"]}, 400)

    async def _comments(self, request: Request) -> Response:
        if (early := await self._enter(request, "comments")) is not None:
            return early
        key = request.path_params["key"]
        issue = self._find(key)
        if issue is None:
            return self._missing()
        comments = self.comments.setdefault(issue["key"], [])
        if request.method == "GET":
            start = int(request.query_params.get("startAt", "0"))
            size = self.comment_page_size or int(request.query_params.get("maxResults", "50"))
            return JSONResponse(
                {
                    "comments": comments[start : start + size],
                    "startAt": start,
                    "maxResults": size,
                    "total": len(comments),
                }
            )
        self._sequence += 1
        cid = str(20000 + self._sequence)
        comment = {
            "id": cid,
            "body": self.requests[-1].body["body"],
            "author": {"accountId": CURRENT_ACCOUNT, "displayName": "Lorenz Bot"},
            "created": CREATED,
            "updated": CREATED,
            "self": f"{self.base_url}/rest/api/3/issue/{issue['id']}/comment/{cid}",
        }
        comments.append(comment)
        return JSONResponse(comment, 201)

    async def _update_comment(self, request: Request) -> Response:
        if (early := await self._enter(request, "update_comment")) is not None:
            return early
        issue = self._find(request.path_params["key"])
        if issue is None:
            return self._missing()
        for comment in self.comments.get(issue["key"], []):
            if comment["id"] == request.path_params["comment_id"]:
                comment["body"] = self.requests[-1].body["body"]
                comment["updated"] = "2026-06-02T00:00:00.000+0000"
                return JSONResponse(comment)
        return JSONResponse({"errorMessages": ["Can not find a comment for the id."]}, 404)

    async def _create(self, request: Request) -> Response:
        if (early := await self._enter(request, "create")) is not None:
            return early
        fields = self.requests[-1].body["fields"]
        project = fields["project"]["key"]
        key = f"{project}-{len([k for k in self.issues if k.startswith(project + '-')]) + 1}"
        record = self.add_issue(
            key,
            summary=fields["summary"],
            description=None,
            labels=(),
            assignee=fields.get("assignee", {}).get("accountId"),
            priority=None,
        )
        record["fields"]["description"] = fields.get("description")
        record["fields"]["issuetype"] = fields["issuetype"]
        return JSONResponse(
            {"id": record["id"], "key": key, "self": f"{self.base_url}/rest/api/3/issue/{record['id']}"}, 201
        )
