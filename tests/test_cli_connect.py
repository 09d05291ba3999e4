"""``lorenz connect CLIENT`` (issue 44 item 6): a client's configuration file written to reach this host,
idempotently, keeping every other entry, never holding the token."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import mcp
import pytest
from mcp.client.stdio import StdioServerParameters

LORENZ = Path(sys.executable).with_name("lorenz")
TOKEN = "token-value-0123456789"


def lorenz(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    environ.update({"HOME": str(cwd.parent / "home"), "LORENZ_LOAD_PLUGINS": "lorenz-local", **(env or {})})
    return subprocess.run(
        [str(LORENZ), *args], cwd=cwd, env=environ, capture_output=True, text=True, check=False, timeout=60
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "WORKFLOW.md").write_text("---\ntracker: {kind: local}\n---\n", encoding="utf-8")
    return folder


def test_claude_code_gets_a_stdio_entry_once_and_keeps_the_others(project: Path) -> None:
    config = project / ".mcp.json"
    config.write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "extra": [1]}), encoding="utf-8")
    added = lorenz(project, "connect", "claude-code")
    assert added.returncode == 0, added.stderr
    assert "added lorenz in .mcp.json (Claude Code)" in added.stdout
    data = json.loads(config.read_text(encoding="utf-8"))
    assert data["extra"] == [1] and data["mcpServers"]["other"] == {"command": "x"}
    entry = data["mcpServers"]["lorenz"]
    assert entry == {
        "type": "stdio",
        "command": str(LORENZ),
        "args": ["serve", "--stdio", str((project / "WORKFLOW.md").resolve())],
    }
    written = config.read_bytes()
    again = lorenz(project, "connect", "claude-code")
    assert again.returncode == 0 and "left as it was" in again.stdout
    assert config.read_bytes() == written

    removed = lorenz(project, "connect", "claude-code", "--remove")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(config.read_text(encoding="utf-8")) == {"mcpServers": {"other": {"command": "x"}}, "extra": [1]}
    twice = lorenz(project, "connect", "claude-code", "--remove")
    assert twice.returncode == 0 and "has no lorenz entry" in twice.stdout


@pytest.mark.anyio
async def test_the_written_stdio_entry_reaches_this_host(project: Path) -> None:
    assert lorenz(project, "connect", "claude-code").returncode == 0
    entry = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["lorenz"]
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-local"
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=project.parent)
    async with mcp.Client(params) as client:
        names = {tool.name for tool in (await client.list_tools()).tools}
    assert "local_query" in names


@pytest.mark.parametrize(
    ("client", "path", "root", "reference", "kind"),
    [
        ("claude-code", ".mcp.json", "mcpServers", "${LORENZ_MCP_TOKEN}", {"type": "http"}),
        ("cursor", ".cursor/mcp.json", "mcpServers", "${env:LORENZ_MCP_TOKEN}", {}),
        ("vscode", ".vscode/mcp.json", "servers", "${env:LORENZ_MCP_TOKEN}", {"type": "http"}),
    ],
)
def test_an_http_entry_names_the_token_variable_never_its_value(
    project: Path, client: str, path: str, root: str, reference: str, kind: dict[str, str]
) -> None:
    done = lorenz(project, "connect", client, "--url", env={"LORENZ_MCP_TOKEN": TOKEN})
    assert done.returncode == 0, done.stderr
    text = (project / path).read_text(encoding="utf-8")
    assert TOKEN not in text + done.stdout + done.stderr
    assert json.loads(text)[root]["lorenz"] == {
        **kind,
        "url": "http://127.0.0.1:4040/mcp",
        "headers": {"Authorization": f"Bearer {reference}"},
    }


def test_print_writes_nothing_and_claude_desktop_lives_in_the_home_directory(project: Path) -> None:
    printed = lorenz(project, "connect", "vscode", "--url", "http://127.0.0.1:5000/mcp", "--print")
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout) == {"servers": {"lorenz": {"type": "http", "url": "http://127.0.0.1:5000/mcp"}}}
    assert not (project / ".vscode").exists()
    desktop = lorenz(project, "connect", "claude-desktop")
    assert desktop.returncode == 0, desktop.stderr
    home = project.parent / "home"
    files = list(home.rglob("claude_desktop_config.json"))
    assert (
        len(files) == 1 and "serve" in json.loads(files[0].read_text(encoding="utf-8"))["mcpServers"]["lorenz"]["args"]
    )
    remote = lorenz(project, "connect", "claude-desktop", "--url")
    assert remote.returncode == 1 and "takes stdio servers only" in remote.stderr


def test_a_file_with_comments_is_left_alone(project: Path) -> None:
    config = project / ".vscode" / "mcp.json"
    config.parent.mkdir()
    config.write_text('{\n  // mine\n  "servers": {}\n}\n', encoding="utf-8")
    refused = lorenz(project, "connect", "vscode")
    assert refused.returncode == 1 and "has comments, which rewriting would drop" in refused.stderr
    assert config.read_text(encoding="utf-8") == '{\n  // mine\n  "servers": {}\n}\n'
