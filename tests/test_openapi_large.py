"""A large, real-shaped API (tests/fixtures/openapi/github_like.py: some 300 operations in the shape
of GitHub's description) through ``lorenz new-pack --from-openapi``: mirrored whole on request it
generates one tool per operation with unique, valid names, lints and formats clean with nothing
excluded, passes ``lorenz lint``, and its catalog stays searchable; curated by tag it also passes
mypy --strict. Generation time and tool count are measured by bench/openapi_generate.py."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from lorenz.authoring.lint import lint_path
from lorenz.authoring.openapi import OpenAPIError, Selection, new_openapi_pack
from lorenz.authoring.openapi.names import MAX_TOOL_NAME
from lorenz.cli import main
from lorenz.toolsearch.index import ToolIndex

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("openapi-large")]


def _github_like() -> ModuleType:
    path = Path(__file__).parent / "fixtures" / "openapi" / "github_like.py"
    spec = importlib.util.spec_from_file_location("github_like", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def document() -> dict[str, object]:
    made: dict[str, object] = _github_like().document()
    return made


@pytest.fixture(scope="module")
def spec(document: dict[str, object], tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("github") / "github.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def whole(spec: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, ModuleType]]:
    """Every operation of the document (deprecated ones aside), as the pack ``gh``."""
    project = tmp_path_factory.mktemp("whole") / "lorenz-gh"
    new_openapi_pack("gh", str(spec), project, Selection(max_tools=1000))
    sys.path.insert(0, str(project))
    try:
        yield project, importlib.import_module("lorenz_gh")
    finally:
        sys.path.remove(str(project))
        for name in [name for name in sys.modules if name.split(".")[0] == "lorenz_gh"]:
            del sys.modules[name]


def _operations(document: dict[str, object], *, deprecated: bool = False) -> list[tuple[str, dict[str, object]]]:
    paths = document["paths"]
    assert isinstance(paths, dict)
    return [
        (f"{method.upper()} {path}", op)
        for path, item in paths.items()
        for method, op in item.items()
        if deprecated or not op.get("deprecated")
    ]


def test_every_operation_is_one_tool_with_a_unique_valid_name(
    whole: tuple[Path, ModuleType], document: dict[str, object]
) -> None:
    _, module = whole
    names = [tool.name for tool in module.PACK.tools]
    assert len(_operations(document, deprecated=True)) > 290
    assert len(names) == len(_operations(document)) > 280  # the deprecated ones left out
    assert len(set(names)) == len(names)
    bad = [n for n in names if not re.fullmatch(r"gh_[a-z][a-z0-9_]*", n) or len(n) > MAX_TOOL_NAME or "__" in n]
    assert bad == []
    assert "gh_issues_list_issues" in names and "gh_teams_update_discussion_comment" in names


def test_the_whole_api_checks_clean(whole: tuple[Path, ModuleType]) -> None:
    """ruff check and ruff format --check with nothing excluded, and `lorenz lint` without a finding."""
    project, _ = whole
    pyproject = (project / "pyproject.toml").read_text(encoding="utf-8")
    ruff = pyproject.split("[tool.ruff", 1)[1]  # the sdist leaves out the wheelhouse: no ruff setting
    assert "exclude" not in ruff.replace('extend-exclude = [".nox"]', "") and "ignore" not in ruff
    for command in (["ruff", "check", "."], ["ruff", "format", "--check", "."]):
        result = subprocess.run(
            [sys.executable, "-m", *command], cwd=project, capture_output=True, text=True, timeout=300
        )
        assert result.returncode == 0, result.stdout + result.stderr
    assert lint_path(project).diagnostics == ()


def test_the_catalog_stays_searchable(whole: tuple[Path, ModuleType]) -> None:
    """An agent's need, phrased as an agent would, finds the tool among the first three of ~290."""
    _, module = whole
    specs = [tool.spec() for tool in module.PACK.tools]
    index = ToolIndex(specs)
    allowed = {spec.name for spec in specs}
    needs = {
        "list the issues of a repository": "gh_issues_list_issues",
        "create a review on a pull request": "gh_pulls_create_review",
        "delete a webhook from a repository": "gh_repos_delete_webhook",
        "add a reaction to an issue comment": "gh_reactions_create_reaction",
        "who follows this user": "gh_users_list_followers",
        "update a comment in a team discussion": "gh_teams_update_discussion_comment",
        "list the releases": "gh_repos_list_releases",
    }
    for need, tool in needs.items():
        found = [hit.spec.name for hit in index.search(need, allowed=allowed, limit=3)]
        assert tool in found, (need, found)


def test_nested_objects_and_the_cycle_become_classes(whole: tuple[Path, ModuleType]) -> None:
    """Shared components are one class each (``simple-user`` → SimpleUser); a team's parent team is
    spelled out once, then an open object; keys such as ``+1`` keep their wire name."""
    project, module = whole
    generated = (project / "lorenz_gh" / "generated.py").read_text(encoding="utf-8")
    assert generated.count("\nclass SimpleUser:") == 1
    assert generated.count("\nclass Repository:") == 1
    team = next(t for t in module.PACK.tools if t.name == "gh_teams_get_team").spec().output_schema
    parent = team["properties"]["parent"]
    assert parent["type"] == ["object", "null"] and parent["required"] == ["id", "name", "slug"]
    assert parent["properties"]["parent"] == {
        "type": ["object", "null"],
        "description": "A team (recursive: not spelled out again here).",
    }
    assert parent["properties"]["members"]["items"]["required"] == ["login", "id", "type"]
    issue = next(t for t in module.PACK.tools if t.name == "gh_issues_get_issue").spec().output_schema
    reactions = issue["properties"]["reactions"]["properties"]
    assert {"+1", "-1", "total_count"} <= set(reactions)


def test_curated_by_tag_passes_mypy(spec: Path, tmp_path: Path) -> None:
    """Without a selection the command refuses, listing the operations by tag; with tags chosen
    it writes only those, and the project passes mypy --strict as generated."""
    with pytest.raises(OpenAPIError, match=r"the document has \d+ operations") as caught:
        new_openapi_pack("gh", str(spec), tmp_path / "refused")
    assert "  issues (" in str(caught.value) and "  pulls (" in str(caught.value)
    project = tmp_path / "lorenz-ghc"
    assert (
        main(["new-pack", "ghc", "--from-openapi", str(spec), "--include", "issues,pulls", "--dir", str(project)]) == 0
    )
    generated = (project / "lorenz_ghc" / "generated.py").read_text(encoding="utf-8")
    chosen = [op for _, op in _operations(json.loads(spec.read_text("utf-8"))) if op["tags"][0] in ("issues", "pulls")]
    assert generated.count("\n# -- tool ") == len(chosen) > 30
    assert "ghc_repos_" not in generated
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "lorenz_ghc"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
