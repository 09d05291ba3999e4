"""JQL for the three issue queries a tracker runs: candidates, by states and by ids."""

from __future__ import annotations

from collections.abc import Iterable

from .options import JiraOptions

__all__ = [
    "AGENT_LABEL",
    "assignee_filter",
    "by_ids_jql",
    "candidate_jql",
    "jql_string",
    "states_jql",
]

#: Only issues carrying this label are dispatched (not configurable).
AGENT_LABEL = "agent"


def jql_string(value: str) -> str:
    """``value`` as a double-quoted JQL string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _in(field: str, values: Iterable[str]) -> str:
    return f"{field} in ({', '.join(jql_string(v) for v in values)})"


def _dedupe(values: Iterable[object]) -> list[str]:
    return list(dict.fromkeys(str(v) for v in values))


def base_scope(options: JiraOptions) -> str | None:
    """``(jql)`` when configured, else ``project in (…)``, else nothing."""
    if options.jql and options.jql.strip():
        return f"({options.jql.strip()})"
    if options.project_keys:
        return _in("project", options.project_keys)
    return None


def _is_me(assignee: str | None) -> bool:
    return assignee is None or not assignee.strip() or assignee.strip().lower() == "me"


def assignee_filter(options: JiraOptions) -> str | None:
    """The assignee issues are checked against after fetching (``None``: the current user)."""
    return None if _is_me(options.assignee) else options.assignee


def candidate_jql(options: JiraOptions) -> str:
    """Scope, active states, assignee and the agent label, joined with ``AND``."""
    parts = [part for part in (base_scope(options),) if part]
    if options.active_states:
        parts.append(_in("status", options.active_states))
    if _is_me(options.assignee):
        parts.append("assignee = currentUser()")
    else:
        parts.append(f"assignee = {jql_string(str(options.assignee).strip())}")
    parts.append(f"labels = {jql_string(AGENT_LABEL)}")
    return " AND ".join(parts)


def states_jql(options: JiraOptions, states: Iterable[object]) -> str | None:
    """Scope and ``status in (…)`` (no assignee or label gate); ``None`` for no states."""
    unique = _dedupe(states)
    if not unique:
        return None
    status = _in("status", unique)
    scope = base_scope(options)
    return f"{scope} AND {status}" if scope else status


def by_ids_jql(ids: Iterable[object]) -> str | None:
    """``id in (…)`` when every id is numeric, else ``key in (…)``; ``None`` for no ids."""
    unique = _dedupe(ids)
    if not unique:
        return None
    field = "id" if all(v.isdigit() and v.isascii() for v in unique) else "key"
    return _in(field, unique)
