"""The normalised issue every tracker hands out, and the normaliser that builds it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, get_args

from attrs import field, frozen

__all__ = [
    "ISSUE_STATE_TYPES",
    "Issue",
    "IssueNormalizationError",
    "IssueRef",
    "IssueStateType",
    "TrackerComment",
    "default_state_type",
    "normalize_issue",
    "normalize_state_type",
]

IssueStateType = Literal["backlog", "unstarted", "started", "completed", "canceled", "triage"]
ISSUE_STATE_TYPES: tuple[str, ...] = get_args(IssueStateType)

_DEFAULT_STATE_TYPES: dict[str, IssueStateType] = {
    "todo": "unstarted",
    "in progress": "started",
    "done": "completed",
    "cancelled": "canceled",
    "canceled": "canceled",
    "backlog": "backlog",
    "triage": "triage",
}


def normalize_state_type(value: object) -> IssueStateType | None:
    """Trim and lower-case ``value``; return it if it is a known state type, else ``None``."""
    if not isinstance(value, str):
        return None
    candidate = value.strip().lower()
    return candidate if candidate in ISSUE_STATE_TYPES else None  # type: ignore[return-value]


def default_state_type(name: object) -> IssueStateType | None:
    """Map a common state name (``Todo``, ``In Progress``, ``Done``, …) to its state type."""
    if not isinstance(name, str):
        return None
    return _DEFAULT_STATE_TYPES.get(name.strip().lower())


def _str_tuple(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(values)


def _ref_tuple(values: Iterable[IssueRef]) -> tuple[IssueRef, ...]:
    return tuple(values)


@frozen(kw_only=True)
class IssueRef:
    """A reference to another issue (a blocker)."""

    id: str | None = None
    identifier: str | None = None
    state: str | None = None
    state_type: IssueStateType | None = None

    def to_record(self) -> dict[str, Any]:
        """The camelCase wire form, absent fields left out."""
        out: dict[str, Any] = {}
        for key, value in (
            ("id", self.id),
            ("identifier", self.identifier),
            ("state", self.state),
            ("stateType", self.state_type),
        ):
            if value is not None:
                out[key] = value
        return out


@frozen(kw_only=True)
class Issue:
    """A tracker issue, normalised. ``raw`` keeps the record it was built from."""

    id: str
    identifier: str
    title: str
    state: str
    state_type: IssueStateType
    labels: tuple[str, ...] = field(default=(), converter=_str_tuple)
    blockers: tuple[IssueRef, ...] = field(default=(), converter=_ref_tuple)
    description: str | None = None
    branch_name: str | None = None
    url: str | None = None
    priority: int | None = None
    created_at: str | None = None
    updated_at: str | None = None
    issue_event_cursor: str | None = None
    assignee_id: str | None = None
    assigned_to_worker: bool = True
    raw: Any = field(default=None, eq=False, repr=False)

    def to_record(self) -> dict[str, Any]:
        """The camelCase wire form used in tool results and query rows (``raw`` left out)."""
        return {
            "id": self.id,
            "identifier": self.identifier,
            "title": self.title,
            "description": self.description,
            "state": self.state,
            "stateType": self.state_type,
            "labels": list(self.labels),
            "blockers": [ref.to_record() for ref in self.blockers],
            "branchName": self.branch_name,
            "url": self.url,
            "priority": self.priority,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "issueEventCursor": self.issue_event_cursor,
            "assigneeId": self.assignee_id,
            "assignedToWorker": self.assigned_to_worker,
        }

    def to_query_row(self, *, with_url: bool = True) -> dict[str, Any]:
        """The row a query tool filters and returns: the fields of :meth:`to_record` the query
        language can name. ``with_url=False`` leaves ``url`` out, for issues with no web page."""
        # Built directly, not filtered out of to_record(): a board query builds one per issue.
        row = {
            "id": self.id,
            "identifier": self.identifier,
            "title": self.title,
            "description": self.description,
            "state": self.state,
            "stateType": self.state_type,
            "labels": list(self.labels),
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }
        if with_url:
            row["url"] = self.url
        return row


@frozen(kw_only=True)
class TrackerComment:
    """A comment on a tracker issue."""

    id: str
    body: str
    author: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    url: str | None = None

    def to_record(self) -> dict[str, Any]:
        """The camelCase wire form, absent optional fields left out."""
        out: dict[str, Any] = {"id": self.id, "body": self.body}
        for key, value in (
            ("author", self.author),
            ("createdAt", self.created_at),
            ("updatedAt", self.updated_at),
            ("url", self.url),
        ):
            if value is not None:
                out[key] = value
        return out


class IssueNormalizationError(ValueError):
    """A raw record could not be turned into an :class:`Issue`."""


def _required_str(record: Mapping[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        msg = f"issue.{key} is required"
        raise IssueNormalizationError(msg)
    return value


def _first_str(*values: object) -> str | None:
    for value in values:
        if isinstance(value, str):
            return value
    return None


def _opt_str(*values: object) -> str | None:
    for value in values:
        if value is not None:
            return value if isinstance(value, str) else None
    return None


def _state_of(value: object) -> tuple[object, object]:
    """``(name, type)`` of a ``state`` that is either a string or ``{name, type}``."""
    if isinstance(value, str):  # the common case, before the slower ABC check
        return value, None
    if isinstance(value, Mapping):
        return value.get("name"), value.get("type")
    return value, None


def _labels(value: object) -> list[str]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    out: list[str] = []
    for item in value:
        name = item.get("name") if isinstance(item, Mapping) else item
        if isinstance(name, str) and name.strip():
            out.append(name.strip().lower())
    return out


def _ref(value: object) -> IssueRef:
    if not isinstance(value, Mapping):
        return IssueRef()
    state_name, state_type = _state_of(value.get("state"))
    return IssueRef(
        id=_opt_str(value.get("id")),
        identifier=_opt_str(value.get("identifier")),
        state=state_name if isinstance(state_name, str) else None,
        state_type=normalize_state_type(_first_str(state_type, value.get("state_type"), value.get("stateType"))),
    )


def _blockers(record: Mapping[str, Any]) -> list[IssueRef]:
    blockers = record.get("blockers")
    if isinstance(blockers, list):
        return [_ref(item) for item in blockers]
    relations = record.get("relations")
    if not isinstance(relations, list):
        return []
    out: list[IssueRef] = []
    for relation in relations:
        if not isinstance(relation, Mapping):
            continue
        kind = relation.get("type")
        if isinstance(kind, str) and kind.strip().lower() == "blocks":
            related = relation.get("relatedIssue")
            out.append(_ref(related if related is not None else relation.get("issue")))
    return out


def normalize_issue(record: Mapping[str, Any], assignee: str | None = None) -> Issue:
    """Build an :class:`Issue` from a loose record (snake_case or camelCase keys).

    Raises :class:`IssueNormalizationError` naming the missing field
    (``issue.id is required``, ``issue.state is required``, ``issue.stateType is required``).
    """
    issue_id = _required_str(record, "id")
    identifier = _required_str(record, "identifier")
    title = _required_str(record, "title")
    state_value = record.get("state")
    state_name, state_type_value = _state_of(state_value)
    state = _first_str(state_name, record.get("state_name"), record.get("stateName"))
    if state is None or not state.strip():
        msg = "issue.state is required"
        raise IssueNormalizationError(msg)
    state_type = normalize_state_type(_first_str(state_type_value, record.get("state_type"), record.get("stateType")))
    if state_type is None:
        msg = "issue.stateType is required"
        raise IssueNormalizationError(msg)
    priority = record.get("priority")
    assignee_record = record.get("assignee")
    assignee_id = (_opt_str(assignee_record.get("id")) if isinstance(assignee_record, Mapping) else None) or _opt_str(
        record.get("assignee_id"), record.get("assigneeId")
    )
    if assignee is None or assignee == "":
        assigned = True
    elif assignee_id is None:
        assigned = False
    else:
        assigned = assignee_id.lower() == assignee.lower()
    return Issue(
        id=issue_id,
        identifier=identifier,
        title=title,
        state=state,
        state_type=state_type,
        labels=_labels(record.get("labels")),
        blockers=_blockers(record),
        description=_opt_str(record.get("description")),
        branch_name=_opt_str(record.get("branchName"), record.get("branch_name")),
        url=_opt_str(record.get("url")),
        priority=priority if type(priority) is int and 1 <= priority <= 4 else None,
        created_at=_opt_str(record.get("created_at"), record.get("createdAt")),
        updated_at=_opt_str(record.get("updated_at"), record.get("updatedAt")),
        issue_event_cursor=_opt_str(record.get("issue_event_cursor"), record.get("issueEventCursor")),
        assignee_id=assignee_id,
        assigned_to_worker=assigned,
        raw=record,
    )
