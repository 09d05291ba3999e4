"""Issue normalisation."""

import pytest

from lorenz import default_state_type, normalize_issue, normalize_state_type
from lorenz.issue import IssueNormalizationError

BASE = {"id": "1", "identifier": "ENG-1", "title": "Fix", "state": {"name": "Todo", "type": "unstarted"}}


@pytest.mark.parametrize("key", ["id", "identifier", "title"])
def test_required_strings(key: str) -> None:
    """A blank id, identifier or title names the missing field."""
    with pytest.raises(IssueNormalizationError, match=f"issue.{key} is required"):
        normalize_issue({**BASE, key: "  "})


def test_state_from_any_spelling() -> None:
    """The state comes from state.name, state, state_name or stateName; its type is normalised."""
    assert normalize_issue(BASE).state == "Todo"
    issue = normalize_issue({**BASE, "state": None, "state_name": "Doing", "stateType": " STARTED "})
    assert (issue.state, issue.state_type) == ("Doing", "started")


def test_missing_state_type_is_an_error() -> None:
    """An unknown state type is rejected."""
    with pytest.raises(IssueNormalizationError, match="issue.stateType is required"):
        normalize_issue({**BASE, "state": "Todo"})


def test_labels_trimmed_lowercased_not_deduplicated() -> None:
    """Labels accept strings and {name}; blanks drop; order and duplicates kept."""
    issue = normalize_issue({**BASE, "labels": [" Backend ", {"name": "URGENT"}, "", "backend", 5]})
    assert issue.labels == ("backend", "urgent", "backend")


def test_blockers_from_relations() -> None:
    """Without a blockers list, 'blocks' relations become blocker refs."""
    issue = normalize_issue(
        {
            **BASE,
            "relations": [
                {
                    "type": " Blocks ",
                    "relatedIssue": {"id": "2", "identifier": "ENG-2", "state": {"name": "Done", "type": "completed"}},
                },
                {"type": "related", "relatedIssue": {"id": "3"}},
            ],
        }
    )
    assert [ref.to_record() for ref in issue.blockers] == [
        {"id": "2", "identifier": "ENG-2", "state": "Done", "stateType": "completed"}
    ]


@pytest.mark.parametrize(("value", "expected"), [(1, 1), (4, 4), (0, None), (5, None), (True, None), (2.0, None)])
def test_priority_only_integers_one_to_four(value: object, expected: int | None) -> None:
    """Priority is kept only as an integer 1-4 (a bool is not a priority)."""
    assert normalize_issue({**BASE, "priority": value}).priority == expected


def test_assignment_rules() -> None:
    """No filter means assigned; a filter compares case-insensitively; no assignee means not assigned."""
    assert normalize_issue(BASE).assigned_to_worker is True
    assert normalize_issue({**BASE, "assignee": {"id": "U1"}}, "u1").assigned_to_worker is True
    assert normalize_issue({**BASE, "assignee": {"id": "U2"}}, "u1").assigned_to_worker is False
    assert normalize_issue(BASE, "u1").assigned_to_worker is False


def test_record_is_camel_case_and_raw_kept() -> None:
    """The wire record uses camelCase keys; raw keeps the input."""
    issue = normalize_issue({**BASE, "branch_name": "b", "created_at": "2026-01-01"})
    record = issue.to_record()
    assert record["stateType"] == "unstarted"
    assert record["branchName"] == "b"
    assert record["createdAt"] == "2026-01-01"
    assert issue.raw["branch_name"] == "b"


def test_state_type_helpers() -> None:
    """Common names map to state types; unknown ones give None."""
    assert default_state_type(" In Progress ") == "started"
    assert default_state_type("cancelled") == "canceled"
    assert default_state_type("Reviewing") is None
    assert normalize_state_type("Triage") == "triage"
    assert normalize_state_type("nope") is None


def test_query_row_holds_the_queryable_fields_in_wire_names() -> None:
    issue = normalize_issue(
        {
            "id": "1",
            "identifier": "A-1",
            "title": "T",
            "state": "Todo",
            "stateType": "unstarted",
            "url": "http://x/A-1",
            "labels": ["Bug"],
        }
    )
    row = issue.to_query_row()
    assert list(row) == [
        "id", "identifier", "title", "description", "state", "stateType", "labels", "createdAt", "updatedAt", "url",
    ]  # fmt: skip
    assert row["stateType"] == "unstarted" and row["labels"] == ["bug"] and row["url"] == "http://x/A-1"
    assert row == {key: issue.to_record()[key] for key in row}  # the record's values, under its names
    assert "url" not in issue.to_query_row(with_url=False)
