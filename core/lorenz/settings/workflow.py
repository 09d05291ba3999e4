"""WORKFLOW.md: where it lives and how its YAML front matter splits from the body."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrs import field, frozen

from .errors import ConfigError

if TYPE_CHECKING:
    from lorenz.yaml12 import YamlError

__all__ = ["WORKFLOW_FILE", "Workflow", "display_path", "load_workflow", "parse_workflow_content", "workflow_path"]

WORKFLOW_FILE = "WORKFLOW.md"
_LINE_BREAK = re.compile("\r\n|\n|\r|\u2028|\u2029")
_FENCE = "---"


@frozen
class Workflow:
    """A parsed workflow file: the front matter map, the trimmed body and where it came from."""

    config: dict[str, Any]
    body: str
    path: Path | None = field(default=None)


def workflow_path(cwd: Path, env: Mapping[str, str]) -> Path:
    """``LORENZ_WORKFLOW`` (absolute as is, relative joined to ``cwd``), else ``cwd/WORKFLOW.md``."""
    configured = env.get("LORENZ_WORKFLOW")
    if configured:
        path = Path(configured)
        return path if path.is_absolute() else cwd / path
    return cwd / WORKFLOW_FILE


def display_path(path: Path) -> str:
    """How messages name a workflow file: relative to the working directory when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except (ValueError, OSError):  # elsewhere, or the working directory is gone
        return str(path)


def parse_workflow_content(text: str, *, name: str = WORKFLOW_FILE) -> Workflow:
    """Split ``---`` fenced YAML front matter from the body.

    Errors are :class:`ConfigError`\\ s an editor can jump to, located in the file's own lines
    (``WORKFLOW.md:4:3: found duplicate key "token"``; ``name`` is the file as messages call it):
    an empty text, one without an opening ``---`` line, an unclosed front matter, invalid YAML,
    and front matter that is not a map each have their own message. Blank front matter is ``{}``.
    """
    if not text.strip():
        msg = f'{name}: the file is empty; a workflow starts with front matter between two "---" lines'
        raise ConfigError(msg)
    lines = _LINE_BREAK.split(text)
    if lines[0] != _FENCE:
        detail = (
            'the first line must be exactly "---", without spaces'
            if lines[0].strip() == _FENCE
            else 'a workflow starts with a "---" line, then its settings, then another "---" line'
        )
        msg = f"{name}:1:1: no front matter: {detail}"
        raise ConfigError(msg)
    try:
        closing = lines.index(_FENCE, 1)
    except ValueError:
        msg = f'{name}:1:1: the front matter opened here is not closed: add a "---" line after the settings'
        raise ConfigError(msg) from None
    front_matter = "\n".join(lines[1:closing])
    body = "\n".join(lines[closing + 1 :]).strip()
    if not front_matter.strip():
        return Workflow({}, body)
    from lorenz.yaml12 import YamlError, load_yaml  # the YAML parser loads only when there is front matter

    try:
        config = load_yaml(front_matter, first_line=2)  # after the opening fence
    except YamlError as exc:
        raise ConfigError(_located(name, exc)) from None
    if not isinstance(config, dict):
        msg = f"{name}:2:1: front matter must be a map"
        raise ConfigError(msg)
    return Workflow(config, body)


def _located(name: str, exc: YamlError) -> str:
    if exc.line is None or exc.column is None:
        return f"{name}: {exc.problem}"
    return f"{name}:{exc.line}:{exc.column}: {exc.problem}"


def load_workflow(path: str | os.PathLike[str]) -> Workflow:
    """Read and parse a workflow file; a missing one gives ``missing_workflow_file: <abs path> ENOENT``."""
    absolute = Path(path).absolute()
    name = display_path(absolute)
    try:
        data = absolute.read_bytes()
    except OSError as exc:
        msg = f"missing_workflow_file: {absolute} {errno.errorcode.get(exc.errno or 0, 'EIO')}"
        raise ConfigError(msg) from None
    try:
        # utf-8-sig: a byte-order mark some editors write would otherwise hide the opening fence.
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - data.rfind(b"\n", 0, exc.start)
        msg = f"{name}:{line}:{column}: not valid UTF-8"
        raise ConfigError(msg) from None
    parsed = parse_workflow_content(text, name=name)
    return Workflow(parsed.config, parsed.body, absolute)
