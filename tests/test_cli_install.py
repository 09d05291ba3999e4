"""``lorenz install`` / ``lorenz uninstall`` into a temporary virtual environment (issue 13): by name, wheel,
directory and ``-e``, each followed by what the new distribution registered; the confirmation; and the core
refusing to uninstall itself.

The venv (conftest's ``venv``) sees this environment's packages (the core, pip, hatchling) through a ``.pth`` that calls
``site.addsitedir``, so nothing is downloaded: ``--system-site-packages`` would give the base interpreter's
packages, not this venv's. pip's own settings come from the environment, as a user's would.
"""

from __future__ import annotations

import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
WEATHER = ROOT / "examples" / "weather"

pytestmark = pytest.mark.slow


#: A build backend: hatchling's, 1.5 s slower to build a wheel.
SLOW_BACKEND = """
import time
from hatchling.build import *  # noqa: F403
from hatchling.build import build_wheel as _build_wheel


def build_wheel(*args, **kwargs):
    time.sleep(1.5)
    return _build_wheel(*args, **kwargs)
"""


def _environ(**env: str) -> dict[str, str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("LORENZ_", "PIP_"))}
    environ.pop("PYTHONPATH", None)
    # Offline and fast: the core and the build backend are there already, nothing to fetch.
    environ.update(PIP_NO_BUILD_ISOLATION="0", PIP_NO_DEPS="1", PIP_DISABLE_PIP_VERSION_CHECK="1", **env)
    return environ


def lorenz_in(python: Path, *args: str, cwd: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), "-m", "lorenz", *args],
        cwd=cwd,
        env=_environ(**env),
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_install_report_and_uninstall(venv: tuple[Path, Path], tmp_path: Path) -> None:
    """Each way of naming a pack installs into the venv that runs lorenz and reports the weather pack;
    uninstall asks first, and lorenz-core is refused."""
    python, purelib = venv
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(WEATHER),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("lorenz_weather-*.whl")
    work = tmp_path / "work"
    work.mkdir()
    (work / "WORKFLOW.md").write_text("---\ntracker: {kind: local}\n---\n", encoding="utf-8")
    offline = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
    for target in (["lorenz-weather"], [str(wheel)], [str(WEATHER)], ["-e", str(WEATHER)]):
        done = lorenz_in(python, "install", *target, cwd=work, **offline)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "installed lorenz-weather 0.1.0: pack weather" in done.stdout.splitlines(), target
        assert 'to mount it, run "lorenz mount weather" or add "tools: {weather: {}}" to WORKFLOW.md' in done.stdout
        # Not a terminal: the requested permissions are printed, and the install stands.
        assert any(line.startswith("  weather requests (when sandboxed): ") for line in done.stdout.splitlines())
        assert list(purelib.glob("lorenz_weather-0.1.0.dist-info")), "installed into the venv that runs lorenz"
        listed = lorenz_in(python, "tools", "--all", cwd=work)
        assert any(line.split()[:2] == ["weather_get_forecast", "weather"] for line in listed.stdout.splitlines())
        assert done.stdout.splitlines()[0].startswith("installed lorenz-weather 0.1.0"), "no pip output"
        gone = lorenz_in(python, "uninstall", "-y", "lorenz-weather", cwd=work)
        assert gone.returncode == 0, gone.stdout + gone.stderr
        assert gone.stdout.splitlines()[0] == "uninstalled lorenz-weather 0.1.0"
        assert not list(purelib.glob("lorenz_weather-*.dist-info"))

    assert lorenz_in(python, "install", "--yes", str(wheel), cwd=work).returncode == 0
    assert "  lorenz-weather 0.1.0: weather" in lorenz_in(python, "--version", cwd=work).stdout.splitlines()
    kept = lorenz_in(python, "uninstall", "lorenz-weather", cwd=work, stdin="n\n")
    assert kept.returncode == 1
    assert "Proceed? [y/N]" in kept.stderr and "nothing uninstalled" in kept.stderr
    assert list(purelib.glob("lorenz_weather-0.1.0.dist-info"))
    (work / "WORKFLOW.md").write_text("---\ntracker: {kind: local}\ntools:\n  weather: {}\n---\n", encoding="utf-8")
    confirmed = lorenz_in(python, "uninstall", "lorenz-weather", cwd=work, stdin="y\n")
    assert confirmed.returncode == 0, confirmed.stderr
    assert "WORKFLOW.md still mounts weather: remove tools.weather from it" in confirmed.stdout
    assert not list(purelib.glob("lorenz_weather-*.dist-info"))


def test_uninstall_refuses_the_core_and_names_a_near_miss(venv: tuple[Path, Path], tmp_path: Path) -> None:
    """The core is never uninstalled by lorenz (whatever its spelling); an unknown name gets a suggestion."""
    python, _ = venv
    for name in ("lorenz-core", "Lorenz_Core"):
        done = lorenz_in(python, "uninstall", "-y", name, cwd=tmp_path)
        assert done.returncode == 1
        assert "lorenz: refusing to uninstall lorenz-core: it is the lorenz command itself" in done.stderr
    missing = lorenz_in(python, "uninstall", "-y", "lorenz-lcoal", cwd=tmp_path)
    assert missing.returncode == 1
    assert 'lorenz: lorenz-lcoal is not installed (did you mean "lorenz-local"?)' in missing.stderr
    absent = lorenz_in(python, "uninstall", "-y", "lorenz-weather", cwd=tmp_path)
    assert absent.returncode == 1
    assert absent.stderr.strip() == "lorenz: lorenz-weather is not installed", "no unrelated suggestion"


def test_install_of_a_non_plugin_and_a_pip_failure(venv: tuple[Path, Path], tmp_path: Path) -> None:
    """A distribution without the entry point is reported as no plugin; a pip failure is one line, exit 1."""
    project = tmp_path / "plain"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        '[project]\nname = "plain-helper"\nversion = "2.0"\n\n'
        '[tool.hatch.build.targets.wheel]\npackages = ["plain_helper"]\n',
        encoding="utf-8",
    )
    (project / "plain_helper").mkdir()
    (project / "plain_helper" / "__init__.py").write_text("", encoding="utf-8")
    python, purelib = venv
    done = lorenz_in(python, "install", str(project), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        "lorenz: plain-helper 2.0: not a Lorenz pack (no lorenz.tool_packs entry point); "
        "uninstalled plain-helper 2.0 again"
    ) in done.stderr
    assert not list(purelib.glob("plain_helper-*.dist-info")), "not left installed"
    failed = lorenz_in(python, "install", str(tmp_path / "nowhere"), cwd=tmp_path)
    assert failed.returncode == 1
    assert "lorenz: pip install failed (exit 1)" in failed.stderr


def test_installing_a_pack_the_workflow_mounts_says_so(venv: tuple[Path, Path], tmp_path: Path) -> None:
    """Issue 44: reinstalling (or upgrading) a pack the workflow mounts says it is mounted, not how to mount it."""
    python, _ = venv
    work = tmp_path / "work"
    work.mkdir()
    (work / "WORKFLOW.md").write_text("---\ntracker: {kind: local}\ntools: {weather: {}}\n---\n", encoding="utf-8")
    done = lorenz_in(python, "install", "-y", str(WEATHER), cwd=work)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WORKFLOW.md mounts weather already" in done.stdout.splitlines()
    assert "to mount" not in done.stdout


def test_reinstalling_editable_is_reported(venv: tuple[Path, Path], tmp_path: Path) -> None:
    """Issue 44: ``install -e`` over the same version is a change (the source is now imported in place)."""
    python, _ = venv
    assert lorenz_in(python, "install", "-y", str(WEATHER), cwd=tmp_path).returncode == 0
    again = lorenz_in(python, "install", "-y", "-e", str(WEATHER), cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "nothing new installed" not in again.stdout
    assert "installed lorenz-weather 0.1.0 (now editable): pack weather" in again.stdout.splitlines()
    back = lorenz_in(python, "install", "-y", str(WEATHER), cwd=tmp_path)
    assert "installed lorenz-weather 0.1.0 (no longer editable): pack weather" in back.stdout.splitlines()


def test_install_says_what_pip_is_doing_on_a_terminal(venv: tuple[Path, Path], tmp_path: Path) -> None:
    """Issue 44: on a terminal, the progress line shows pip's latest line while it works (building a
    directory's wheel takes seconds), erased before the summary; a pipe gets none (the tests above)."""
    python, _ = venv
    # Its wheel built by a backend that takes 1.5 s: past the line's 1 s, however fast (or cached) pip is.
    project = tmp_path / "weather"
    shutil.copytree(WEATHER, project, ignore=shutil.ignore_patterns("__pycache__", "build", "dist"))
    (project / "slow_backend.py").write_text(SLOW_BACKEND, encoding="utf-8")
    pyproject = (project / "pyproject.toml").read_text(encoding="utf-8")
    slow = 'build-backend = "slow_backend"\nbackend-path = ["."]'
    (project / "pyproject.toml").write_text(pyproject.replace('build-backend = "hatchling.build"', slow), "utf-8")
    controller, terminal = pty.openpty()
    try:
        # Read while it runs: what is left unread when the terminal side closes may be dropped.
        process = subprocess.Popen(
            [str(python), "-m", "lorenz", "install", "-y", str(project)],
            cwd=tmp_path,
            env=_environ(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=terminal,
            text=True,
        )
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # EIO: the terminal side is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
        stdout, _ = process.communicate(timeout=120)
    finally:
        os.close(controller)
    done = subprocess.CompletedProcess(process.args, process.returncode, stdout)
    screen = b"".join(chunks).decode("utf-8", "replace")
    assert done.returncode == 0, screen
    pip_line = r"\| pip install: (Processing|Building|Installing|Preparing|Successfully) .* \(\d+ s\)"
    assert re.search(pip_line, screen), screen
    assert screen.rstrip("\r\n").endswith("\r\x1b[K")
    assert done.stdout.splitlines()[0] == "installed lorenz-weather 0.1.0: pack weather"
