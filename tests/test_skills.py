"""Packs' skills (issue 15): MCP resources and prompts for exactly the mounted packs, and an export
that keeps the first skill of a name and never overwrites a changed file without force."""

from __future__ import annotations

import importlib
import json
import uuid
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import mcp
import pytest
from mcp_types import TextResourceContents

from lorenz.host import serve_in_thread
from lorenz.mounting.skills import export_skills, mounted_skills, read_skill_file

pytestmark = pytest.mark.anyio

LINEAR_SKILL = Path(__file__).parents[1] / "plugins" / "linear" / "lorenz_linear" / "skills" / "lorenz-linear"


PACKAGE = """
from pathlib import Path

from lorenz import hookimpl

HERE = Path(__file__).parent


class Pack:
    def __init__(self, name, skills):
        self.name = name
        self.skills = [str(path) for path in skills]

    def tool_specs(self, settings):
        return []

    async def execute_tool(self, name, input, context):
        raise AssertionError(name)


@hookimpl
def lorenz_register_tool_packs(register):
    register(Pack("demo", [HERE / "s"]))
"""


@pytest.fixture
def dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A pack's installed package, on ``sys.path``: skill directories must lie inside it."""
    name = f"skilldist_{uuid.uuid4().hex}"
    (tmp_path / "site" / name).mkdir(parents=True)
    (tmp_path / "site" / name / "__init__.py").write_text(PACKAGE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    return importlib.import_module(name)


def Pack(dist: ModuleType, name: str, skills: list[Path]) -> Any:
    return dist.Pack(name, skills)


def skill(root: Path, name: str, body: str = "Use it well.") -> Path:
    directory = root / name
    (directory / "refs").mkdir(parents=True)
    (directory / "SKILL.md").write_text(f"---\nname: {name}-skill\ndescription: About {name}.\n---\n{body}\n")
    (directory / "refs" / "notes.txt").write_text(f"notes of {name}\n")
    return directory


def test_mounted_skills_are_deduplicated_first_kept(dist: ModuleType) -> None:
    root = Path(dist.HERE)
    shared, b, a = skill(root, "shared"), skill(root, "b"), skill(root, "a")
    found = mounted_skills([Pack(dist, "beta", [shared, b]), Pack(dist, "alpha", [a, shared])])
    assert [s.key for s in found] == ["shared", "b", "a"]
    assert found[0].name == "shared-skill" and found[0].description == "About shared."
    assert [f.relative for f in found[0].files] == ["SKILL.md", "refs/notes.txt"]
    assert found[0].files[0].mime_type == "text/markdown"


def test_export_copies_and_never_overwrites_a_changed_file(tmp_path: Path, dist: ModuleType) -> None:
    skills = mounted_skills([Pack(dist, "p", [skill(Path(dist.HERE), "s")])])
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


def test_a_pack_whose_skills_raise_contributes_none(dist: ModuleType) -> None:
    class Broken:
        name = "broken"

        @property
        def skills(self) -> list[str]:
            raise SystemExit(2)

    found = mounted_skills([Broken(), Pack(dist, "ok", [skill(Path(dist.HERE), "ok")])])  # type: ignore[list-item]
    assert [s.key for s in found] == ["ok"]


def test_a_pack_that_cannot_be_hashed_contributes_no_skills(dist: ModuleType) -> None:
    """Finding where a pack's skills may lie looks the pack up by identity: a pack whose ``__hash__``
    raises (even ``SystemExit``) is left out, the other packs' skills are served."""

    class Unhashable(dist.Pack):  # type: ignore[name-defined,misc]
        def __hash__(self) -> int:
            raise SystemExit(3)

    root = Path(dist.HERE)
    found = mounted_skills([Unhashable("odd", [skill(root, "odd")]), Pack(dist, "ok", [skill(root, "ok")])])
    assert [s.key for s in found] == ["ok"]


def test_a_skills_entry_outside_the_pack_distribution_is_refused(
    tmp_path: Path, dist: ModuleType, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 28: an entry ending in ``/..`` (or naming a folder elsewhere, or a symlink out of the
    package) is refused with a message naming the pack and entry; the pack's own skill stays."""
    root = Path(dist.HERE)
    good = skill(root, "good")
    skill(tmp_path, "elsewhere")
    (root / "escape").symlink_to(tmp_path / "elsewhere")
    bad = [f"{good}/..", str(tmp_path / "elsewhere"), str(root / "escape"), "good"]
    found = mounted_skills([Pack(dist, "sneaky", [*bad, good])])
    assert [s.key for s in found] == ["good"]
    for entry in bad:
        assert f"pack sneaky: skills entry {entry!r} is refused" in caplog.text


def test_a_file_swapped_for_a_symlink_after_listing_is_not_read(tmp_path: Path, dist: ModuleType) -> None:
    """Issue 28: a listed file (or folder) replaced by a symlink is refused, not read through."""
    secret = tmp_path / "secret"
    (secret / "refs").mkdir(parents=True)
    (secret / "refs" / "notes.txt").write_text("the host's secret\n")
    (found,) = mounted_skills([Pack(dist, "p", [skill(Path(dist.HERE), "s")])])
    notes = next(file for file in found.files if file.relative == "refs/notes.txt")
    assert read_skill_file(found, notes) == b"notes of s\n"
    notes.path.unlink()
    notes.path.symlink_to(secret / "refs" / "notes.txt")
    with pytest.raises(OSError, match="symbolic links"):
        read_skill_file(found, notes)
    notes.path.unlink()
    notes.path.parent.rmdir()
    notes.path.parent.symlink_to(secret / "refs")
    with pytest.raises(OSError, match="Not a directory"):  # O_DIRECTORY | O_NOFOLLOW on a symlink
        read_skill_file(found, notes)
    assert export_skills([found], tmp_path / "out").refused == ("s/refs/notes.txt",)
    assert not (tmp_path / "out" / "s" / "refs" / "notes.txt").exists()


def test_export_never_writes_outside_its_folder(tmp_path: Path, dist: ModuleType) -> None:
    """Issue 28: a skill named ``..`` and symlinks planted inside DIR are refused, ``--force`` too."""
    (found,) = mounted_skills([Pack(dist, "p", [skill(Path(dist.HERE), "s")])])
    out, outside = tmp_path / "out", tmp_path / "outside"
    (outside / "refs").mkdir(parents=True)
    (outside / "SKILL.md").write_text("theirs\n")
    dotdot = attrs.evolve(found, key="..")
    report = export_skills([dotdot], out, force=True)
    assert report.refused == ("../SKILL.md", "../refs/notes.txt") and report.written == ()
    (out / "s").mkdir(parents=True)
    (out / "s" / "SKILL.md").symlink_to(outside / "SKILL.md")
    (out / "s" / "refs").symlink_to(outside / "refs")
    report = export_skills([found], out, force=True)
    assert report.refused == ("s/SKILL.md", "s/refs/notes.txt")
    assert (outside / "SKILL.md").read_text() == "theirs\n" and not (outside / "refs" / "notes.txt").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out", "outside", "site"]


async def test_a_resource_swapped_for_a_symlink_is_not_served(tmp_path: Path, dist: ModuleType) -> None:
    """Issue 28: ``resources/read`` of a listed file that became a symlink does not serve its target."""
    skill(Path(dist.HERE), "s")
    secret = tmp_path / "secret.txt"
    secret.write_text("the host's secret\n")
    workflow = _workflow(tmp_path, "  demo: {}\n")
    with serve_in_thread(workflow, cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": "lorenz-local"}, plugins=[dist]) as server:
        async with mcp.Client(server.url, mode="legacy") as client:
            uris = [str(resource.uri) for resource in (await client.list_resources()).resources]
            assert "skill://s/refs/notes.txt" in uris
            notes = Path(dist.HERE) / "s" / "refs" / "notes.txt"
            notes.unlink()
            notes.symlink_to(secret)
            with pytest.raises(mcp.MCPError, match="Resource not found"):
                await client.read_resource("skill://s/refs/notes.txt")
