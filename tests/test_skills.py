"""Packs' skills (issue 15): MCP resources and prompts for exactly the mounted packs, and an export
that de-duplicates like core.md §4.1 and never overwrites a changed file without force."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp
import pytest
from mcp_types import TextResourceContents

from lorenz.host import serve_in_thread
from lorenz.skills import export_skills, mounted_skills

pytestmark = pytest.mark.anyio

LINEAR_SKILL = Path(__file__).parents[1] / "plugins" / "linear" / "lorenz_linear" / "skills" / "lorenz-linear"


class Pack:
    def __init__(self, name: str, skills: list[Path]) -> None:
        self.name = name
        self.skills = [str(path) for path in skills]


def skill(root: Path, name: str, body: str = "Use it well.") -> Path:
    directory = root / name
    (directory / "refs").mkdir(parents=True)
    (directory / "SKILL.md").write_text(f"---\nname: {name}-skill\ndescription: About {name}.\n---\n{body}\n")
    (directory / "refs" / "notes.txt").write_text(f"notes of {name}\n")
    return directory


def test_mounted_skills_are_deduplicated_first_kept(tmp_path: Path) -> None:
    shared, b, a = skill(tmp_path, "shared"), skill(tmp_path, "b"), skill(tmp_path, "a")
    found = mounted_skills([Pack("beta", [shared, b]), Pack("alpha", [a, shared])])  # type: ignore[list-item]
    assert [s.key for s in found] == ["shared", "b", "a"]
    assert found[0].name == "shared-skill" and found[0].description == "About shared."
    assert [f.relative for f in found[0].files] == ["SKILL.md", "refs/notes.txt"]
    assert found[0].files[0].mime_type == "text/markdown"


def test_export_copies_and_never_overwrites_a_changed_file(tmp_path: Path) -> None:
    skills = mounted_skills([Pack("p", [skill(tmp_path / "src", "s")])])  # type: ignore[list-item]
    out = tmp_path / ".claude" / "skills"
    first = export_skills(skills, out)
    assert sorted(first.written) == ["s/SKILL.md", "s/refs/notes.txt"]
    assert export_skills(skills, out).unchanged == ("s/SKILL.md", "s/refs/notes.txt")
    (out / "s" / "SKILL.md").write_text("my own edits\n")
    refused = export_skills(skills, out)
    assert refused.refused == ("s/SKILL.md",) and (out / "s" / "SKILL.md").read_text() == "my own edits\n"
    forced = export_skills(skills, out, force=True)
    assert forced.written == ("s/SKILL.md",) and "Use it well." in (out / "s" / "SKILL.md").read_text()


def _workflow(directory: Path, tools: str) -> Path:
    board = json.dumps(str(directory / "board"))
    path = directory / "WORKFLOW.md"
    path.write_text(f"---\ntracker:\n  kind: local\n  path: {board}\ntools:\n{tools}---\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_resources_and_prompts_are_the_mounted_packs_skills(tmp_path: Path, mode: str) -> None:
    workflow = _workflow(tmp_path, "  linear: {api_key: lin_api_test}\n")
    env = {"LORENZ_LOAD_PLUGINS": "lorenz-local,lorenz-linear,lorenz-jira"}
    with serve_in_thread(workflow, cwd=tmp_path, env=env) as server:
        async with mcp.Client(server.url, mode=mode) as client:
            resources = (await client.list_resources()).resources
            uris = [str(resource.uri) for resource in resources]
            assert "skill://lorenz-linear/SKILL.md" in uris
            assert not any(uri.startswith("skill://lorenz-jira/") for uri in uris)  # jira is not mounted
            read = await client.read_resource("skill://lorenz-linear/SKILL.md")
            (contents,) = read.contents
            assert isinstance(contents, TextResourceContents)
            assert contents.mime_type == "text/markdown"
            assert contents.text == (LINEAR_SKILL / "SKILL.md").read_text(encoding="utf-8")
            prompts = (await client.list_prompts()).prompts
            assert [prompt.name for prompt in prompts] == ["lorenz-linear"]
            prompt = await client.get_prompt("lorenz-linear")
            text: Any = prompt.messages[0].content
            assert "linear_graphql" in text.text
            with pytest.raises(mcp.MCPError, match="Resource not found"):
                await client.read_resource("skill://lorenz-linear/../../../etc/passwd")


def test_lorenz_skills_lists_and_exports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lorenz.cli import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "lorenz-local,lorenz-linear")
    _workflow(tmp_path, "  linear: {api_key: lin_api_test}\n")
    assert main(["skills"]) == 0
    assert capsys.readouterr().out.startswith("lorenz-linear  (")
    assert main(["skills", "export", ".claude/skills"]) == 0
    exported = tmp_path / ".claude" / "skills" / "lorenz-linear" / "SKILL.md"
    assert exported.read_text(encoding="utf-8") == (LINEAR_SKILL / "SKILL.md").read_text(encoding="utf-8")
    exported.write_text("mine\n", encoding="utf-8")
    assert main(["skills", "export", ".claude/skills"]) == 1
    assert exported.read_text(encoding="utf-8") == "mine\n"
    assert main(["skills", "export", ".claude/skills", "--force"]) == 0
    assert "linear_graphql" in exported.read_text(encoding="utf-8")


def test_a_pack_whose_skills_raise_contributes_none(tmp_path: Path) -> None:
    class Broken:
        name = "broken"

        @property
        def skills(self) -> list[str]:
            raise SystemExit(2)

    found = mounted_skills([Broken(), Pack("ok", [skill(tmp_path, "ok")])])  # type: ignore[list-item]
    assert [s.key for s in found] == ["ok"]
