"""The demo seeder."""

from __future__ import annotations

from pathlib import Path

import pytest

from lorenz_local.seed import main, seed_board


def test_seeds_three_issues_through_the_store(tmp_path: Path) -> None:
    """Three demo issues, first BOARD-1, states Todo and In Progress."""
    issues = seed_board(tmp_path)
    assert [issue.id for issue in issues] == ["BOARD-1", "BOARD-2", "BOARD-3"]
    assert {issue.state for issue in issues} == {"Todo", "In Progress"}


def test_count_limits_the_issues(tmp_path: Path) -> None:
    """count=2 writes two files."""
    seed_board(tmp_path, 2)
    assert sorted(path.name for path in tmp_path.glob("*.md")) == ["BOARD-1.md", "BOARD-2.md"]


def test_first_issue_file_content(tmp_path: Path) -> None:
    """BOARD-1.md is the hello-world task in Todo."""
    seed_board(tmp_path)
    text = (tmp_path / "BOARD-1.md").read_text()
    assert "status: Todo" in text
    assert "# [Demo] Create hello_world.py" in text
    assert "Hello, World!" in text


def test_cli_takes_dir_count_and_prefix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m lorenz_local.seed <dir> 1 DEMO-` creates DEMO-1 and prints it."""
    assert main([str(tmp_path), "1", "DEMO-"]) == 0
    assert (tmp_path / "DEMO-1.md").exists()
    assert capsys.readouterr().out.startswith("DEMO-1\tTodo\t[Demo] Create hello_world.py")
