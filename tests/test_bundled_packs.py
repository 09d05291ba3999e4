"""The four bundled packs mounted together, as a user first meets them: `lorenz tools --json` shows
annotations and an outputSchema for all 20 tools, the landing page shows none without annotations,
and `lorenz lint` finds nothing in any of the four projects. Listing needs no network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from lorenz.host import RunningServer, serve_in_thread

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ("local", "jira", "linear", "slack")
WORKFLOW = """---
tracker:
  kind: local
  path: ./board
tools:
  local: {}
  jira: {}
  linear: {}
  slack: {}
---
Work the board.
"""


def lorenz(*args: str, cwd: Path, **env: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "lorenz", *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


@pytest.fixture
def workflow(tmp_path: Path) -> Path:
    (tmp_path / "WORKFLOW.md").write_text(WORKFLOW, encoding="utf-8")
    return tmp_path


def test_every_bundled_tool_lists_annotations_and_an_output_schema(workflow: Path) -> None:
    report = lorenz("tools", "--json", cwd=workflow)
    tools = report["tools"]
    assert isinstance(tools, list) and report["failures"] == []
    assert sorted({tool["pack"] for tool in tools}) == sorted(PLUGINS)
    assert len(tools) == 20
    for tool in tools:
        hints = tool.get("annotations") or {}
        assert {"readOnlyHint", "idempotentHint", "openWorldHint"} <= set(hints), tool["name"]
        assert hints["openWorldHint"] is (tool["pack"] != "local"), tool["name"]
        schema = tool.get("outputSchema")
        assert isinstance(schema, dict) and schema.get("type") == "object", tool["name"]


@pytest.fixture
def server(workflow: Path) -> Iterator[RunningServer]:
    with serve_in_thread(workflow / "WORKFLOW.md", cwd=workflow) as running:
        yield running


@pytest.mark.slow
def test_the_landing_page_shows_no_tool_without_annotations(server: RunningServer) -> None:
    page = httpx.get(server.base_url + "/").text
    assert page.count("local_query") >= 1 and "slack_channel_context" in page and "linear_graphql" in page
    assert "no annotations" not in page


@pytest.mark.parametrize("plugin", PLUGINS)
def test_each_bundled_project_lints_clean(plugin: str, tmp_path: Path) -> None:
    report = lorenz("lint", "--json", str(ROOT / "plugins" / plugin), cwd=tmp_path, LORENZ_LOAD_PLUGINS="none")
    assert [pack["name"] for pack in report["packs"]] == [plugin]  # type: ignore[index]
    assert (report["errors"], report["warnings"]) == (0, 0), report["diagnostics"]
