"""Packs' skills: the skill directories mounted packs ship (``ToolProvider.skills``), as files a
client can read (MCP resources ``skill://<skill>/<path>``), as prompts (each ``SKILL.md``), and
copied into an agent's workspace (``lorenz skills export``).

Directories are taken in mount order, the first of a name kept; each must lie inside its pack's
distribution (:mod:`lorenz.plugins.skill_roots`). Files are read, and exported, one path component
at a time without following a symlink, at most :data:`MAX_FILES` per skill of :data:`MAX_FILE_BYTES`.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import mimetypes
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from attrs import evolve, frozen

from lorenz.contracts import ToolProvider
from lorenz.plugins.containment import PluginError, call_plugin
from lorenz.plugins.skill_roots import confine_skill_entries, pack_roots

from .mount import _skills_of

__all__ = ["ExportReport", "Skill", "SkillFile", "export_skills", "mounted_skills", "read_skill_file"]

logger = logging.getLogger("lorenz")

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
    #: ``(st_dev, st_ino)`` of the directory when it was listed: a directory swapped since is refused.
    identity: tuple[int, int] = (0, 0)

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


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
#: O_NONBLOCK: a FIFO planted under a listed name must not block the open.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


def _parts(relative: str) -> list[str]:
    """The components of a relative path, refused (``ValueError``) unless each is a plain name."""
    parts = relative.split("/")
    if any(not _plain(part) for part in parts):
        raise ValueError(f"{relative!r} is not a plain relative path")
    return parts


def _plain(name: str) -> bool:
    return name not in ("", ".", "..") and "/" not in name and "\\" not in name and "\0" not in name


def _open_dirs(top: int, parts: list[str], *, create: bool = False) -> int:
    """A descriptor of ``top/parts...``, each component opened from the one before without following
    a symlink (``OSError`` when one is a symlink or no directory); ``top`` stays open."""
    fd = os.dup(top)
    try:
        for part in parts:
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_regular(directory: int, name: str) -> bytes:
    fd = os.open(name, _FILE_FLAGS, dir_fd=directory)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, f"{name}: not a regular file")
        with os.fdopen(os.dup(fd), "rb") as stream:
            data = stream.read(MAX_FILE_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_FILE_BYTES:
        raise OSError(errno.EFBIG, f"{name}: larger than {MAX_FILE_BYTES} bytes")
    return data


def read_skill_file(skill: Skill, file: SkillFile) -> bytes:
    """The file's bytes, read inside the skill's directory: ``OSError`` (or ``ValueError``) when a
    component became a symlink, the file is no regular file, or the directory is another one."""
    *folders, name = _parts(file.relative)
    top = os.open(skill.directory, _DIR_FLAGS)
    try:
        info = os.fstat(top)
        if skill.identity != (0, 0) and (info.st_dev, info.st_ino) != skill.identity:
            raise OSError(errno.ESTALE, f"{skill.directory}: replaced since it was listed")
        directory = _open_dirs(top, folders)
    finally:
        os.close(top)
    try:
        return _read_regular(directory, name)
    finally:
        os.close(directory)


def _sources(packs: Sequence[ToolProvider]) -> list[Path]:
    """The packs' skill directories confined to their distributions, de-duplicated (real paths)."""
    seen: dict[Path, None] = {}
    for pack in packs:
        try:
            entries = call_plugin(f"pack {pack.name}", "skills", _skills_of, pack)
            # Looking the pack up runs its __hash__: plugin code too.
            roots = call_plugin(f"pack {pack.name}", "skills", pack_roots, pack) if entries else []
        except PluginError:
            continue
        if not entries:
            continue
        accepted, refused = confine_skill_entries(pack.name, roots, entries)
        for message in refused:
            logger.warning("lorenz: %s", message)
        for path in accepted:
            seen.setdefault(path, None)
    return list(seen)


def mounted_skills(packs: Sequence[ToolProvider]) -> list[Skill]:
    """The mounted packs' skills in mount order, the first directory of a name kept."""
    skills: list[Skill] = []
    keys: set[str] = set()
    for directory in _sources(packs):
        try:
            info = directory.lstat()
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or not _plain(directory.name) or directory.name in keys:
            continue
        keys.add(directory.name)
        skill = Skill(
            key=directory.name,
            name=directory.name,
            description="",
            directory=directory,
            files=tuple(_files(directory)),
            identity=(info.st_dev, info.st_ino),
        )
        meta: dict[str, str] = {}
        if skill.skill_md is not None:
            with contextlib.suppress(OSError, ValueError):
                meta = _front_matter(read_skill_file(skill, skill.skill_md).decode("utf-8", errors="replace"))
        skills.append(evolve(skill, name=meta.get("name") or directory.name, description=meta.get("description", "")))
    return skills


@frozen
class ExportReport:
    written: tuple[str, ...]
    unchanged: tuple[str, ...]
    refused: tuple[str, ...]


def _export_one(destination: int, skill: Skill, file: SkillFile, force: bool) -> str:
    """``written``, ``unchanged`` or ``refused``: the file goes to ``<skill>/<relative>`` under the
    destination's descriptor, no component followed if it is a symlink."""
    try:
        *folders, name = _parts(f"{skill.key}/{file.relative}")
        data = read_skill_file(skill, file)
        directory = _open_dirs(destination, folders, create=True)
    except (OSError, ValueError):
        return "refused"
    try:
        try:
            existing = os.stat(name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None:
            if not stat.S_ISREG(existing.st_mode):
                return "refused"
            try:
                if _read_regular(directory, name) == data:
                    return "unchanged"
            except OSError:
                return "refused"
            if not force:
                return "refused"
        temporary = f".{name}.lorenz-tmp"
        with contextlib.suppress(FileNotFoundError):  # a leftover (or a planted symlink): the name is ours
            os.unlink(temporary, dir_fd=directory)
        fd = os.open(
            temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666, dir_fd=directory
        )
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
        # rename replaces whatever is at ``name`` now (a symlink included), never writes through it
        os.replace(temporary, name, src_dir_fd=directory, dst_dir_fd=directory)
        return "written"
    except OSError:
        return "refused"
    finally:
        os.close(directory)


def export_skills(skills: Sequence[Skill], destination: Path, *, force: bool = False) -> ExportReport:
    """Copy each skill into ``destination/<skill>/``; a file that exists and differs is left alone
    (listed in ``refused``) unless ``force``. Nothing is written outside ``destination``: names that
    are not plain are refused, and a symlink found inside it is never followed (``--force`` too)."""
    outcomes: dict[str, list[str]] = {"written": [], "unchanged": [], "refused": []}
    destination.mkdir(parents=True, exist_ok=True)
    top = os.open(destination, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for skill in skills:
            for file in skill.files:
                outcomes[_export_one(top, skill, file, force)].append(f"{skill.key}/{file.relative}")
    finally:
        os.close(top)
    return ExportReport(tuple(outcomes["written"]), tuple(outcomes["unchanged"]), tuple(outcomes["refused"]))
