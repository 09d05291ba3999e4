"""lorenz.testing.ServedWorkflow: ``lorenz serve`` in a subprocess, awaited until it prints its URL."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx
import pytest

from lorenz.testing import ServedWorkflow

pytestmark = pytest.mark.slow


def _workflow(directory: Path, front_matter: str) -> Path:
    (directory / "WORKFLOW.md").write_text(f"---\n{front_matter}---\nWork the board.\n", encoding="utf-8")
    return directory


def test_serves_the_workflow_and_stops_it_gracefully_on_leaving(tmp_path: Path) -> None:
    directory = _workflow(tmp_path, "tracker:\n  kind: local\n  path: ./board\n")
    with ServedWorkflow(directory) as server:
        assert server.url.startswith("http://127.0.0.1:") and server.url.endswith("/mcp")
        assert httpx.get(server.base + "/healthz", timeout=10).json()["status"] == "ok"
    assert server.process.returncode == 0  # SIGTERM, not SIGKILL: the host stopped by itself
    assert "lorenz: stopped" in server.stderr()


def test_a_workflow_that_cannot_start_fails_at_once_saying_why(tmp_path: Path) -> None:
    directory = _workflow(tmp_path, "tracker:\n  kind: no-such-tracker\n")
    started = time.monotonic()
    with pytest.raises(AssertionError, match="no URL printed:\n(?s:.*)no-such-tracker"):
        ServedWorkflow(directory, timeout=600)
    assert time.monotonic() - started < 300  # its exit ended the wait, not the timeout


def test_until_stderr_waits_for_a_line_on_its_way_and_names_one_that_never_comes(tmp_path: Path) -> None:
    """A line written after what a test saw arrives later through the pipe: waited for, not raced."""
    script = "import sys, time\nprint('lorenz: serving at http://127.0.0.1:1/mcp', file=sys.stderr, flush=True)\n"
    script += "time.sleep(0.5)\nprint('the late line', file=sys.stderr, flush=True)\n"
    served = ServedWorkflow(tmp_path, command=[sys.executable, "-c", script])
    assert "the late line" not in served.stderr()
    assert "the late line" in served.until_stderr("the late line", timeout=60)
    with pytest.raises(AssertionError, match="'never' never written:\n(?s:.*)the late line"):
        served.until_stderr("never", timeout=60)  # the process ended: no waiting out the timeout
    served.stop()
