"""The GraphQL documents the tracker client sends to Linear.

Operation names are part of the contract: logs name them and fakes dispatch on them.
"""

from __future__ import annotations

import re

__all__ = [
    "ARCHIVE_ISSUE",
    "CONNECTION_PAGE_SIZE",
    "CREATE_ISSUE",
    "ISSUES_BY_ID",
    "ISSUE_BY_IDENTIFIER",
    "ISSUE_FIELDS",
    "ISSUE_INVERSE_RELATIONS",
    "ISSUE_LABELS",
    "POLL",
    "PROJECT",
    "PROJECTS_BY_LABELS",
    "PROJECT_TEAMS",
    "TEAM_STATES",
    "UPDATE_ISSUE",
    "VIEWER",
    "operation_name",
]

#: Page size of every follow-up page of a nested connection (labels, relations, teams, states).
CONNECTION_PAGE_SIZE = 50

_PAGE_INFO = "pageInfo { hasNextPage endCursor }"
_RELATION_NODE = "type issue { id identifier state { name type } }"

ISSUE_FIELDS = (
    "id identifier title description priority state { id name type } branchName url assignee { id } "
    f"labels(first: 50) {{ nodes {{ name }} {_PAGE_INFO} }} "
    f"inverseRelations(first: 50) {{ nodes {{ {_RELATION_NODE} }} {_PAGE_INFO} }} "
    "createdAt updatedAt"
)

_STATES = f"states(first: $first) {{ nodes {{ id name type }} {_PAGE_INFO} }}"

VIEWER = "query LorenzTsViewer { viewer { id name email } }"

PROJECT = f"""query LorenzTsProject($slug: String!) {{
  projects(filter: {{slugId: {{eq: $slug}}}}, first: 1) {{
    nodes {{
      id name slugId
      teams(first: 10) {{
        nodes {{ id key name states(first: 50) {{ nodes {{ id name type }} {_PAGE_INFO} }} }}
        {_PAGE_INFO}
      }}
    }}
  }}
}}"""

PROJECT_TEAMS = f"""query LorenzTsProjectTeams($id: String!, $first: Int!, $after: String) {{
  project(id: $id) {{
    teams(first: $first, after: $after) {{ nodes {{ id key name {_STATES} }} {_PAGE_INFO} }}
  }}
}}"""

TEAM_STATES = f"""query LorenzTsTeamStates($id: String!, $first: Int!, $after: String) {{
  team(id: $id) {{ states(first: $first, after: $after) {{ nodes {{ id name type }} {_PAGE_INFO} }} }}
}}"""

POLL = f"""query LorenzTsPoll($projectSlugs: [String!]!, $stateNames: [String!]!, $first: Int!, $after: String) {{
  issues(filter: {{project: {{slugId: {{in: $projectSlugs}}}}, state: {{name: {{in: $stateNames}}}}}}, first: $first, after: $after) {{
    nodes {{ {ISSUE_FIELDS} }}
    {_PAGE_INFO}
  }}
}}"""  # noqa: E501  (the filter stays on one line so it reads like the upstream document)

ISSUES_BY_ID = f"""query LorenzTsIssuesById($ids: [ID!]!, $first: Int!) {{
  issues(filter: {{id: {{in: $ids}}}}, first: $first) {{ nodes {{ {ISSUE_FIELDS} }} }}
}}"""

ISSUE_BY_IDENTIFIER = f"""query LorenzTsIssueByIdentifier($id: String!) {{
  issue(id: $id) {{ {ISSUE_FIELDS} }}
}}"""

ISSUE_LABELS = f"""query LorenzTsIssueLabels($id: String!, $first: Int!, $after: String) {{
  issue(id: $id) {{ labels(first: $first, after: $after) {{ nodes {{ name }} {_PAGE_INFO} }} }}
}}"""

ISSUE_INVERSE_RELATIONS = f"""query LorenzTsIssueInverseRelations($id: String!, $first: Int!, $after: String) {{
  issue(id: $id) {{
    inverseRelations(first: $first, after: $after) {{ nodes {{ {_RELATION_NODE} }} {_PAGE_INFO} }}
  }}
}}"""

PROJECTS_BY_LABELS = f"""query LorenzTsProjectsByLabels($labels: [String!]!, $first: Int!, $after: String) {{
  projects(filter: {{labels: {{name: {{in: $labels}}}}}}, first: $first, after: $after) {{
    nodes {{ slugId }}
    {_PAGE_INFO}
  }}
}}"""

CREATE_ISSUE = f"""mutation LorenzTsCreateIssue($input: IssueCreateInput!) {{
  issueCreate(input: $input) {{ success issue {{ {ISSUE_FIELDS} }} }}
}}"""

UPDATE_ISSUE = f"""mutation LorenzTsUpdateIssue($id: String!, $input: IssueUpdateInput!) {{
  issueUpdate(id: $id, input: $input) {{ success issue {{ {ISSUE_FIELDS} }} }}
}}"""

ARCHIVE_ISSUE = """mutation LorenzTsArchiveIssue($id: String!) {
  issueArchive(id: $id) { success }
}"""

_OPERATION = re.compile(r"\b(?:query|mutation)\s+(\w+)")


def operation_name(document: str) -> str | None:
    """The name of the first named ``query``/``mutation`` in ``document``."""
    match = _OPERATION.search(document)
    return match.group(1) if match else None
