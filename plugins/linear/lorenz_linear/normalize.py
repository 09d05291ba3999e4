"""Linear payloads to Lorenz data: issue nodes to :class:`lorenz.Issue`, project nodes to :class:`LinearProject`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import frozen

from lorenz import Issue, IssueStateType, normalize_issue, normalize_state_type

from .connections import DegradedConnection
from .transport import logger

__all__ = [
    "LinearMalformedError",
    "LinearProject",
    "LinearState",
    "LinearTeam",
    "issue_record",
    "issue_source",
    "normalize_linear_issue",
    "project_source",
    "required_mapping",
    "required_string",
    "state_from_payload",
    "team_source",
]


class LinearMalformedError(ValueError):
    """A Linear object lacks a field Lorenz needs."""


@frozen(kw_only=True)
class LinearState:
    """A workflow state of a team; ``type`` is one of the six state types or ``None``."""

    id: str
    name: str
    type: IssueStateType | None


@frozen(kw_only=True)
class LinearTeam:
    id: str
    key: str
    name: str
    states: tuple[LinearState, ...] = ()


@frozen(kw_only=True)
class LinearProject:
    """A project with all its teams and their states; ``degraded_connections`` lists what could not be
    completed."""

    id: str
    name: str
    slug_id: str
    teams: tuple[LinearTeam, ...] = ()
    degraded_connections: tuple[DegradedConnection, ...] = ()


def required_mapping(value: object) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        msg = "expected Linear object"
        raise LinearMalformedError(msg)
    return value


def required_string(value: Mapping[str, Any], key: str) -> str:
    item = value.get(key)
    if not isinstance(item, str):
        msg = f"missing Linear field: {key}"
        raise LinearMalformedError(msg)
    return item


def state_from_payload(value: object) -> LinearState:
    node = required_mapping(value)
    return LinearState(
        id=required_string(node, "id"),
        name=required_string(node, "name"),
        type=normalize_state_type(node.get("type")),
    )


def issue_source(node: Mapping[str, Any]) -> str:
    return f"issue {node.get('identifier')} ({node.get('id')})"


def project_source(node: Mapping[str, Any]) -> str:
    return f"project {node.get('slugId')} ({node.get('id')})"


def team_source(node: Mapping[str, Any]) -> str:
    return f"team {node.get('key')} ({node.get('id')})"


def issue_record(
    node: Mapping[str, Any],
    *,
    labels: Sequence[Any],
    relations: Sequence[Any],
    degraded: Sequence[DegradedConnection] = (),
) -> dict[str, Any]:
    """The normaliser's input for a Linear issue node whose nested connections are complete.

    Labels become their lower-cased names; relations stay whole (blockers are the ``blocks`` ones).
    """
    state = node.get("state")
    assignee = node.get("assignee")
    record: dict[str, Any] = dict(node)
    record.update(
        state_type=state.get("type") if isinstance(state, Mapping) else None,
        branch_name=node.get("branchName"),
        assignee_id=assignee.get("id") if isinstance(assignee, Mapping) else None,
        labels=[
            label["name"].lower()
            for label in labels
            if isinstance(label, Mapping) and isinstance(label.get("name"), str)
        ],
        relations=[relation for relation in relations if isinstance(relation, Mapping)],
        created_at=node.get("createdAt"),
        updated_at=node.get("updatedAt"),
    )
    if degraded:
        record["linear_degraded_connections"] = [entry.to_record() for entry in degraded]
    return record


def normalize_linear_issue(record: Mapping[str, Any], assignee: str | None) -> Issue | None:
    """The issue, or ``None`` (logged) when the record cannot be normalised: one bad node never sinks a poll."""
    try:
        return normalize_issue(record, assignee)
    except ValueError as exc:  # lorenz.issue's IssueNormalizationError
        logger.warning("linear issue dropped: %s identifier=%s", exc, record.get("identifier"))
        return None
