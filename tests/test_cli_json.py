"""Every ``--json`` output is the object docs/cli-json.md documents, with ``"version": 1`` (issue 13): these
tests pin the keys, so a change to a shape shows up here and in the doc together."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

Lorenz = Callable[..., subprocess.CompletedProcess[str]]


def run_json(lorenz: Lorenz, *args: str, code: int = 0, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = lorenz(*args, env=env)
    assert done.returncode == code, done.stdout + done.stderr
    value = json.loads(done.stdout)
    assert isinstance(value, dict)
    assert value["version"] == 1
    return value


def test_plugins_json(lorenz: Lorenz) -> None:
    """`plugins --json`: {version, plugins, failures, disabled, permissions} (exit 1: a plugin failed)."""
    report = run_json(lorenz, "plugins", "--json", env={"LORENZ_DISABLE_PLUGINS": "lorenz-slow"}, code=1)
    assert set(report) == {"version", "plugins", "failures", "disabled", "permissions"}
    acme = next(plugin for plugin in report["plugins"] if plugin["name"] == "acme")
    assert set(acme) == {"name", "distribution", "version", "packs", "trackers"}
    (failure,) = report["failures"]
    assert set(failure) == {"group", "name", "distribution", "version", "error", "traceback"}
    assert failure["distribution"] == "lorenz-broken"
    assert report["disabled"] == ["lorenz-slow"]


def test_check_json(lorenz: Lorenz) -> None:
    """`check --json`: {version, workflow, embeddedDefault, tracker, packs, tools}."""
    report = run_json(lorenz, "check", "--json")
    assert set(report) == {"version", "workflow", "embeddedDefault", "tracker", "packs", "tools"}
    assert Path(report["workflow"]).name == "WORKFLOW.md"
    assert (report["embeddedDefault"], report["tracker"], report["packs"], report["tools"]) == (
        False,
        "acme",
        ["acme"],
        ["acme_echo"],
    )


def test_tools_json_mounted_and_all(lorenz: Lorenz) -> None:
    """`tools --json`: {version, workflow, tools, failures}, each tool {name, pack, distribution, mounted,
    description, inputSchema, ...}; --all adds the installed tools nothing mounts; --budget adds
    contextTokens to each tool and their total."""
    report = run_json(lorenz, "tools", "--json")
    assert set(report) == {"version", "workflow", "tools", "failures"}
    (tool,) = report["tools"]
    assert tool == {
        "name": "acme_echo",
        "pack": "acme",
        "distribution": {"name": "lorenz-acme", "version": "0.1.0"},
        "mounted": True,
        "description": "Echo a message back. Args: message.",
        "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
    }
    assert report["failures"] == []
    everything = run_json(lorenz, "tools", "--all", "--json")
    mounted = {tool["name"]: tool["mounted"] for tool in everything["tools"]}
    assert mounted == {"acme_echo": True, "zed_ping": False, "slow_wait": False}
    budget = run_json(lorenz, "tools", "--budget", "--json")
    assert set(budget) == {"version", "workflow", "tools", "contextTokens", "failures"}
    (priced,) = budget["tools"]
    assert priced == {**tool, "contextTokens": budget["contextTokens"]}


def test_issues_json(lorenz: Lorenz) -> None:
    """`issues --json`: {version, tracker, projectUrl, issues}, each issue the camelCase record."""
    report = run_json(lorenz, "issues", "--json")
    assert set(report) == {"version", "tracker", "projectUrl", "issues"}
    assert report["tracker"] == "acme" and report["projectUrl"] is None
    (issue,) = report["issues"]
    assert (issue["id"], issue["identifier"], issue["stateType"]) == ("A-1", "A-1", "unstarted")


def test_lint_json(lorenz: Lorenz) -> None:
    """`lint --json`: {version, packs, diagnostics, errors, warnings} (zed answers an unknown tool with a
    success: an error, exit 1)."""
    report = run_json(lorenz, "lint", "--json", env={"LORENZ_LOAD_PLUGINS": "lorenz-zed"}, code=1)
    assert set(report) == {"version", "packs", "diagnostics", "errors", "warnings"}
    assert report["packs"] == [{"name": "zed", "tools": ["zed_ping"], "disabled": []}]
    diagnostic = report["diagnostics"][0]
    assert set(diagnostic) == {"rule", "severity", "pack", "tool", "message"}
    assert report["errors"] == 1 and report["errors"] + report["warnings"] == len(report["diagnostics"])


def test_a_failed_json_command_is_an_error_object(lorenz: Lorenz) -> None:
    """A --json command that cannot produce its object prints {version, error} on stdout (and the line on
    stderr), exit 1."""
    for command in ("check", "tools", "issues"):
        report = run_json(lorenz, command, "missing.md", "--json", code=1)
        assert set(report) == {"version", "error"}
        assert report["error"].startswith("missing_workflow_file: ")
