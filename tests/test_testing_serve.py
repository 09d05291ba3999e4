"""lorenz.testing.ServedWorkflow: ``lorenz serve`` in a subprocess, awaited until it prints its URL."""

from __future__ import annotations

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
