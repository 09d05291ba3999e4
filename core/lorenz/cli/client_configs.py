"""MCP clients' configuration files, as ``lorenz import`` reads them and ``lorenz connect`` writes them:
where each client keeps its file (project-level where it has one), the map its servers are under
(``mcpServers``, VS Code's ``servers``), and reading (comments allowed) and writing (atomically, keeping
every other key) that JSON."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from attrs import frozen

from .output import UsageError
from .workflow_edit import write_validated

__all__ = ["CLIENTS", "Client", "read_config", "servers_of", "write_config"]


@frozen
class Client:
    """One MCP client: its name on the command line, its file, and how it spells things."""

    name: str
    label: str
    #: the file, relative to the project (the current directory), or ``None`` for a user-level one
    project_file: str | None
    #: the map the servers are under
    root: str
    #: ``"type"`` written in a stdio / an HTTP entry (``None``: the client infers it)
    stdio_type: str | None
    http_type: str | None
    #: how the client's file writes a reference to an environment variable, ``{}`` for its name
    env_reference: str

    def path(self, cwd: Path, home: Path) -> Path:
        if self.project_file is not None:
            return cwd / self.project_file
        return _claude_desktop_file(home)


def _claude_desktop_file(home: Path) -> Path:
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude" / "claude_desktop_config.json"
    return home / ".config" / "Claude" / "claude_desktop_config.json"


CLIENTS: dict[str, Client] = {
    client.name: client
    for client in (
        Client("claude-code", "Claude Code", ".mcp.json", "mcpServers", "stdio", "http", "${{{}}}"),
        Client("claude-desktop", "Claude Desktop", None, "mcpServers", None, None, "${{{}}}"),
        Client("cursor", "Cursor", ".cursor/mcp.json", "mcpServers", None, None, "${{env:{}}}"),
        Client("vscode", "VS Code", ".vscode/mcp.json", "servers", "stdio", "http", "${{env:{}}}"),
    )
}

# // and /* */ comments outside strings (VS Code's files are JSON with comments), and trailing commas
_JSONC = re.compile(r'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def read_config(path: Path) -> tuple[dict[str, Any], bool]:
    """The file's JSON object (``{}`` when there is no file) and whether it had comments or trailing
    commas, which writing it back would lose."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, False
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: {getattr(exc, 'strerror', None) or exc}") from exc
    stripped = _JSONC.sub(lambda m: m.group(1) or "", text)
    try:
        data = json.loads(stripped) if stripped.strip() else {}
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from exc
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data, stripped != text


def servers_of(data: dict[str, Any], path: Path) -> tuple[str, dict[str, Any]]:
    """``(the key, the map)`` of a client file's servers: ``mcpServers`` (Claude, Cursor) or ``servers``
    (VS Code)."""
    for root in ("mcpServers", "servers"):
        servers = data.get(root)
        if isinstance(servers, dict):
            return root, servers
        if servers is not None:
            raise UsageError(f"{path}: {root} must be a map of server names to servers")
    msg = f"{path}: no mcpServers (Claude Desktop, Claude Code, Cursor) or servers (VS Code) map of MCP servers"
    raise UsageError(msg)


def write_config(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as indented JSON through a temporary file renamed over ``path`` (its folder created
    if need be; an existing file's permissions kept, a new one's owner-only)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_validated(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", lambda _: None)
