"""The ``lorenz`` CLI over real plugin distributions (issue 2's "done when")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lorenz.cli import main

ONLY_TEST_DISTS = "lorenz-acme,lorenz-broken,lorenz-typo,lorenz-raising"
WORKFLOW = "---\ntracker:\n  kind: acme\n---\nDo the work.\n"


@pytest.fixture
def env(dist_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Only the test distributions load; the working directory holds an acme workflow."""
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", ONLY_TEST_DISTS)
    monkeypatch.delenv("LORENZ_WORKFLOW", raising=False)
    work = tmp_path / "work"
    work.mkdir()
    (work / "WORKFLOW.md").write_text(WORKFLOW, encoding="utf-8")
    monkeypatch.chdir(work)
    return work


def run_cli(dist_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    environ = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(dist_dir), os.environ.get("PYTHONPATH", "")]),
        "LORENZ_LOAD_PLUGINS": ONLY_TEST_DISTS,
    }
    return subprocess.run(
        [sys.executable, "-m", "lorenz", *args], cwd=cwd, env=environ, capture_output=True, text=True, check=False
    )


def test_plugins_json_lists_good_and_broken(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz plugins --json` lists the installed pack with its version and the broken one as a failure
    (exit 1: a plugin failed)."""
    assert main(["plugins", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    acme = next(p for p in report["plugins"] if p["distribution"] == "lorenz-acme")
    assert acme == {
        "name": "acme",
        "distribution": "lorenz-acme",
        "version": "0.1.0",
        "packs": ["acme"],
        "trackers": ["acme"],
    }
    broken = next(f for f in report["failures"] if f["distribution"] == "lorenz-broken")
    assert "ModuleNotFoundError" in broken["error"]


def test_plugins_text_shows_failures(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The text listing names each plugin's packs and every failure; -v adds the traceback."""
    assert main(["plugins"]) == 1
    out = capsys.readouterr().out
    assert "acme (lorenz-acme 0.1.0): trackers: acme; packs: acme" in out
    assert "FAILED broken (lorenz-broken 0.1.0): ModuleNotFoundError" in out
    assert "Traceback" not in out
    assert main(["plugins", "-v"]) == 1
    verbose = capsys.readouterr().out
    assert "    Traceback (most recent call last):" in verbose
    assert "lorenz_broken.py" in verbose


def test_tools_lists_the_mounted_tools(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz tools --json` shows the mounted tool with its pack and camelCase schema."""
    assert main(["tools", "--json"]) == 0
    (tool,) = json.loads(capsys.readouterr().out)["tools"]
    assert tool["name"] == "acme_echo"
    assert tool["pack"] == "acme"
    assert tool["mounted"] is True
    assert tool["inputSchema"]["required"] == ["message"]
    assert main(["tools"]) == 0
    assert "acme_echo  [acme]  Echo a message back." in capsys.readouterr().out


def test_tools_budget_shows_each_tools_context_cost_and_the_total(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`lorenz tools --budget` (and `--json`): the tool's tools/list JSON bytes / 4, rounded up, and the total."""
    assert main(["tools", "--json"]) == 0
    (tool,) = json.loads(capsys.readouterr().out)["tools"]
    wire = {key: value for key, value in tool.items() if key not in {"pack", "distribution", "mounted"}}
    cost = -(-len(json.dumps(wire, separators=(",", ":")).encode()) // 4)
    assert main(["tools", "--budget"]) == 0
    first, total = capsys.readouterr().out.splitlines()
    assert first.split() == ["acme_echo", "[acme]", str(cost), "tokens"]
    assert total.split()[:2] == ["total", str(cost)]
    assert total.endswith("tokens for 1 tool (estimated: bytes of each tool's tools/list JSON / 4)")
    assert main(["tools", "--budget", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["contextTokens"] == cost
    assert report["tools"] == [{**tool, "contextTokens": cost}]


def test_tools_budget_shows_what_server_catalog_lists_a_new_caller(
    env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With `server.catalog`, `--budget` adds what a caller who has called nothing yet is listed."""
    from lorenz.toolsearch.budget import CALL_TOOL, SEARCH_TOOL
    from lorenz.toolsearch.cost import context_tokens

    workflow = "---\ntracker:\n  kind: acme\nserver:\n  catalog: {budget_tokens: 1}\n---\nDo the work.\n"
    (env / "WORKFLOW.md").write_text(workflow, encoding="utf-8")
    assert main(["tools", "--budget", "--json"]) == 0
    served = json.loads(capsys.readouterr().out)["served"]
    two = context_tokens(SEARCH_TOOL.to_wire()) + context_tokens(CALL_TOOL.to_wire())
    assert served == {
        "tools": ["lorenz_search_tools", "lorenz_call_tool"],
        "leftOut": ["acme_echo"],
        "contextTokens": two,
    }
    assert main(["tools", "--budget"]) == 0
    assert capsys.readouterr().out.splitlines()[-3:] == [
        f"server.catalog lists a new caller 2 tools, {two} tokens:",
        "  lorenz_search_tools, lorenz_call_tool",
        "  left out (found by lorenz_search_tools, or called by name): acme_echo",
    ]


def test_call_runs_the_tool(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz call TOOL JSON` prints the ToolResult and exits 0 on success."""
    assert main(["call", "acme_echo", '{"message": "hi"}']) == 0
    assert json.loads(capsys.readouterr().out) == {"success": True, "result": {"echo": "hi"}}


def test_call_failure_exits_one(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A failure result is printed and exits 1; an unknown tool lists the mounted ones."""
    assert main(["call", "WORKFLOW.md", "acme_echo", '{"message": ""}']) == 1
    assert json.loads(capsys.readouterr().out)["error"] == "'message' is required"
    assert main(["call", "nope"]) == 1
    assert json.loads(capsys.readouterr().out)["result"]["error"]["supportedTools"] == ["acme_echo"]


def test_call_bad_json_is_one_clear_line(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Malformed JSON arguments are a one-line error, not a traceback."""
    assert main(["call", "acme_echo", "{oops"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("lorenz: JSON-ARGS is not valid JSON")
    assert "Traceback" not in err


def test_issues_lists_candidates(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz issues --json` shows what the tracker's client hands out now."""
    assert main(["issues", "--json"]) == 0
    (issue,) = json.loads(capsys.readouterr().out)["issues"]
    assert (issue["id"], issue["state"], issue["stateType"], issue["title"]) == (
        "A-1",
        "Todo",
        "unstarted",
        "Fix the widget",
    )


def test_check_summary_and_errors(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz check` prints a one-line summary, or the exact error and exit 1."""
    assert main(["check"]) == 0
    assert "tracker acme, packs acme (1 tool)" in capsys.readouterr().out
    Path("bad.md").write_text("---\ntracker:\n  kind: github\n---\n", encoding="utf-8")
    assert main(["check", "bad.md"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("lorenz: unsupported tracker.kind: github (known kinds: acme")
    assert main(["check", "missing.md"]) == 1
    assert "missing_workflow_file" in capsys.readouterr().err


def test_check_refuses_what_serve_would_refuse(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A workflow `lorenz serve` would not start (all interfaces, no token) does not pass `lorenz check`."""
    Path("open.md").write_text("---\ntracker: {kind: acme}\nserver: {host: 0.0.0.0}\n---\n", encoding="utf-8")
    assert main(["check", "open.md"]) == 1
    err = capsys.readouterr().err
    assert (
        "lorenz serve would refuse it: refusing to listen on 0.0.0.0, beyond this machine, without an access token"
        in err
    )
    Path("closed.md").write_text(
        "---\ntracker: {kind: acme}\nserver: {host: 0.0.0.0, token: s3cret-token}\n---\n", encoding="utf-8"
    )
    assert main(["check", "closed.md"]) == 0


def test_unknown_pack_in_tools_map(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A tools: key naming no registered pack is refused with the known packs."""
    Path("WORKFLOW.md").write_text("---\ntracker: {kind: acme}\ntools: {gitlab: {}}\n---\n", encoding="utf-8")
    assert main(["tools"]) == 1
    assert "unsupported tool pack: gitlab (known tool packs: acme)" in capsys.readouterr().err


def test_a_mounted_pack_that_is_gone_says_what_to_do(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 44: after an uninstall the workflow still mounts the pack; the refusal names both ways out."""
    Path("WORKFLOW.md").write_text("---\ntracker: {kind: acme}\ntools: {weather: {}}\n---\n", encoding="utf-8")
    assert main(["tools"]) == 1
    err = capsys.readouterr().err
    assert "unsupported tool pack: weather" in err
    assert "run lorenz unmount weather to stop mounting it, or lorenz install the pack that provides it" in err


def test_plugins_command_does_not_import_mcp(dist_dir: Path, tmp_path: Path) -> None:
    """`lorenz plugins` stays light: the MCP SDK is not imported."""
    code = "import sys; from lorenz.cli import main; main(['plugins', '--json']); print('mcp' in sys.modules)"
    environ = {**os.environ, "PYTHONPATH": str(dist_dir), "LORENZ_LOAD_PLUGINS": ONLY_TEST_DISTS}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=environ, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "False"


def test_cli_as_subprocess(dist_dir: Path, tmp_path: Path) -> None:
    """`python -m lorenz` works end to end: tools from an installed distribution, broken one reported."""
    (tmp_path / "WORKFLOW.md").write_text(WORKFLOW, encoding="utf-8")
    done = run_cli(dist_dir, "call", "acme_echo", '{"message": "via subprocess"}', cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == {"echo": "via subprocess"}
    listing = run_cli(dist_dir, "plugins", cwd=tmp_path)
    assert "FAILED broken" in listing.stdout


def test_embedded_default_without_local_plugin(
    dist_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With no WORKFLOW.md and no local tracker installed, the error says what to install."""
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", ONLY_TEST_DISTS)
    monkeypatch.delenv("LORENZ_WORKFLOW", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["tools"]) == 1
    err = capsys.readouterr().err
    assert "embedded default" in err
    assert "pip install -e plugins/local" in err


def test_failed_plugins_are_warned_about(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Workflow commands warn about plugins that failed to load and keep working."""
    assert main(["check"]) == 0
    err = capsys.readouterr().err
    assert "lorenz: warning: plugin broken (lorenz-broken 0.1.0) failed to load: ModuleNotFoundError" in err


def test_plugin_option_after_the_command(
    dist_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-p MODULE` registers a plugin module in-process, before or after the command."""
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "")
    monkeypatch.chdir(tmp_path)
    Path("WORKFLOW.md").write_text(WORKFLOW, encoding="utf-8")
    assert main(["tools", "-p", "lorenz_acme"]) == 0
    assert "acme_echo" in capsys.readouterr().out
    assert main(["-p", "lorenz_acme", "tools"]) == 0
    assert "acme_echo" in capsys.readouterr().out
    assert main(["tools"]) == 1
    assert "unsupported tracker.kind: acme" in capsys.readouterr().err


BOOM_PLUGIN = """
import datetime as dt
import os

from lorenz import ToolSpec, hookimpl, tool_success


class BoomPack:
    name = "boom"

    def tool_specs(self, settings):
        if os.environ.get("BOOM_RAISE"):
            key = os.environ["BOOM_API_KEY"]
            raise RuntimeError("cannot list tools\\n  api_key=" + key + " for " + key)
        return [ToolSpec(name="boom_when", description="Say when.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"at": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)})


@hookimpl
def lorenz_register_tool_packs(register):
    register(BoomPack())
"""


@pytest.fixture
def boom(env: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `-p lorenz_cli_boom` plugin module mounted next to acme."""
    (env / "lorenz_cli_boom.py").write_text(BOOM_PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(env))
    (env / "WORKFLOW.md").write_text("---\ntracker: {kind: acme}\ntools: {boom: {}}\n---\n", encoding="utf-8")
    return env


def test_pack_raising_in_tool_specs_is_one_redacted_line(
    boom: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pack whose tool_specs raises a non-ValueError is one redacted error line, not a traceback."""
    monkeypatch.setenv("BOOM_RAISE", "1")
    monkeypatch.setenv("BOOM_API_KEY", "sekrit-value-123")
    for command in (["check"], ["tools"], ["call", "boom_when"]):
        assert main(["-p", "lorenz_cli_boom", *command]) == 1
        captured = capsys.readouterr()
        err = [line for line in captured.err.splitlines() if "warning" not in line]
        line = "lorenz: pack boom: tool_specs raised RuntimeError: cannot list tools api_key=[REDACTED] for [REDACTED]"
        assert line in err
        assert "sekrit" not in captured.err + captured.out


def test_call_prints_non_json_values_as_strings(boom: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz call` prints a result holding a datetime instead of crashing on it."""
    assert main(["-p", "lorenz_cli_boom", "call", "boom_when"]) == 0
    assert json.loads(capsys.readouterr().out) == {"success": True, "result": {"at": "2026-01-02 03:04:05+00:00"}}


@pytest.mark.parametrize("port", ["70000", "-1", "http"])
def test_serve_port_out_of_range_is_a_usage_error(port: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz serve --port` outside 0-65535 is an argparse error, not an OverflowError traceback."""
    with pytest.raises(SystemExit) as exit_info:
        main(["serve", f"--port={port}"])
    assert exit_info.value.code == 2
    assert "argument --port: port must be 0-65535" in capsys.readouterr().err


def test_call_checks_arguments_against_the_schema(env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz call` refuses arguments that break the tool's inputSchema, naming the field, as the host does."""
    assert main(["call", "acme_echo", '{"message": 5}']) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["error"] == "invalid arguments for tool acme_echo: message: must be a string"


def test_allow_list_is_named_when_plugins_seem_missing(
    dist_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With LORENZ_LOAD_PLUGINS set, messages about missing plugins say the allow-list is why."""
    monkeypatch.setenv("LORENZ_LOAD_PLUGINS", "")
    monkeypatch.chdir(tmp_path)
    assert main(["plugins"]) == 0
    assert "no plugins loaded (LORENZ_LOAD_PLUGINS='' limits which plugins load)" in capsys.readouterr().out
    Path("WORKFLOW.md").write_text(WORKFLOW, encoding="utf-8")
    assert main(["check"]) == 1
    assert "LORENZ_LOAD_PLUGINS='' limits which plugins load" in capsys.readouterr().err


def test_lint_of_a_file_without_a_pack_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`lorenz lint FILE` that registers no pack says so and exits 1, instead of a clean 0-pack report."""
    module = tmp_path / "nothing_here.py"
    module.write_text("VALUE = 1\n", encoding="utf-8")
    assert main(["lint", str(module)]) == 1
    assert "registers no tool pack" in capsys.readouterr().err
