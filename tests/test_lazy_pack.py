"""``lorenz.LazyPack`` (issue 40): a pack registered by name whose module is imported only when the
pack is used; registering, listing plugins and mounting other packs leave it unimported."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from lorenz import LazyPack, hookimpl
from lorenz.mounting.inventory import installed_tools
from lorenz.mounting.mount import mount
from lorenz.plugins.discovery import discover
from lorenz.settings.model import Settings

PACK_MODULE = """
from lorenz import ToolSpec, tool_failure

LOADS = []


class Weather:
    name = "{name}"

    def __init__(self):
        LOADS.append(1)

    def tool_specs(self, settings):
        return [ToolSpec(name="weather_now", description="The weather now.", input_schema={{"type": "object"}})]

    async def execute_tool(self, name, input, context):
        return tool_failure("no weather")

    def check_settings(self, settings):
        return ["tools.weather.city is required"]
"""


def _plugin(pack: LazyPack) -> types.ModuleType:
    plugin = types.ModuleType("weather_plugin")

    @hookimpl
    def lorenz_register_tool_packs(register: object) -> None:
        register(pack)  # type: ignore[operator]

    plugin.lorenz_register_tool_packs = lorenz_register_tool_packs  # type: ignore[attr-defined]
    return plugin


def _module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, test: str, pack_name: str = "weather") -> str:
    """A fresh module ``lazy_weather_<test>`` defining ``Weather``, a pack named ``pack_name``."""
    name = f"lazy_weather_{test}"
    (tmp_path / f"{name}.py").write_text(PACK_MODULE.format(name=pack_name), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return name


def test_registering_and_mounting_other_packs_imports_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _module(tmp_path, monkeypatch, "unused")
    pack = LazyPack("weather", f"{module}:Weather")
    discovery = discover(plugins=[_plugin(pack)], entry_points_enabled=False)
    assert [info.packs for info in discovery.plugins] == [("weather",)]
    assert discovery.tools.get("weather") is pack
    mounted = mount(Settings(), discovery)
    assert installed_tools(discovery, Settings(), mounted, unmounted=False).tools == ()
    assert module not in sys.modules


def test_its_tools_and_members_come_from_the_pack_it_makes_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _module(tmp_path, monkeypatch, "used")
    pack = LazyPack("weather", f"{module}:Weather")
    assert [spec.name for spec in pack.tool_specs(Settings())] == ["weather_now"]
    assert pack.check_settings(Settings()) == ["tools.weather.city is required"]
    assert getattr(pack, "health", None) is None  # an optional member the pack lacks stays absent
    assert pack.load() is pack.load()
    assert sys.modules[module].LOADS == [1]


def test_a_pack_made_under_another_name_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    module = _module(tmp_path, monkeypatch, "renamed", "not-weather")
    pack = LazyPack("weather", f"{module}:Weather")
    with pytest.raises(ValueError, match="made a pack named 'not-weather', registered as 'weather'"):
        pack.tool_specs(Settings())


def test_a_pack_that_fails_to_load_is_reported_not_raised() -> None:
    """``lorenz tools --all`` asks every pack: one whose module is missing is a pack failure, and the
    host's optional-member lookups see no member rather than an import error."""
    pack = LazyPack("weather", "no_such_module_for_lazy_pack:Weather")
    discovery = discover(plugins=[_plugin(pack)], entry_points_enabled=False)
    mounted = mount(Settings(), discovery)
    inventory = installed_tools(discovery, Settings(), mounted, unmounted=True)
    assert [(failure.pack, "no_such_module_for_lazy_pack" in failure.error) for failure in inventory.failures] == [
        ("weather", True)
    ]
    assert getattr(pack, "resource_specs", None) is None
    with pytest.raises(ModuleNotFoundError):
        pack.load()
