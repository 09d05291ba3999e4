"""The installed ``lorenz`` command on WORKFLOW.md mistakes (issue 13): every typo is caught, errors
point into the file, packs that cannot work fail ``lorenz check``, and tools-only workflows serve."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

LORENZ = Path(sys.executable).with_name("lorenz")
BUNDLED = "lorenz-local,lorenz-jira,lorenz-linear,lorenz-slack"


def lorenz(
    cwd: Path, *args: str, workflow: str | None = None, plugins: str = BUNDLED, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed command in ``cwd`` (writing ``workflow`` to its WORKFLOW.md first)."""
    if workflow is not None:
        (cwd / "WORKFLOW.md").write_text(workflow, encoding="utf-8")
    environ = {
        key: value for key, value in os.environ.items() if not key.startswith(("LORENZ_", "JIRA_", "LINEAR_", "SLACK_"))
    }
    environ.update({"LORENZ_LOAD_PLUGINS": plugins, **(env or {})})
    return subprocess.run(
        [str(LORENZ), *args], cwd=cwd, env=environ, capture_output=True, text=True, check=False, timeout=60
    )


@pytest.mark.parametrize(
    ("workflow", "message"),
    [
        (
            "---\ntracker: {kind: local}\ntoolz: {acme: {}}\n---\n",
            'lorenz: unknown top-level key "toolz" (did you mean "tools"?)',
        ),
        (
            "---\ntracker: {kind: local}\nsever: {port: 5000}\n---\n",
            'lorenz: unknown top-level key "sever" (did you mean "server"?)',
        ),
        ("---\ntrackr:\n  kind: local\n---\n", 'lorenz: unknown top-level key "trackr" (did you mean "tracker"?)'),
        (
            "---\ntracker: {kind: local}\nserver: {prot: 5000}\n---\n",
            'lorenz: server contains unsupported keys: prot (did you mean "port"?)',
        ),
        (
            "---\ntracker: {kind: local, dispatch: {only_route: [a]}}\n---\n",
            'lorenz: tracker.dispatch contains unsupported keys: only_route (did you mean "only_routes"?)',
        ),
        (
            "---\ntracker: {kind: board}\ntrackers:\n  board: {provider: local, pth: ./b}\n---\n",
            'lorenz: unsupported tracker option(s) for kind "local": pth (did you mean "path"?)',
        ),
        (
            "---\ntracker: {kind: local}\ntools: {local: {id_prefx: X-}}\n---\n",
            'lorenz: tools.local.id_prefx is not supported (did you mean "id_prefix"?)',
        ),
    ],
)
def test_typos_fail_check_naming_the_key(tmp_path: Path, workflow: str, message: str) -> None:
    """A misspelt key at any level fails `lorenz check` with the key and the closest known one."""
    done = lorenz(tmp_path, "check", workflow=workflow)
    assert (done.returncode, done.stdout, done.stderr) == (1, "", message + "\n")


def test_serve_refuses_a_misspelt_server_section(tmp_path: Path) -> None:
    """`sever: {port: 5000}` no longer serves on the default port: `lorenz serve` exits with the error."""
    done = lorenz(tmp_path, "serve", workflow="---\ntracker: {kind: local}\nsever: {port: 5000}\n---\n")
    assert done.returncode == 1
    assert done.stderr == 'lorenz: unknown top-level key "sever" (did you mean "server"?)\n'


def test_yaml_error_points_into_the_file(tmp_path: Path) -> None:
    """A YAML error is `WORKFLOW.md:LINE:COL: message` in the file's own lines, no internal prefix."""
    done = lorenz(tmp_path, "check", workflow="---\ntracker:\n  kind: local\n   path: ./board\n---\nBody\n")
    assert done.returncode == 1
    assert done.stderr == "lorenz: WORKFLOW.md:4:8: mapping values are not allowed here\n"


def test_yaml_error_names_a_workflow_given_elsewhere(tmp_path: Path) -> None:
    """A workflow outside the working directory is named by its absolute path."""
    other = tmp_path / "conf"
    other.mkdir()
    (other / "flow.md").write_text("---\ntracker: {kind: local}\ntracker: {kind: jira}\n---\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    done = lorenz(work, "check", str(other / "flow.md"))
    assert done.stderr == f'lorenz: {other / "flow.md"}:3:1: found duplicate key "tracker"\n'


@pytest.mark.parametrize(
    ("workflow", "message"),
    [
        ("", 'WORKFLOW.md: the file is empty; a workflow starts with front matter between two "---" lines'),
        (
            "Just instructions.\n",
            'WORKFLOW.md:1:1: no front matter: a workflow starts with a "---" line, then its settings, '
            'then another "---" line',
        ),
        (
            "---\ntracker: {kind: local}\n",
            'WORKFLOW.md:1:1: the front matter opened here is not closed: add a "---" line after the settings',
        ),
    ],
)
def test_front_matter_problems_have_their_own_messages(tmp_path: Path, workflow: str, message: str) -> None:
    """Empty file, missing and unclosed front matter no longer all say `tracker.kind is required`."""
    done = lorenz(tmp_path, "check", workflow=workflow)
    assert (done.returncode, done.stderr) == (1, f"lorenz: {message}\n")


JIRA = (
    "---\ntracker:\n  kind: jira\n  base_url: https://acme.atlassian.example\n  email: dev@acme.example\n"
    "  api_key: $JIRA_API_KEY\n  project_keys: [ENG]\n---\n"
)


def test_unset_variable_is_named(tmp_path: Path) -> None:
    """With $JIRA_API_KEY unset the error names the variable; with it set the workflow checks."""
    done = lorenz(tmp_path, "check", workflow=JIRA)
    assert (done.returncode, done.stderr) == (1, "lorenz: tracker.api_key: $JIRA_API_KEY is not set\n")
    done = lorenz(tmp_path, "check", env={"JIRA_API_KEY": "jira-token-123"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"ok: {tmp_path / 'WORKFLOW.md'}: tracker jira, packs jira (7 tools)")


def test_bad_url_is_refused(tmp_path: Path) -> None:
    """`base_url: not a url` no longer passes."""
    done = lorenz(tmp_path, "check", workflow=JIRA.replace("https://acme.atlassian.example", "not a url"))
    assert (done.returncode, done.stderr) == (1, "lorenz: tracker.base_url must be an http(s) URL with a host\n")


def test_pack_that_cannot_work_fails_check(tmp_path: Path) -> None:
    """The jira pack beside the local tracker (every call would fail) fails the check, naming what it lacks."""
    done = lorenz(tmp_path, "check", workflow="---\ntracker: {kind: local}\ntools: {jira: {}}\n---\n")
    assert done.returncode == 1
    assert done.stderr == (
        f"lorenz: {tmp_path / 'WORKFLOW.md'}: pack jira: reads tracker.base_url, tracker.email, tracker.api_key "
        "from a jira or jira-mcp tracker, but tracker.kind is local\n"
    )


def test_pack_problem_names_an_unset_variable(tmp_path: Path) -> None:
    """`tools.linear.api_key: $LINEAR_API_KEY` unset: the pack's problem names the variable."""
    workflow = "---\ntools:\n  linear: {api_key: $LINEAR_API_KEY}\n---\n"
    done = lorenz(tmp_path, "check", workflow=workflow)
    assert done.stderr == (
        f"lorenz: {tmp_path / 'WORKFLOW.md'}: pack linear: tools.linear.api_key: $LINEAR_API_KEY is not set\n"
    )
    assert lorenz(tmp_path, "check", env={"LINEAR_API_KEY": "lin-key-123"}).returncode == 0


def test_tools_only_workflow(tmp_path: Path) -> None:
    """`tools:` without a tracker is valid and serves those packs; `lorenz issues` says there is no tracker."""
    done = lorenz(tmp_path, "check", workflow="---\ntools:\n  local: {path: ./board}\n---\n")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"ok: {tmp_path / 'WORKFLOW.md'}: tracker -, packs local (5 tools)\n"
    tools = lorenz(tmp_path, "tools")
    assert tools.returncode == 0
    assert "local_query" in tools.stdout
    issues = lorenz(tmp_path, "issues")
    assert (issues.returncode, issues.stdout) == (1, "")
    assert issues.stderr == (
        f"lorenz: {tmp_path / 'WORKFLOW.md'}: no tracker is configured (this workflow only serves its tools: packs)\n"
    )


def test_missing_tracker_plugin_says_what_to_install(tmp_path: Path) -> None:
    """A bundled kind whose plugin is not installed names the distribution."""
    done = lorenz(tmp_path, "check", workflow="---\ntracker: {kind: jira}\n---\n", plugins="lorenz-local")
    assert done.returncode == 1
    assert done.stderr.startswith(
        "lorenz: unsupported tracker.kind: jira (known kinds: local; the jira tracker comes with lorenz-jira: "
        "pip install lorenz-jira)"
    )
    done = lorenz(tmp_path, "check", plugins="lorenz-none")
    assert done.stderr.startswith(
        "lorenz: unsupported tracker.kind: jira (no tracker plugins are installed; the jira tracker comes with "
        "lorenz-jira: pip install lorenz-jira)"
    )


WARNED = "---\ntracker: {kind: local, path: ./board}\npolling: {interval_ms: 5000}\nhooks: {}\n---\n"
WARNINGS = (
    'lorenz: warning: WORKFLOW.md: top-level key "polling" is read by the Lorenz daemon; this host ignores it\n'
    'lorenz: warning: WORKFLOW.md: top-level key "hooks" is read by the Lorenz daemon; this host ignores it\n'
    "lorenz: warning: WORKFLOW.md: `tracker.path` is deprecated; use `trackers.local.path` instead. Provider "
    "options under `tracker` (flat shape) are deprecated; move them into a `trackers.<name>` bundle with "
    "`provider:` selected by `tracker.kind`.\n"
)


def test_daemon_keys_and_deprecations_warn_once(tmp_path: Path) -> None:
    """The daemon's sections and a deprecated key are accepted with one warning each."""
    done = lorenz(tmp_path, "check", workflow=WARNED)
    assert done.returncode == 0
    assert done.stderr == WARNINGS


def test_serve_prints_the_warnings_once(tmp_path: Path) -> None:
    """`lorenz serve` prints the workflow's warnings once before it starts (here: the port is taken)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = lorenz(tmp_path, "serve", "--port", str(port), "--no-reload", workflow=WARNED)
    assert done.returncode == 1
    assert done.stderr.startswith(WARNINGS)
    assert done.stderr.count("lorenz: warning: WORKFLOW.md:") == 3
