"""The ``jira`` tool pack: seven ``jira_*`` tools over whichever Jira transport is configured."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lorenz import (
    ArgumentError,
    Issue,
    Permissions,
    Settings,
    ToolContext,
    ToolResult,
    ToolSpec,
    apply_query,
    as_arguments,
    check_list_argument,
    error_message,
    needs_tracker_kind,
    optional_str,
    parse_query_spec,
    parse_select,
    pick_fields,
    query_input_properties,
    redact_text,
    require_str,
    tool_failure,
    tool_success,
    unsupported_tool_failure,
)

from .backend import JiraBackend, NewIssue
from .options import JIRA_KINDS, jira_options
from .tracker import JIRA_PACK, open_backend

__all__ = ["DEFAULT_SELECT", "JIRA_TOOL_NAMES", "JiraToolPack"]

#: The fields ``jira_query`` returns when no ``select`` is given.
DEFAULT_SELECT: tuple[str, ...] = ("id", "identifier", "title", "state", "stateType", "labels", "url")


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _strings(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


def _schema(properties: Mapping[str, Any], required: Sequence[str]) -> dict[str, Any]:
    """A strict inputSchema: a key the tool does not take is refused, not silently dropped."""
    schema: dict[str, Any] = {"type": "object", "additionalProperties": False, "properties": dict(properties)}
    if required:
        schema["required"] = list(required)
    return schema


_READ_ONLY = {"readOnlyHint": True}
_ISSUE_ID = _string("Jira issue key such as ENG-123, or numeric issue id such as 10001.")
_BODY = _string("Comment text in Markdown.")

_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="jira_read_issue",
        description="Read one issue from the configured tracker. Args: issueId (tracker id or key when supported).",
        input_schema=_schema({"issueId": _ISSUE_ID}, ["issueId"]),
        annotations=_READ_ONLY,
    ),
    ToolSpec(
        name="jira_query",
        description=(
            "Query issues from the configured tracker. Args: states?, issueIds?, query? (native query string, "
            "for trackers with a query language), where?, select?, order_by?, limit?, offset?."
        ),
        input_schema=_schema(
            {
                "states": _strings(
                    "Status names, e.g. ['To Do', 'In Progress']: issues in the configured scope (tracker jql or "
                    "projects) with one of them. Used when neither issueIds nor query is given."
                ),
                "issueIds": _strings("Issue keys (ENG-123) or numeric ids to fetch; overrides query and states."),
                "query": _string(
                    "JQL query string, e.g. 'project = ENG AND status = \"In Progress\"' (alias: jql); "
                    "overrides states."
                ),
                "jql": _string("Alias of query, used when query is not given."),
                **query_input_properties(
                    f"Row fields to return (default {', '.join(DEFAULT_SELECT)}); also description, createdAt, "
                    "updatedAt."
                ),
            },
            [],
        ),
        annotations=_READ_ONLY,
    ),
    ToolSpec(
        name="jira_update_status",
        description="Move an issue in the configured tracker to a new status. Args: issueId, status.",
        input_schema=_schema(
            {
                "issueId": _ISSUE_ID,
                "status": _string(
                    "Target status as the name of an available workflow transition (usually the status name, "
                    "e.g. 'In Progress'); case-insensitive."
                ),
            },
            ["issueId", "status"],
        ),
    ),
    ToolSpec(
        name="jira_list_comments",
        description="List comments on an issue in the configured tracker. Args: issueId.",
        input_schema=_schema({"issueId": _ISSUE_ID}, ["issueId"]),
        annotations=_READ_ONLY,
    ),
    ToolSpec(
        name="jira_comment",
        description=(
            "Add a comment to an issue in the configured tracker. Args: issueId, body. "
            "Returns the created comment when the provider exposes it."
        ),
        input_schema=_schema({"issueId": _ISSUE_ID, "body": _BODY}, ["issueId", "body"]),
    ),
    ToolSpec(
        name="jira_update_comment",
        description="Update a comment on an issue in the configured tracker. Args: issueId, commentId, body.",
        input_schema=_schema(
            {
                "issueId": _ISSUE_ID,
                "commentId": _string("Jira comment id, e.g. 10042: a comment's id from jira_list_comments."),
                "body": _string("The comment's new full text in Markdown; replaces the old text."),
            },
            ["issueId", "commentId", "body"],
        ),
    ),
    ToolSpec(
        name="jira_create_issue",
        description="Create an issue in the configured tracker. Args: title, body?, status?, assignee?.",
        input_schema=_schema(
            {
                "title": _string("Issue summary (one line)."),
                "body": _string("Issue description in Markdown; omit for none."),
                "status": _string(
                    "Status to move the new issue to, e.g. 'In Progress'; omit to keep the workflow's initial one."
                ),
                "assignee": _string(
                    "Jira accountId to assign; 'me' for the authenticated account; omit for the configured assignee."
                ),
            },
            ["title"],
        ),
    ),
)

JIRA_TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in _SPECS)


def _string_list(args: Mapping[str, Any], key: str) -> list[str] | None:
    """``args[key]`` as a list of strings (``None`` when absent), within the DSL's list bounds:
    each becomes a JQL ``in (…)`` list or, over MCP, one remote call per id."""
    value = args.get(key)
    if value is None:
        return None
    if not isinstance(value, list):
        raise ArgumentError("expected an array of strings")
    check_list_argument(key, value)
    if not all(isinstance(item, str) for item in value):
        raise ArgumentError("expected an array of strings")
    return list(value)


def _secrets(settings: Settings) -> set[str]:
    """The values to redact: the settings' secrets plus the Jira credentials when the options parse."""
    try:
        credentials = jira_options(settings).credentials()
    except Exception:  # invalid options: the failure being reported is usually this very error
        credentials = (settings.tracker.api_key,) if settings.tracker.api_key else ()
    return set(settings.secrets) | set(credentials)


class JiraToolPack:
    """Pack ``jira``: read, query, move, comment on and create issues. Takes no ``tools.jira`` keys."""

    name = JIRA_PACK

    def tool_specs(self, settings: Settings) -> list[ToolSpec]:
        """The seven tools, always, in a fixed order."""
        return list(_SPECS)

    def permissions(self, settings: Settings) -> Permissions:
        """Sandboxed (``server.sandboxed_packs``): the configured site and remote MCP server."""
        options = jira_options(settings)
        return Permissions.reaching(options.base_url, options.mcp.url)

    def check_settings(self, settings: Settings) -> list[str]:
        """The site and credentials are the Jira tracker's (its ``validate_dispatch`` checks them)."""
        return needs_tracker_kind(settings, JIRA_KINDS, ("tracker.base_url", "tracker.email", "tracker.api_key"))

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> ToolResult:
        """Run one ``jira_*`` tool; every failure is a redacted ``tool_failure``."""
        if name not in JIRA_TOOL_NAMES:
            return unsupported_tool_failure(name, JIRA_TOOL_NAMES)
        args = as_arguments(input)
        settings = context.settings
        try:
            return await self._run(name, args, settings, lambda: open_backend(settings, context.http))
        except Exception as exc:
            return tool_failure(redact_text(error_message(exc), _secrets(settings)))

    async def _run(
        self, name: str, args: Mapping[str, Any], settings: Settings, backend: Callable[[], JiraBackend]
    ) -> ToolResult:
        # Every argument is checked before `backend()` builds a client or touches the network.
        if name == "jira_read_issue":
            key = require_str(args, "issueId")
            return tool_success({"issue": (await backend().read_issue(key)).to_record()})
        if name == "jira_query":
            return await self._query(args, settings, backend)
        if name == "jira_update_status":
            key, status = require_str(args, "issueId"), require_str(args, "status")
            return tool_success({"issue": (await backend().update_issue_status(key, status)).to_record()})
        if name == "jira_list_comments":
            key = require_str(args, "issueId")
            comments = await backend().list_comments(key)
            return tool_success({"comments": [comment.to_record() for comment in comments]})
        if name == "jira_comment":
            key, body = require_str(args, "issueId"), require_str(args, "body")
            comment = await backend().add_comment(key, body)
            return tool_success({"ok": True} if comment is None else {"ok": True, "comment": comment.to_record()})
        if name == "jira_update_comment":
            key, comment_id = require_str(args, "issueId"), require_str(args, "commentId")
            body = require_str(args, "body")
            updated = await backend().update_comment(key, comment_id, body)
            return tool_success({"comment": updated.to_record()})
        new = NewIssue(
            title=require_str(args, "title"),
            body=optional_str(args, "body"),
            status=optional_str(args, "status"),
            assignee=optional_str(args, "assignee"),
        )
        return tool_success({"issue": (await backend().create_issue(new)).to_record()})

    async def _query(
        self, args: Mapping[str, Any], settings: Settings, backend: Callable[[], JiraBackend]
    ) -> ToolResult:
        """``issueIds`` → by ids; ``query``/``jql`` → search; ``states`` → by states; else candidates."""
        selected = parse_select(args.get("select"))
        select = list(DEFAULT_SELECT) if selected is None else selected
        ids = _string_list(args, "issueIds")
        query, jql = args.get("query"), args.get("jql")
        native = query if isinstance(query, str) else jql if isinstance(jql, str) else ""
        searching = ids is None and bool(native.strip())
        states = _string_list(args, "states") if ids is None and not searching else None
        spec = parse_query_spec(args)
        issues: list[Issue]
        if ids is not None:
            issues = await backend().fetch_issues_by_ids(ids)
        elif searching:
            issues = await backend().search_issues(native)
        elif states is not None:
            issues = await backend().fetch_issues_by_states(states)
        elif settings.tracker.active_states:
            issues = await backend().fetch_candidate_issues()
        else:
            issues = []
        result = apply_query([issue.to_query_row() for issue in issues], spec)
        return tool_success({"rows": [pick_fields(row, select) for row in result.rows], "total": result.total})
