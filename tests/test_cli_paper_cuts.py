"""What a new user trips on (issue 32, item 7): each cut, through the installed ``lorenz`` command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LORENZ = Path(sys.executable).with_name("lorenz")


def lorenz(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("LORENZ_", "ADMIN_"))}
    environ.update({"LORENZ_LOAD_PLUGINS": "lorenz-local", **env})
    return subprocess.run(
        [str(LORENZ), *args], cwd=cwd, env=environ, capture_output=True, text=True, check=False, timeout=60
    )


def test_calls_reads_the_log_without_the_workflows_secrets(tmp_path: Path) -> None:
    (tmp_path / "WORKFLOW.md").write_text(
        "---\ntracker: {kind: local}\nserver: {token: $ADMIN_TOKEN, call_log: calls.jsonl}\n---\n", encoding="utf-8"
    )
    (tmp_path / "calls.jsonl").write_text("", encoding="utf-8")
    done = lorenz(tmp_path, "calls")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "no calls\n"


def test_check_warns_on_patterns_that_match_no_tool(tmp_path: Path) -> None:
    (tmp_path / "WORKFLOW.md").write_text(
        "---\ntracker: {kind: local}\nserver:\n  disabled_tools: [local_qury]\n"
        "  tokens: [{token: t0k3n-value, tools: [local_read_isue, 'local_*']}]\n---\n",
        encoding="utf-8",
    )
    done = lorenz(tmp_path, "check")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        'lorenz: warning: WORKFLOW.md: server.disabled_tools: "local_qury" matches no mounted tool '
        '(did you mean "local_query"?)',
        'lorenz: warning: WORKFLOW.md: server.tokens.0.tools: "local_read_isue" matches no mounted tool '
        '(did you mean "local_read_issue"?)',
    ]


def test_skills_takes_the_workflow_positionally(tmp_path: Path) -> None:
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "WORKFLOW.md").write_text("---\ntracker: {kind: local}\n---\n", encoding="utf-8")
    positional = lorenz(tmp_path, "skills", "ops/WORKFLOW.md", "--json")
    assert positional.returncode == 0, positional.stderr
    assert lorenz(tmp_path, "skills", "--workflow", "ops/WORKFLOW.md", "--json").stdout == positional.stdout
    missing = lorenz(tmp_path, "skills", "nowhere/WORKFLOW.md")
    assert missing.returncode == 1
    assert "missing_workflow_file" in missing.stderr


def test_an_unclosed_quote_is_located_where_it_opens(tmp_path: Path) -> None:
    (tmp_path / "WORKFLOW.md").write_text(
        '---\ntracker:\n  kind: "local\nserver:\n  port: 4040\n---\nbody\n', encoding="utf-8"
    )
    done = lorenz(tmp_path, "check")
    assert done.stderr.startswith("lorenz: WORKFLOW.md:3:9: found unexpected end of stream while scanning a quoted")


def test_a_disabled_distribution_is_named(tmp_path: Path) -> None:
    (tmp_path / "WORKFLOW.md").write_text("---\ntools: {local: {}}\n---\n", encoding="utf-8")
    done = lorenz(tmp_path, "check", LORENZ_LOAD_PLUGINS="", LORENZ_DISABLE_PLUGINS="lorenz-local")
    assert done.returncode == 1
    assert "LORENZ_DISABLE_PLUGINS='lorenz-local' leaves those distributions out" in done.stderr


def test_counts_are_pluralised(tmp_path: Path) -> None:
    (tmp_path / "WORKFLOW.md").write_text(
        "---\ntracker: {kind: local}\nserver: {disabled_tools: ['local_[cuq]*']}\n---\n",
        encoding="utf-8",
    )
    done = lorenz(tmp_path, "check")
    assert done.stdout.endswith("packs local (1 tool)\n"), done.stdout


def test_tools_all_lists_what_is_installed_without_the_local_board(tmp_path: Path) -> None:
    """No WORKFLOW.md and no lorenz-local: the embedded default cannot load, but listing needs no workflow."""
    done = lorenz(tmp_path, "tools", "--all", LORENZ_LOAD_PLUGINS="lorenz-jira", LORENZ_DISABLE_PLUGINS="lorenz-local")
    assert done.returncode == 0, done.stderr
    assert any(line.split()[:4] == ["jira_query", "jira", "lorenz-jira", "0.1.0"] for line in done.stdout.splitlines())
    assert "embedded default" not in done.stderr
    mounted_only = lorenz(tmp_path, "tools", LORENZ_LOAD_PLUGINS="lorenz-jira")
    assert mounted_only.returncode == 1  # without --all there is a workflow to load, and none loads
    assert "needs the local tracker plugin" in mounted_only.stderr
