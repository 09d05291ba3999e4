"""The ``tracker:`` options both Jira kinds share, their validation, and a typed view of them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import field, frozen

from lorenz import (
    ResolveSecret,
    Settings,
    check_url,
    is_secret_key,
    reject_unknown_options,
    resolve_env_reference,
    string_list_option,
    string_option,
)

__all__ = [
    "CONFIG_ALIASES",
    "DEFAULT_ISSUE_TYPE",
    "DEFAULT_MCP_TOOLS",
    "JiraOptions",
    "McpOptions",
    "jira_options",
    "parse_jira_options",
]

CONFIG_ALIASES: Mapping[str, str] = {"base_url": "baseUrl", "project_keys": "projectKeys", "issue_type": "issueType"}
JIRA_KINDS = ("jira", "jira-mcp")
KNOWN_OPTIONS = ("baseUrl", "email", "projectKeys", "jql", "issueType", "mcp")
DEFAULT_ISSUE_TYPE = "Task"

DEFAULT_MCP_TOOLS: Mapping[str, str] = {
    "search": "jira_search",
    "readIssue": "jira_get_issue",
    "updateStatus": "jira_transition_issue",
    "listComments": "jira_get_comments",
    "comment": "jira_add_comment",
    "updateComment": "jira_update_comment",
    "createIssue": "jira_create_issue",
}
# `mcp` is nested, so the core's alias pass never reaches these keys.
_MCP_TOOL_ALIASES: Mapping[str, str] = {
    "read_issue": "readIssue",
    "update_status": "updateStatus",
    "list_comments": "listComments",
    "update_comment": "updateComment",
    "create_issue": "createIssue",
}
_MCP_KEYS = ("url", "token", "headers", "tools")


def _literal(value: str | None, _fallback_env: str | None = None, /) -> str | None:
    """Secret resolution for settings built in code: the value as given."""
    return value or None


def _parse_mcp(value: object, env: Mapping[str, str], resolve_secret: ResolveSecret) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError("tracker.mcp must be a map")
    unknown = [str(key) for key in value if key not in _MCP_KEYS]
    if unknown:
        raise ValueError(f"unsupported tracker.mcp key(s): {', '.join(unknown)}")
    out: dict[str, Any] = {}
    url = value.get("url")
    if url is not None:
        if not isinstance(url, str):
            raise ValueError("tracker.mcp.url must be a string")
        if resolved := resolve_env_reference(url, env):
            out["url"] = check_url(resolved, "tracker.mcp.url")
    token = value.get("token")
    if token is not None:
        if not isinstance(token, str):
            raise ValueError("tracker.mcp.token must be a string")
        if resolved_token := resolve_secret(token, None):
            out["token"] = resolved_token
    headers = value.get("headers")
    if headers is not None:
        if not isinstance(headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
        ):
            raise ValueError("tracker.mcp.headers must be a map of strings")
        out["headers"] = dict(headers)
    tools = value.get("tools")
    if tools is not None:
        out["tools"] = _parse_mcp_tools(tools)
    return out


def _parse_mcp_tools(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ValueError("tracker.mcp.tools must be a map")
    canonical: dict[str, object] = {}
    unknown: list[str] = []
    for key, tool in value.items():
        name = _MCP_TOOL_ALIASES.get(key, key)
        if name in DEFAULT_MCP_TOOLS:
            canonical[name] = tool
        else:
            unknown.append(str(key))
    if unknown:
        raise ValueError(f"unsupported tracker.mcp.tools key(s): {', '.join(unknown)}")
    for name, tool in canonical.items():
        if not isinstance(tool, str):
            raise ValueError(f"tracker.mcp.tools.{name} must be a string")
    return {name: str(tool) for name, tool in canonical.items()}


def parse_jira_options(
    options: Mapping[str, Any],
    *,
    kind: str,
    env: Mapping[str, str],
    resolve_secret: ResolveSecret | None = None,
) -> dict[str, Any]:
    """Validate and normalise aliased provider options into the ``tracker.options`` contract.

    Only keys that resolve to a value are kept: ``baseUrl`` (default ``$JIRA_BASE_URL``),
    ``email`` (fallback ``JIRA_EMAIL``), ``projectKeys``, ``jql``, ``issueType`` and ``mcp``
    (``url``, ``token``, ``headers``, ``tools`` with canonical operation names).
    """
    resolve = resolve_secret if resolve_secret is not None else _literal
    reject_unknown_options(options, KNOWN_OPTIONS, kind)
    out: dict[str, Any] = {}
    base_url = string_option(options, "baseUrl")
    if resolved_base := resolve_env_reference(base_url if base_url is not None else "$JIRA_BASE_URL", env):
        out["baseUrl"] = check_url(resolved_base, "tracker.base_url")
    email = string_option(options, "email")
    if resolved_email := resolve(email, "JIRA_EMAIL"):
        out["email"] = resolved_email
    if (project_keys := string_list_option(options, "projectKeys")) is not None:
        out["projectKeys"] = project_keys
    if (jql := string_option(options, "jql")) is not None:
        out["jql"] = jql
    if (issue_type := string_option(options, "issueType")) is not None:
        out["issueType"] = issue_type
    mcp = options.get("mcp")
    if mcp is not None:
        out["mcp"] = _parse_mcp(mcp, env, resolve)
    return out


@frozen(kw_only=True)
class McpOptions:
    """``tracker.mcp``: where the remote Jira MCP server is and which tools to call."""

    url: str | None = None
    token: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(factory=dict)
    tools: Mapping[str, str] = field(factory=dict)

    def tool_name(self, operation: str) -> str:
        """The configured tool for ``operation`` (its default when unset); blank raises."""
        name = self.tools.get(operation, DEFAULT_MCP_TOOLS[operation])
        if not name.strip():
            from .backend import JiraError  # the transports' module: not loaded to register the tracker

            raise JiraError(f"tracker.mcp.tools.{operation} is required")
        return name


@frozen(kw_only=True)
class JiraOptions:
    """The normalised Jira options plus the core tracker keys the Jira clients read."""

    base_url: str | None = None
    email: str | None = field(default=None, repr=False)
    api_key: str | None = field(default=None, repr=False)
    project_keys: tuple[str, ...] = ()
    jql: str | None = None
    issue_type: str = DEFAULT_ISSUE_TYPE
    assignee: str | None = None
    active_states: tuple[str, ...] = ()
    mcp: McpOptions = field(factory=McpOptions)

    @property
    def api_base(self) -> str | None:
        """``base_url`` without trailing slashes (``None`` when unset)."""
        return self.base_url.rstrip("/") if self.base_url else None

    def credentials(self) -> tuple[str, ...]:
        """Values that must never appear in a diagnostic.

        Every ``tracker.mcp.headers`` value counts (custom headers usually carry site keys or
        tokens); for a secret-looking name (``Authorization``, ``x-api-key``…) also the credential
        after a scheme word (``Bearer abc`` → ``abc``).
        """
        values: list[str | None] = [self.api_key, self.email, self.mcp.token]
        for name, value in self.mcp.headers.items():
            values.append(value)
            scheme_and_credential = value.split(None, 1)
            if is_secret_key(name) and len(scheme_and_credential) == 2:
                values.append(scheme_and_credential[1].strip())
        return tuple(v for v in values if v)


def jira_options(settings: Settings) -> JiraOptions:
    """The typed options of ``settings``.

    Options from the workflow parser are already normalised; options built in code are
    normalised here with an empty environment (values kept literally).
    """
    kind = settings.tracker.kind or "jira"
    # Mounted over another tracker (`tools: {jira: {}}`), the pack has no Jira options of its own.
    raw = settings.tracker.options if kind in JIRA_KINDS else {}
    normalized = parse_jira_options(raw, kind=kind, env={}, resolve_secret=_literal)
    mcp = normalized.get("mcp", {})
    return JiraOptions(
        base_url=normalized.get("baseUrl"),
        email=normalized.get("email"),
        api_key=settings.tracker.api_key or None,
        project_keys=tuple(normalized.get("projectKeys") or ()),
        jql=normalized.get("jql"),
        issue_type=normalized.get("issueType") or DEFAULT_ISSUE_TYPE,
        assignee=settings.tracker.assignee,
        active_states=tuple(settings.tracker.active_states),
        mcp=McpOptions(
            url=mcp.get("url"),
            token=mcp.get("token"),
            headers=dict(mcp.get("headers", {})),
            tools=dict(mcp.get("tools", {})),
        ),
    )
