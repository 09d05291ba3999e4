"""Real upstream servers for the ``mcp`` pack's tests, and ``lorenz serve`` in a subprocess.

``mcp-server-time`` (PyPI) gets a venv of its own and ``@modelcontextprotocol/server-everything``
(npm) a prefix of its own, both under ``.pytest_cache/lorenz-mcp`` and made once (under a file lock:
parallel workers share them); a test needing one is skipped, saying why, when it cannot be installed.
The SDK's own ``MCPServer`` is served over Streamable HTTP from this process.
"""

from __future__ import annotations

import fcntl
import logging
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import mcp
import pytest

from lorenz.testing import ServedWorkflow

ROOT = Path(__file__).resolve().parents[3]
CACHE = ROOT / ".pytest_cache" / "lorenz-mcp"


def _install(marker: Path, steps: list[list[str]], what: str) -> None:
    CACHE.mkdir(parents=True, exist_ok=True)
    # One installer at a time: parallel test workers share the cache, and the second waits for the first.
    with (CACHE / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not marker.exists():
            _run_steps(steps, what)


def _run_steps(steps: list[list[str]], what: str) -> None:
    for step in steps:
        try:
            done = subprocess.run(step, capture_output=True, text=True, timeout=600, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"{what} could not be installed ({exc})")
        if done.returncode != 0:
            pytest.skip(f"{what} could not be installed: {(done.stderr or done.stdout).strip()[-300:]}")


@pytest.fixture(scope="session")
def time_server() -> list[str]:
    """The command of ``mcp-server-time`` from PyPI, in its own venv."""
    venv = CACHE / "time-venv"
    program = venv / "bin" / "mcp-server-time"
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "mcp-server-time"]
    _install(program, [[sys.executable, "-m", "venv", str(venv)], pip], "mcp-server-time (PyPI)")
    if not program.exists():
        pytest.skip("mcp-server-time installed no mcp-server-time program")
    return [str(program)]


@pytest.fixture(scope="session")
def everything_server() -> list[str]:
    """The command of ``@modelcontextprotocol/server-everything`` from npm (stdio)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("node and npm are needed for @modelcontextprotocol/server-everything")
    prefix = CACHE / "npm"
    script = prefix / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    step = [
        npm,
        "install",
        "-s",
        "--no-audit",
        "--no-fund",
        "--prefix",
        str(prefix),
        "@modelcontextprotocol/server-everything",
    ]
    _install(script, [step], "@modelcontextprotocol/server-everything (npm)")
    if not script.exists():
        pytest.skip("@modelcontextprotocol/server-everything installed no dist/index.js")
    return [node, str(script), "stdio"]


class Served(ServedWorkflow):
    """``lorenz serve --port 0`` on a workflow, and what a client is given by it."""

    def tools(self) -> set[str]:
        """The tool names a new client is given now."""

        async def names() -> set[str]:
            async with mcp.Client(self.url) as client:
                return {tool.name for tool in (await client.list_tools()).tools}

        return anyio.run(names)

    def until_listed(self, want: set[str], seconds: float = 120) -> None:
        """Wait until a new client is given ``want`` (among others): an upstream slower than the
        mount's 5 s wait, as on a loaded machine, is mounted without tools and listed once it answers."""
        deadline = time.monotonic() + seconds
        while not want <= (found := self.tools()):
            if time.monotonic() > deadline:
                raise AssertionError(f"{sorted(want - found)} never listed:\n{self.stderr()}")
            time.sleep(0.2)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    """``serve(front_matter, env=None, args=())``: write WORKFLOW.md and start ``lorenz serve``
    (with ``args``) on it."""
    started: list[Served] = []

    def start(front_matter: str, env: Mapping[str, str] | None = None, args: Sequence[str] = ()) -> Served:
        (tmp_path / "WORKFLOW.md").write_text(f"---\n{front_matter}---\n", encoding="utf-8")
        base = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
        environ = {**base, "LORENZ_LOAD_PLUGINS": "lorenz-mcp", **(env or {})}
        command = [sys.executable, "-m", "lorenz", "serve", "--port", "0", *args]
        served = Served(tmp_path, environ, command, timeout=120)
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop()


@pytest.fixture
def stderr_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """``caplog`` holding what upstreams' stderr relays log (``lorenz.stderr``, from INFO), however
    an earlier test in this process configured the ``lorenz`` loggers."""
    logger = logging.getLogger("lorenz.stderr")
    level, propagate = logger.level, logger.propagate
    logger.addHandler(caplog.handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    try:
        yield caplog
    finally:
        logger.removeHandler(caplog.handler)
        logger.setLevel(level)
        logger.propagate = propagate
