"""A Linear project's structure: its teams and each team's workflow states, every connection completed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import Any

from . import queries
from .connections import PaginationLimits, complete_connection, connection_nodes
from .normalize import (
    LinearProject,
    LinearTeam,
    project_source,
    required_mapping,
    required_string,
    state_from_payload,
    team_source,
)
from .responses import LinearApiError

__all__ = ["GraphQL", "fetch_project"]

#: Run one GraphQL operation and return its ``data`` (:meth:`.client.LinearClient.graphql`).
GraphQL = Callable[[str, Mapping[str, Any] | None], Awaitable[Mapping[str, Any]]]


async def _nested(graphql: GraphQL, query: str, owner: str, key: str, owner_id: str, after: str) -> object:
    data = await graphql(query, {"id": owner_id, "first": queries.CONNECTION_PAGE_SIZE, "after": after})
    parent = data.get(owner)
    return parent.get(key) if isinstance(parent, Mapping) else None


async def fetch_project(
    graphql: GraphQL, slug: str, *, limits: PaginationLimits, secrets: frozenset[str]
) -> LinearProject:
    """The project ``slug`` names, with every team and each team's states (connections completed)."""
    data = await graphql(queries.PROJECT, {"slug": slug})
    nodes = connection_nodes(data.get("projects")) or []
    if not nodes:
        msg = f"linear project not found: {slug}"
        raise LinearApiError(msg)
    node = required_mapping(nodes[0])
    project_id = required_string(node, "id")
    team_nodes, teams_degraded = await complete_connection(
        node.get("teams"),
        source=project_source(node),
        connection="project.teams",
        fetch_page=partial(_nested, graphql, queries.PROJECT_TEAMS, "project", "teams", project_id),
        limits=limits,
        secrets=secrets,
    )
    degraded = [teams_degraded] if teams_degraded is not None else []
    teams: list[LinearTeam] = []
    for team_node in team_nodes:
        team = required_mapping(team_node)
        team_id = required_string(team, "id")
        state_nodes, states_degraded = await complete_connection(
            team.get("states"),
            source=team_source(team),
            connection="project.team.states",
            fetch_page=partial(_nested, graphql, queries.TEAM_STATES, "team", "states", team_id),
            limits=limits,
            secrets=secrets,
        )
        if states_degraded is not None:
            degraded.append(states_degraded)
        teams.append(
            LinearTeam(
                id=team_id,
                key=required_string(team, "key"),
                name=required_string(team, "name"),
                states=tuple(state_from_payload(state) for state in state_nodes),
            )
        )
    return LinearProject(
        id=project_id,
        name=required_string(node, "name"),
        slug_id=required_string(node, "slugId"),
        teams=tuple(teams),
        degraded_connections=tuple(degraded),
    )
