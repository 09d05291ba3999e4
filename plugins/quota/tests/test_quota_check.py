"""``lorenz plugins`` lists the quota middleware; ``lorenz check`` names a bad option or name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def lorenz(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = "lorenz-quota,lorenz-local"
    command = [sys.executable, "-m", "lorenz", *args]
    return subprocess.run(command, cwd=directory, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_plugins_lists_the_middleware(tmp_path: Path) -> None:
    listed = lorenz(tmp_path, "plugins")
    assert "quota (lorenz-quota 0.1.0): trackers: -; packs: -; middleware: quota" in listed.stdout


@pytest.mark.parametrize(
    ("server", "said"),
    [
        (
            "  middleware: [quota]\n  middleware_options:\n    quota:\n      limits: [{rate: 5, burts: 10}]\n",
            'server.middleware_options.quota: quota.limits[0].burts is not supported (did you mean "burst"?)',
        ),
        ("  middleware: [qouta]\n", 'server.middleware: unknown middleware qouta (did you mean "quota"?)'),
    ],
)
def test_check_names_the_key_at_fault(tmp_path: Path, server: str, said: str) -> None:
    (tmp_path / "WORKFLOW.md").write_text(f"---\ntracker: {{kind: local}}\nserver:\n{server}---\n", encoding="utf-8")
    checked = lorenz(tmp_path, "check")
    assert checked.returncode == 1 and said in checked.stderr
