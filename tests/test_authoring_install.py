"""Proof that packs are real distributions: lorenz-weather built into a wheel and pip-installed
into a fresh virtual environment next to the core, and a ``lorenz new-pack`` project installed
the same way. pip fetches dependencies from the configured package index (its cache is reused)."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import mcp
import pytest

from lorenz.testing import ServedWorkflow

ROOT = Path(__file__).resolve().parents[1]
WEATHER = ROOT / "examples" / "weather"
LOCAL = ROOT / "plugins" / "local"

# One parallel worker runs the module: the wheels are built once for it.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("core-wheels")]


def clean_env() -> dict[str, str]:
    """The environment of a user's shell: no Lorenz overrides, no PYTHONPATH into this repo."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LORENZ_", "VIRTUAL_ENV"))}
    env.pop("PYTHONPATH", None)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run(*command: str | Path, cwd: Path, check: bool = True, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(part) for part in command], cwd=cwd, env=clean_env(), capture_output=True, text=True, timeout=timeout
    )
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, command))} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def build_wheels(out: Path, *projects: Path) -> list[Path]:
    """Wheels of ``projects`` (without their dependencies), built with this environment's hatchling
    when it has one, else in pip's isolated build environment."""
    isolation = [] if importlib.util.find_spec("hatchling") is None else ["--no-build-isolation"]
    run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", *isolation, "-w", out, *projects, cwd=out.parent)
    return sorted(out.glob("*.whl"))


def make_venv(path: Path) -> Path:
    """A fresh virtual environment; returns its ``bin`` directory."""
    run(sys.executable, "-m", "venv", path, cwd=path.parent)
    return path / ("Scripts" if os.name == "nt" else "bin")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Wheels of the core, lorenz-local and lorenz-weather."""
    out = tmp_path_factory.mktemp("wheels") / "dist"
    out.mkdir()
    built = build_wheels(out, ROOT, LOCAL, WEATHER)
    return {path.name.split("-")[0]: path for path in built}


def test_weather_wheel_installs_serves_and_uninstalls(wheels: dict[str, Path], tmp_path: Path) -> None:
    """pip-installed lorenz-weather is discovered, listed, served over MCP, and gone once uninstalled."""
    bin_dir = make_venv(tmp_path / "venv")
    run(
        bin_dir / "python",
        "-m",
        "pip",
        "install",
        "-q",
        wheels["lorenz_core"],
        wheels["lorenz_local"],
        wheels["lorenz_weather"],
        cwd=tmp_path,
    )
    work = tmp_path / "work"
    work.mkdir()
    (work / "WORKFLOW.md").write_text("---\ntracker:\n  kind: local\ntools:\n  weather: {}\n---\nprompt\n")

    listed = json.loads(run(bin_dir / "lorenz", "plugins", "--json", cwd=work).stdout)
    weather = next(plugin for plugin in listed["plugins"] if plugin["name"] == "weather")
    assert weather["distribution"] == "lorenz-weather" and weather["packs"] == ["weather"]
    assert listed["failures"] == []

    tools = run(bin_dir / "lorenz", "tools", cwd=work).stdout
    assert "weather_get_forecast  [weather]" in tools and "weather_set_alert" not in tools
    called = json.loads(
        run(bin_dir / "lorenz", "call", "weather_get_forecast", '{"city": "Oslo", "days": 2}', cwd=work).stdout
    )
    assert called["success"] is True

    server = ServedWorkflow(work, clean_env(), [str(bin_dir / "lorenz"), "serve", "--port", "0", "--no-reload"])
    url = server.url
    try:

        async def over_mcp() -> None:
            async with mcp.Client(url) as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                assert "weather_get_forecast" in names and "weather_set_alert" not in names
                result = await client.call_tool("weather_get_forecast", {"city": "Oslo", "days": 2})
                assert result.is_error is False
                assert result.structured_content == called["result"]
                assert result.content[0].text.startswith("# Oslo: 2-day forecast")
                refused = await client.call_tool("weather_get_forecast", {"city": "Oslo", "querry": 1})
                assert refused.is_error is True
                assert 'Unrecognized key: "querry"' in refused.structured_content["error"]["message"]
            async with httpx.AsyncClient() as http:
                page = (await http.get(url.removesuffix("/mcp") + "/")).text
            assert 'class="tool disabled" id="tool-weather_set_alert"' in page
            assert "tools.weather.allow_writes: true" in page

        anyio.run(over_mcp)
    finally:
        server.process.send_signal(signal.SIGTERM)
        server.wait(15)
        server.stop()

    run(bin_dir / "python", "-m", "pip", "uninstall", "-y", "-q", "lorenz-weather", cwd=tmp_path)
    listed = json.loads(run(bin_dir / "lorenz", "plugins", "--json", cwd=work).stdout)
    assert [plugin["name"] for plugin in listed["plugins"]] == ["local"]
    gone = run(bin_dir / "lorenz", "tools", cwd=work, check=False)
    assert gone.returncode == 1 and "weather" in gone.stderr


def test_new_pack_project_installs_and_passes_its_tests(wheels: dict[str, Path], tmp_path: Path) -> None:
    """`lorenz new-pack acme --tracker` writes a project whose own tests pass once pip-installed."""
    bin_dir = make_venv(tmp_path / "venv")
    run(bin_dir / "python", "-m", "pip", "install", "-q", wheels["lorenz_core"], cwd=tmp_path)
    run(bin_dir / "lorenz", "new-pack", "acme", "--tracker", cwd=tmp_path)
    project = tmp_path / "lorenz-acme"
    assert (project / "pyproject.toml").is_file()
    run(bin_dir / "python", "-m", "pip", "install", "-q", f"{project}[test]", cwd=tmp_path)

    tested = run(bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project, check=False)
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "10 passed" in tested.stdout

    listed = json.loads(run(bin_dir / "lorenz", "plugins", "--json", cwd=tmp_path).stdout)
    assert listed["plugins"] == [
        {"name": "acme", "distribution": "lorenz-acme", "version": "0.1.0", "packs": ["acme"], "trackers": ["acme"]}
    ]
    linted = run(bin_dir / "lorenz", "lint", "--json", cwd=tmp_path)
    assert json.loads(linted.stdout)["errors"] == 0
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: acme\n---\n")
    assert "acme_reverse_text  [acme]" in run(bin_dir / "lorenz", "tools", cwd=tmp_path).stdout
    # Issue 44: its confirmation answered from the command line, and the note written where it said.
    note, answer = '{"name": "todo", "text": "Ship it"}', 'confirm={"confirm": true}'
    saved = run(bin_dir / "lorenz", "call", "acme_save_note", note, "--answer", answer, cwd=tmp_path)
    assert json.loads(saved.stdout)["result"] == {"note": "notes/todo.md", "saved": True}
    assert (tmp_path / "notes" / "todo.md").read_text(encoding="utf-8") == "Ship it\n"
    # The wheelhouse holds the installed (not editable) core, packed from its files: it reinstalls as is.
    (wheel,) = (project / "wheelhouse").glob("lorenz_core-*-py3-none-any.whl")
    run(bin_dir / "python", "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", wheel, cwd=tmp_path)
    assert "acme_reverse_text  [acme]" in run(bin_dir / "lorenz", "tools", cwd=tmp_path).stdout
