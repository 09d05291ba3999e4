"""``lorenz mount`` / ``lorenz unmount`` (issue 32): WORKFLOW.md's ``tools:`` edited in place, comments,
layout and body kept byte for byte, validated before the file is replaced."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LORENZ = Path(sys.executable).with_name("lorenz")
WEATHER = Path(__file__).parents[1] / "examples" / "weather"

ORIGINAL = (
    "---\n"
    "# the board this workflow dispatches from\n"
    "tracker:\n"
    "    kind: local   # a local board\n"
    "    path: ./board\n"
    "tools:\n"
    "    local: {}     # mounted by default anyway\n"
    "---\n"
    "The body: kept   byte for byte,   \r\n"
    "---\n"
    "even a second fence.\n"
)


def lorenz(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    environ.update({"LORENZ_LOAD_PLUGINS": "lorenz-local", "PYTHONPATH": str(WEATHER)})
    command = [str(LORENZ), "-p", "lorenz_weather.plugin", *args]
    return subprocess.run(command, cwd=cwd, env=environ, capture_output=True, text=True, check=False, timeout=60)


def test_mount_then_unmount_gives_the_file_back_byte_for_byte(tmp_path: Path) -> None:
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_bytes(ORIGINAL.encode())
    mounted = lorenz(tmp_path, "mount", "weather", "--option", "units=imperial")
    assert mounted.returncode == 0, mounted.stderr
    assert "mounted weather in WORKFLOW.md: 2 tools (weather_get_forecast, weather_list_cities)" in mounted.stdout
    edited = workflow.read_bytes().decode()
    assert edited == ORIGINAL.replace(
        "    local: {}     # mounted by default anyway\n",
        "    local: {}     # mounted by default anyway\n    weather:\n        units: imperial\n",
    )
    assert lorenz(tmp_path, "check").returncode == 0
    again = lorenz(tmp_path, "mount", "weather", "-o", "units=imperial")
    assert again.returncode == 0
    assert "left as it was" in again.stdout
    unmounted = lorenz(tmp_path, "unmount", "weather")
    assert unmounted.returncode == 0, unmounted.stderr
    assert workflow.read_bytes() == ORIGINAL.encode()


def test_mount_adds_a_tools_map_to_a_flow_style_workflow(tmp_path: Path) -> None:
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_text("---\ntracker: {kind: local}  # here\n---\nbody\n", encoding="utf-8")
    assert lorenz(tmp_path, "mount", "weather").returncode == 0
    assert (
        workflow.read_text(encoding="utf-8")
        == "---\ntracker: {kind: local}  # here\ntools:\n  weather: {}\n---\nbody\n"
    )


def test_an_invalid_edit_is_refused_and_the_file_left_alone(tmp_path: Path) -> None:
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_bytes(ORIGINAL.encode())
    typo = lorenz(tmp_path, "mount", "weather", "--option", "unit=metric")
    assert typo.returncode == 1
    assert typo.stderr.strip() == 'lorenz: not written: tools.weather: Unrecognized key: "unit" (did you mean "units"?)'
    unknown = lorenz(tmp_path, "mount", "wether")
    assert unknown.returncode == 1
    assert 'no installed pack is named wether (did you mean "weather"?)' in unknown.stderr
    absent = lorenz(tmp_path, "unmount", "wether")
    assert absent.returncode == 1
    assert "tools: does not name wether" in absent.stderr
    assert workflow.read_bytes() == ORIGINAL.encode()
    assert [path.name for path in tmp_path.iterdir()] == ["WORKFLOW.md"]  # no temporary file left


def test_the_hint_for_an_unmounted_pack_names_lorenz_mount(tmp_path: Path) -> None:
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker: {kind: local}\n---\n", encoding="utf-8")
    called = lorenz(tmp_path, "call", "weather_list_cities")
    assert called.returncode == 1
    assert 'run "lorenz mount weather" or add "tools: {weather: {}}" to WORKFLOW.md' in called.stderr


def test_mount_without_a_workflow_writes_the_embedded_default(tmp_path: Path) -> None:
    """With no WORKFLOW.md, the directory was serving the embedded default: mount writes that, plus the pack;
    unmount has nothing to edit, and a refused mount writes nothing."""
    refused = lorenz(tmp_path, "mount", "weather", "-o", "units=kelvin")
    assert refused.returncode == 1
    assert "not written" in refused.stderr
    assert list(tmp_path.iterdir()) == []
    assert lorenz(tmp_path, "unmount", "weather").returncode == 1
    mounted = lorenz(tmp_path, "mount", "weather")
    assert mounted.returncode == 0, mounted.stderr
    assert mounted.stdout.splitlines() == [
        "created WORKFLOW.md from the embedded default (tracker: {kind: local}, the board at .lorenz/local)",
        "mounted weather in WORKFLOW.md: 2 tools (weather_get_forecast, weather_list_cities)",
    ]
    assert (tmp_path / "WORKFLOW.md").read_text(encoding="utf-8") == (
        "---\ntracker: {kind: local}\ntools:\n  weather: {}\n---\n"
    )
    tools = lorenz(tmp_path, "tools")
    assert "local_query" in tools.stdout and "weather_get_forecast" in tools.stdout
