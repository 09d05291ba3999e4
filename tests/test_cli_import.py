"""``lorenz import`` and ``lorenz mount KEY --provider mcp`` (issue 44 item 5): MCP servers become
``provider: mcp`` entries without hand-written YAML, and no secret value reaches WORKFLOW.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

LORENZ = Path(sys.executable).with_name("lorenz")
SECRET = "s3cr3t-value-0123456789"

#: A stdio MCP server whose one tool, ``hello``, answers with ``$GREETING`` (its own environment).
UPSTREAM = """
import os
from mcp.server.mcpserver import MCPServer

server = MCPServer("lorenz-import-test")

@server.tool()
def hello() -> str:
    return "hello " + os.environ.get("GREETING", "(unset)")

server.run("stdio")
"""


def lorenz(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    environ.pop("GREETING", None)
    environ.update({"HOME": str(cwd.parent / "home"), "LORENZ_LOAD_PLUGINS": "lorenz-local,lorenz-mcp", **(env or {})})
    command = [str(LORENZ), *args]
    return subprocess.run(command, cwd=cwd, env=environ, capture_output=True, text=True, check=False, timeout=120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "upstream.py").write_text(UPSTREAM, encoding="utf-8")
    return folder


@pytest.mark.slow  # starts the imported servers: started first
def test_a_claude_desktop_config_with_two_servers_is_imported_with_references(project: Path) -> None:
    server = {"command": sys.executable, "args": [str(project / "upstream.py")]}
    config = {
        "mcpServers": {
            "one": {**server, "env": {"GREETING": SECRET}},
            "two": {**server, "env": {"GREETING": "${OTHER_GREETING}"}},
        }
    }
    (project / "claude_desktop_config.json").write_text(json.dumps(config), encoding="utf-8")

    preview = lorenz(project, "import", "claude_desktop_config.json", "--dry-run")
    assert preview.returncode == 0, preview.stderr
    assert not (project / "WORKFLOW.md").exists()
    assert "+    env: {GREETING: $GREETING}" in preview.stdout
    assert "+    env: {GREETING: $OTHER_GREETING}" in preview.stdout
    assert "export GREETING=…" in preview.stdout and "mcpServers.one.env.GREETING" in preview.stdout
    assert SECRET not in preview.stdout + preview.stderr

    done = lorenz(project, "import", "claude_desktop_config.json")
    assert done.returncode == 0, done.stderr
    assert "imported 2 MCP servers into WORKFLOW.md: one, two" in done.stdout
    text = (project / "WORKFLOW.md").read_text(encoding="utf-8")
    assert SECRET not in text and SECRET not in done.stdout + done.stderr
    assert text.count("provider: mcp") == 2 and "prefix: one_" in text and "prefix: two_" in text

    exported = {"GREETING": "from-one", "OTHER_GREETING": "from-two"}
    checked = lorenz(project, "check", env=exported)
    assert checked.returncode == 0, checked.stderr
    for key, greeting in (("one", "from-one"), ("two", "from-two")):
        called = lorenz(project, "call", f"{key}_hello", env=exported)
        assert called.returncode == 0, called.stderr
        assert f"hello {greeting}" in called.stdout

    again = lorenz(project, "import", "claude_desktop_config.json")
    assert again.returncode == 0 and "the workflow has one, two already: left as it was" in again.stdout
    assert (project / "WORKFLOW.md").read_text(encoding="utf-8") == text


def test_an_entry_already_there_is_left_alone_unless_replace(project: Path) -> None:
    workflow = project / "WORKFLOW.md"
    workflow.write_text(
        "---\ntools:\n  one: {provider: mcp, url: http://127.0.0.1:9/mcp}  # mine\n---\n", encoding="utf-8"
    )
    config = {"mcpServers": {"one": {"command": "a"}, "two": {"command": "b"}}}
    (project / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    done = lorenz(project, "import", "mcp.json")
    assert done.returncode == 0, done.stderr
    assert "the workflow has one already: left as it was (--replace writes over it)" in done.stdout
    text = workflow.read_text(encoding="utf-8")
    assert "one: {provider: mcp, url: http://127.0.0.1:9/mcp}  # mine" in text and "command: [b]" in text
    replaced = lorenz(project, "import", "mcp.json", "--replace")
    assert replaced.returncode == 0, replaced.stderr
    text = workflow.read_text(encoding="utf-8")
    assert "command: [a]" in text and "127.0.0.1:9" not in text


def test_vscode_servers_with_comments_and_env_references_and_an_sse_server(project: Path) -> None:
    folder = project / ".vscode"
    folder.mkdir()
    (folder / "mcp.json").write_text(
        '{\n  // VS Code\'s file is JSON with comments\n  "servers": {\n'
        '    "gh": {"type": "http", "url": "http://127.0.0.1:9/mcp",\n'
        '           "headers": {"Authorization": "Bearer ${env:GH_TOKEN}", "X-Team": "' + SECRET + '"}},\n'
        '    "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},\n'
        "  },\n}\n",
        encoding="utf-8",
    )
    done = lorenz(project, "import", ".vscode/mcp.json", "--no-prefix")
    assert done.returncode == 0, done.stderr
    assert "left out old: an SSE server" in done.stderr
    text = (project / "WORKFLOW.md").read_text(encoding="utf-8")
    assert "headers: {Authorization: Bearer $GH_TOKEN, X-Team: $GH_X_TEAM}" in text
    assert SECRET not in text and "prefix" not in text
    assert "export GH_X_TEAM=…" in done.stdout and "servers.gh.headers.X-Team" in done.stdout


@pytest.mark.parametrize(
    ("server", "named"),
    [
        ({"command": "tool", "args": ["--api-key", SECRET]}, "--api-key passes a secret on the command line"),
        ({"url": f"http://127.0.0.1:9/mcp?token={SECRET}"}, "the URL carries the query parameter token"),
    ],
)
def test_a_secret_that_cannot_be_a_reference_is_refused(project: Path, server: dict[str, object], named: str) -> None:
    (project / "mcp.json").write_text(json.dumps({"mcpServers": {"x": server}}), encoding="utf-8")
    refused = lorenz(project, "import", "mcp.json")
    assert refused.returncode == 1
    assert named in refused.stderr and "mcpServers.x" in refused.stderr
    assert SECRET not in refused.stderr + refused.stdout
    assert not (project / "WORKFLOW.md").exists()


@pytest.mark.slow  # starts the server it mounts: started first
def test_mount_provider_mcp_writes_a_reference_for_an_env_value(project: Path) -> None:
    command = f"{sys.executable} {project / 'upstream.py'}"
    mounted = lorenz(
        project,
        "mount",
        "clock",
        "--provider",
        "mcp",
        "--command",
        command,
        "--prefix",
        "c_",
        "--env",
        f"GREETING={SECRET}",
    )
    assert mounted.returncode == 0, mounted.stderr
    text = (project / "WORKFLOW.md").read_text(encoding="utf-8")
    assert "env: {GREETING: $GREETING}" in text and "prefix: c_" in text and SECRET not in text
    assert "export GREETING=…" in mounted.stdout and "--env GREETING" in mounted.stdout
    called = lorenz(project, "call", "c_hello", env={"GREETING": "there"})
    for _ in range(2):  # a loaded machine may start the server past the mount's 5 s wait: ask again
        if called.returncode == 0 or "no installed pack declares c_hello" not in called.stderr:
            break
        called = lorenz(project, "call", "c_hello", env={"GREETING": "there"})
    assert called.returncode == 0, called.stderr
    assert "hello there" in called.stdout
    moved = lorenz(project, "mount", "clock", "--provider", "mcp", "--url", "http://127.0.0.1:9/mcp")
    assert moved.returncode == 0 and "replaced tools.clock in WORKFLOW.md" in moved.stdout
    assert "url: http://127.0.0.1:9/mcp" in (project / "WORKFLOW.md").read_text(encoding="utf-8")
    same = lorenz(
        project, "mount", "clock", "--provider", "mcp", "--command", command, "--prefix", "c_", "--env", "GREETING"
    )
    assert same.returncode == 0 and "replaced tools.clock" in same.stdout
    again = lorenz(
        project, "mount", "clock", "--provider", "mcp", "--command", command, "--prefix", "c_", "--env", "GREETING"
    )
    assert again.returncode == 0 and "left as it was" in again.stdout


def test_mount_provider_mcp_validates_before_writing(project: Path) -> None:
    workflow = project / "WORKFLOW.md"
    workflow.write_text("---\ntracker: {kind: local}  # kept\n---\nbody\n", encoding="utf-8")
    bad = lorenz(project, "mount", "x", "--provider", "mcp", "--command", "tool", "--prefix", "no spaces")
    assert bad.returncode == 1
    assert "not written: tools.x.prefix must be letters" in bad.stderr
    headers = lorenz(project, "mount", "x", "--provider", "mcp", "--command", "tool", "--header", "Authorization")
    assert headers.returncode == 1 and "not written: tools.x.headers only applies to a url upstream" in headers.stderr
    neither = lorenz(project, "mount", "x", "--provider", "mcp")
    assert neither.returncode == 1 and '--provider mcp needs --command "PROGRAM ARG…"' in neither.stderr
    other = lorenz(project, "mount", "x", "--provider", "jira", "--url", "http://127.0.0.1:9/mcp")
    assert other.returncode == 1 and "--command and --url take --provider mcp" in other.stderr
    assert workflow.read_text(encoding="utf-8") == "---\ntracker: {kind: local}  # kept\n---\nbody\n"
    remote = lorenz(
        project, "mount", "x", "--provider", "mcp", "--url", "http://127.0.0.1:9/mcp", "--header", "Authorization"
    )
    assert remote.returncode == 0, remote.stderr
    assert "headers: {Authorization: Bearer $X_TOKEN}" in workflow.read_text(encoding="utf-8")
    assert "# kept" in workflow.read_text(encoding="utf-8")


@pytest.mark.anyio
async def test_imported_servers_are_served_to_the_client_connect_wrote(project: Path) -> None:
    """The walk-through: import a client's two servers, connect Claude Code, and its entry reaches both."""
    import mcp
    import mcp_types as types
    from mcp.client.stdio import StdioServerParameters

    server = {"command": sys.executable, "args": [str(project / "upstream.py")]}
    config = {"mcpServers": {"one": {**server, "env": {"GREETING": SECRET}}, "two": server}}
    (project / "claude_desktop_config.json").write_text(json.dumps(config), encoding="utf-8")
    assert lorenz(project, "import", "claude_desktop_config.json").returncode == 0
    assert lorenz(project, "connect", "claude-code").returncode == 0
    entry = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["lorenz"]
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update({"LORENZ_LOAD_PLUGINS": "lorenz-local,lorenz-mcp", "GREETING": "exported"})
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=project.parent)
    changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with mcp.Client(params, mode="legacy", message_handler=on_message) as client:
        # An upstream slower than the mount's 5 s wait (a loaded machine) is listed once it answers,
        # and the host says the list changed.
        with anyio.fail_after(120):
            while not {"one_hello", "two_hello"} <= {tool.name for tool in (await client.list_tools()).tools}:
                await changed.wait()
                changed = anyio.Event()
        texts = []
        for tool in ("one_hello", "two_hello"):
            result = await client.call_tool(tool, {})
            assert result.is_error is False, result
            texts.append("".join(getattr(block, "text", "") for block in result.content))
    assert texts == ["hello exported", "hello (unset)"]
