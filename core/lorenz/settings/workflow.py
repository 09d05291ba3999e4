"""WORKFLOW.md: where it lives and how its YAML front matter splits from the body."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from attrs import field, frozen

from .errors import ConfigError

__all__ = ["WORKFLOW_FILE", "Workflow", "load_workflow", "parse_workflow_content", "workflow_path"]

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


def parse_workflow_content(text: str) -> Workflow:
    """Split ``---`` fenced YAML front matter from the body.

    Without an opening fence on the first line (or without a closing one), everything is body.
    Raises :class:`ConfigError` with ``workflow_parse_error: …`` or
    ``workflow_front_matter_not_a_map: front matter must be a map``.
    """
    lines = _LINE_BREAK.split(text)
    if lines[0] != _FENCE:
        return Workflow({}, text.strip())
    try:
        closing = lines.index(_FENCE, 1)
    except ValueError:
        return Workflow({}, text.strip())
    front_matter = "\n".join(lines[1:closing])
    body = "\n".join(lines[closing + 1 :]).strip()
    if not front_matter.strip():
        return Workflow({}, body)
    from ..yaml12 import YamlError, load_yaml  # the YAML parser loads only when there is front matter

    try:
        config = load_yaml(front_matter)
    except YamlError as exc:
        msg = f"workflow_parse_error: {exc}"
        raise ConfigError(msg) from None
    if not isinstance(config, dict):
        msg = "workflow_front_matter_not_a_map: front matter must be a map"
        raise ConfigError(msg)
    return Workflow(config, body)


def load_workflow(path: str | os.PathLike[str]) -> Workflow:
    """Read and parse a workflow file; a missing one gives ``missing_workflow_file: <abs path> ENOENT``."""
    absolute = Path(path).absolute()
    try:
        # utf-8-sig: a byte-order mark some editors write would otherwise hide the opening fence.
        text = absolute.read_text(encoding="utf-8-sig")
    except OSError as exc:
        msg = f"missing_workflow_file: {absolute} {errno.errorcode.get(exc.errno or 0, 'EIO')}"
        raise ConfigError(msg) from None
    except UnicodeDecodeError as exc:
        msg = f"workflow_parse_error: not valid UTF-8 at byte {exc.start}"
        raise ConfigError(msg) from None
    parsed = parse_workflow_content(text)
    return Workflow(parsed.config, parsed.body, absolute)
