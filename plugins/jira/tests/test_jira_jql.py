"""JQL construction for candidates, states and ids."""

from __future__ import annotations

from lorenz_jira.jql import assignee_filter, by_ids_jql, candidate_jql, jql_string, states_jql
from lorenz_jira.options import JiraOptions


def test_string_literal_escapes_quotes_and_backslashes() -> None:
    """Quotes and backslashes are escaped inside double quotes."""
    assert jql_string('a "b" \\c') == '"a \\"b\\" \\\\c"'


def test_candidate_jql_with_project_keys_and_current_user() -> None:
    """Scope, states, ``currentUser()`` and the agent label, in order."""
    options = JiraOptions(project_keys=("ENG",), active_states=("To Do",))
    assert (
        candidate_jql(options)
        == 'project in ("ENG") AND status in ("To Do") AND assignee = currentUser() AND labels = "agent"'
    )


def test_candidate_jql_with_custom_jql_and_named_assignee() -> None:
    """Configured JQL replaces the project scope; a named assignee is quoted; ``me`` means the caller."""
    options = JiraOptions(jql="  project = OPS ", project_keys=("ENG",), active_states=(), assignee=" account-1 ")
    assert candidate_jql(options) == '(project = OPS) AND assignee = "account-1" AND labels = "agent"'
    assert assignee_filter(options) == " account-1 "
    assert assignee_filter(JiraOptions(assignee="Me")) is None
    assert "assignee = currentUser()" in candidate_jql(JiraOptions(assignee="ME"))


def test_states_jql_has_no_assignee_or_label_gate() -> None:
    """States are de-duplicated; no states means no query at all."""
    options = JiraOptions(project_keys=("ENG", "OPS"))
    assert (
        states_jql(options, ["Done", "Done", "Closed"]) == 'project in ("ENG", "OPS") AND status in ("Done", "Closed")'
    )
    assert states_jql(JiraOptions(), ["Done"]) == 'status in ("Done")'
    assert states_jql(options, []) is None


def test_by_ids_jql_picks_id_or_key() -> None:
    """All-numeric ids query ``id``, anything else ``key``; duplicates collapse."""
    assert by_ids_jql(["10001", "10002", "10001"]) == 'id in ("10001", "10002")'
    assert by_ids_jql(["ENG-1", "10002"]) == 'key in ("ENG-1", "10002")'
    assert by_ids_jql([]) is None
