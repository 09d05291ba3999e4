"""Packs' skills: the skill directories mounted packs ship (``ToolProvider.skills``), as files a
client can read (MCP resources ``skill://<skill>/<path>``), as prompts (each ``SKILL.md``, named
from its front matter), and copied into an agent's workspace (``lorenz skills export``).

Directories are taken in mount order, de-duplicated with the first occurrence kept (core.md §4.1);
two directories with the same name are one skill, the first. Only regular files are served (no
symlink is followed), at most :data:`MAX_FILES` per skill and :data:`MAX_FILE_BYTES` each.
"""

from __future__ import annotations

import filecmp
import mimetypes
import os
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path

from attrs import frozen

from .contracts import ToolProvider
from .mount import mounted_skill_sources

__all__ = ["ExportReport", "Skill", "SkillFile", "export_skills", "mounted_skills"]

MAX_FILES = 200
MAX_FILE_BYTES = 1024 * 1024
_TEXT_TYPES = {".md": "text/markdown", ".txt": "text/plain", ".graphql": "application/graphql"}


@frozen
class SkillFile:
    path: Path
    relative: str
    mime_type: str
    size: int

    @property
    def is_text(self) -> bool:
        return self.mime_type.startswith("text/") or self.mime_type in ("application/json", "application/graphql")


@frozen(kw_only=True)
class Skill:
    """One skill directory: its ``SKILL.md`` name and description, and its files."""

    key: str
    name: str
    description: str
    directory: Path
    files: tuple[SkillFile, ...]

    def uri(self, file: SkillFile) -> str:
        return f"skill://{self.key}/{file.relative}"

    @property
    def skill_md(self) -> SkillFile | None:
        return next((file for file in self.files if file.relative == "SKILL.md"), None)


def _mime(path: Path) -> str:
    return _TEXT_TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"


def _files(directory: Path) -> list[SkillFile]:
    found: list[SkillFile] = []
    for root, dirs, names in os.walk(directory, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(root) / name
            try:
                info = path.lstat()
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode) or name.startswith(".") or info.st_size > MAX_FILE_BYTES:
                continue
            found.append(SkillFile(path, path.relative_to(directory).as_posix(), _mime(path), info.st_size))
            if len(found) >= MAX_FILES:
                return found
    return found


def _front_matter(text: str) -> dict[str, str]:
    """``name``/``description`` from a SKILL.md's front matter (plain ``key: value`` lines)."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return {}
    out: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            break
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("name", "description"):
            out[key.strip()] = value.strip().strip("\"'")
    return out


def mounted_skills(packs: Sequence[ToolProvider]) -> list[Skill]:
    """The mounted packs' skills, de-duplicated as core.md §4.1 says."""
    skills: list[Skill] = []
    keys: set[str] = set()
    for source in mounted_skill_sources(packs):
        directory = Path(source)
        if not directory.is_dir() or directory.name in keys:
            continue
        keys.add(directory.name)
        files = tuple(_files(directory))
        meta: dict[str, str] = {}
        skill_md = next((file for file in files if file.relative == "SKILL.md"), None)
        if skill_md is not None:
            meta = _front_matter(skill_md.path.read_text(encoding="utf-8", errors="replace"))
        skills.append(
            Skill(
                key=directory.name,
                name=meta.get("name") or directory.name,
                description=meta.get("description", ""),
                directory=directory,
                files=files,
            )
        )
    return skills


@frozen
class ExportReport:
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    refused: tuple[str, ...]


def export_skills(skills: Sequence[Skill], destination: Path, *, force: bool = False) -> ExportReport:
    """Copy each skill into ``destination/<skill>/``; a file that exists and differs is left alone
    (listed in ``refused``) unless ``force``."""
    written: list[str] = []
    unchanged: list[str] = []
    refused: list[str] = []
    for skill in skills:
        for file in skill.files:
            target = destination / skill.key / file.relative
            label = f"{skill.key}/{file.relative}"
            if target.is_symlink() or (target.exists() and not target.is_file()):
                refused.append(label)
                continue
            if target.exists():
                if filecmp.cmp(file.path, target, shallow=False):
                    unchanged.append(label)
                    continue
                if not force:
                    refused.append(label)
                    continue
            target.parent.mkdir(parents=True, exist_ok=True)
            temporary = target.with_name(f".{target.name}.lorenz-tmp")
            shutil.copyfile(file.path, temporary)
            os.replace(temporary, target)
            written.append(label)
    return ExportReport(tuple(written), tuple(unchanged), tuple(refused))
