"""Tool and tracker registries."""

import json
from typing import Any

import pytest

from lorenz import RegistryError, ToolRegistry, TrackerRegistry


class Pack:
    def __init__(self, name: str) -> None:
        self.name = name

    def tool_specs(self, settings: Any) -> list[Any]:
        return []

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        raise NotImplementedError


class Tracker:
    def __init__(self, kind: str) -> None:
        self.kind = kind

    def create_client(self, settings: Any, context: Any) -> Any:
        raise NotImplementedError


def test_register_same_pack_twice_is_idempotent() -> None:
    """Registering the same object twice is a no-op and names() is sorted."""
    registry = ToolRegistry()
    linear = Pack("linear")
    registry.register(linear)
    registry.register(linear)
    registry.register(Pack("jira"))
    assert registry.names() == ["jira", "linear"]


def test_register_different_pack_under_taken_name_fails() -> None:
    """A different object under a taken name is refused with the exact message."""
    registry = ToolRegistry()
    registry.register(Pack("linear"))
    with pytest.raises(RegistryError, match="tool provider already registered for name: linear"):
        registry.register(Pack("linear"))


def test_blank_pack_name_rejected() -> None:
    """A blank name is refused."""
    with pytest.raises(RegistryError, match="name must not be blank"):
        ToolRegistry().register(Pack("  "))


def test_pack_stored_under_trimmed_name_looked_up_exactly() -> None:
    """Names are trimmed on register but looked up exactly."""
    registry = ToolRegistry()
    pack = Pack(" spaced ")
    registry.register(pack)
    assert registry.get("spaced") is pack
    assert registry.get(" spaced ") is None
    assert pack.name == " spaced "


def test_require_on_empty_registry_hints_at_registration() -> None:
    """require() on an empty registry says no packs are registered."""
    with pytest.raises(RegistryError, match="no tool packs registered - register tool packs at the composition root"):
        ToolRegistry().require("linear")


def test_require_unknown_pack_lists_known() -> None:
    """require() of an unknown pack lists the known ones."""
    registry = ToolRegistry()
    registry.register(Pack("jira"))
    with pytest.raises(RegistryError, match=r"unsupported tool pack: linear \(known tool packs: jira\)"):
        registry.require("linear")


def test_tracker_registry_get_and_kinds() -> None:
    """get() returns the same object; unknown and None give None; kinds() is sorted."""
    registry = TrackerRegistry()
    linear = Tracker("linear")
    for tracker in (linear, Tracker("local"), Tracker("jira")):
        registry.register(tracker)
    assert registry.get("linear") is linear
    assert registry.get("unknown") is None
    assert registry.get(None) is None
    assert registry.kinds() == ["jira", "linear", "local"]


def test_tracker_registry_duplicates() -> None:
    """The same tracker twice is fine; a different one under the same kind is refused."""
    registry = TrackerRegistry()
    linear = Tracker("linear")
    registry.register(linear)
    registry.register(linear)
    assert registry.kinds() == ["linear"]
    with pytest.raises(RegistryError, match="tracker provider already registered for kind: linear"):
        registry.register(Tracker("linear"))


def test_tracker_blank_kind_rejected() -> None:
    """A blank kind is refused."""
    with pytest.raises(RegistryError, match="kind must not be blank"):
        TrackerRegistry().register(Tracker("  "))


def test_tracker_require_messages() -> None:
    """require() needs a kind and lists known kinds on a miss."""
    registry = TrackerRegistry()
    with pytest.raises(RegistryError, match=r"tracker\.kind is required"):
        registry.require(None)
    with pytest.raises(RegistryError, match=r"no tracker providers registered - register tracker extensions"):
        registry.require("jira")
    registry.register(Tracker("linear"))
    with pytest.raises(RegistryError, match=r"unsupported tracker\.kind: jira \(known kinds: linear\)"):
        registry.require("jira")
    assert registry.require("linear").kind == "linear"


@pytest.mark.parametrize("name", ["\n", "acme\r", "a\tb"])
def test_an_unknown_name_with_a_line_break_is_shown_escaped(name: str) -> None:
    """A name from WORKFLOW.md is quoted when it holds a character that does not print: the
    error stays one line (found by the settings fuzz test)."""
    with pytest.raises(RegistryError) as tools:
        ToolRegistry().require(name)
    with pytest.raises(RegistryError) as trackers:
        TrackerRegistry().require(name)
    for error in (tools.value, trackers.value):
        assert "\n" not in str(error) and "\r" not in str(error) and "\t" not in str(error)
        assert json.dumps(name, ensure_ascii=False) in str(error)
