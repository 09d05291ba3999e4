"""The landing page in a real browser (headless Chromium, Debian's ``chromium``): after a few calls
it renders the recent-calls table, and a screenshot of it is written (issue 14). Skipped where
Chromium is not installed (``.ci/run`` installs it)."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path
from types import ModuleType

import mcp
import pytest

from lorenz.host import serve_in_thread

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"),
]


def _browser(url: str, profile: Path, *extra: str) -> str:
    done = subprocess.run(
        [str(CHROMIUM), *FLAGS, f"--user-data-dir={profile}", *extra, url],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _png_size(path: Path) -> tuple[int, int]:
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", header[16:24])
    return width, height


@pytest.mark.anyio
async def test_landing_page_shows_recent_calls(tmp_path: Path, host_pack: ModuleType) -> None:
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\n---\nAdd things up.\n", encoding="utf-8")
    with serve_in_thread(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[host_pack]) as server:
        async with mcp.Client(server.url) as client:
            for n in range(3):
                await client.call_tool("demo_add", {"a": n, "b": 1})
            await client.call_tool("demo_fail", {})
        url = server.base_url + "/"
        dom = _browser(url, tmp_path / "profile", "--dump-dom")
        shot = tmp_path / "landing.png"
        _browser(url, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1200,2400")
    assert '<h2 id="calls">Recent calls</h2>' in dom
    assert dom.count('class="call-success"') == 3 and dom.count('class="call-failure"') == 1
    assert _png_size(shot) == (1200, 2400)
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
