"""Plugin discovery through entry points, isolated per plugin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lorenz import ToolSpec, discover, hookimpl, tool_success
from lorenz.plugins.discovery import make_manager
from lorenz.plugins.registration import build_registries

ONLY_TEST_DISTS = {"LORENZ_LOAD_PLUGINS": "lorenz-acme,lorenz-broken,lorenz-typo,lorenz-raising"}


class EchoPack:
    name = "echo"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [ToolSpec(name="echo_say", description="Say it.")]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        return tool_success(input)


class EchoPlugin:
    __name__ = "echo-plugin"

    @hookimpl
    def lorenz_register_tool_packs(self, register: Any) -> None:
        register(EchoPack())


def test_good_distribution_is_discovered(dist_dir: Path) -> None:
    """An installed distribution's tracker and pack are registered and attributed to it."""
    discovery = discover(env=ONLY_TEST_DISTS)
    assert "acme" in discovery.tools.names()
    assert "acme" in discovery.trackers.kinds()
    (info,) = [p for p in discovery.plugins if p.distribution == "lorenz-acme"]
    assert (info.version, info.packs, info.trackers) == ("0.1.0", ("acme",), ("acme",))


def test_import_failure_is_reported_and_others_load(dist_dir: Path) -> None:
    """A plugin that fails to import is a failure with its distribution, and the rest still load."""
    discovery = discover(env=ONLY_TEST_DISTS)
    failures = {f.distribution: f for f in discovery.failures}
    broken = failures["lorenz-broken"]
    assert broken.group == "lorenz.tool_packs"
    assert broken.name == "broken"
    assert broken.version == "0.1.0"
    assert "ModuleNotFoundError" in broken.error
    assert "lorenz_sdk_that_does_not_exist" in broken.error
    assert "acme" in discovery.tools.names()


def test_misspelled_hook_argument_is_reported(dist_dir: Path) -> None:
    """A hookimpl with a misspelled argument is rejected at registration and reported."""
    discovery = discover(env=ONLY_TEST_DISTS)
    failure = next(f for f in discovery.failures if f.distribution == "lorenz-typo")
    assert "regster" in failure.error


def test_raising_hook_is_reported(dist_dir: Path) -> None:
    """A plugin that raises inside its hook is a failure; nothing it did is kept."""
    discovery = discover(env=ONLY_TEST_DISTS)
    failure = next(f for f in discovery.failures if f.distribution == "lorenz-raising")
    assert "registration blew up" in failure.error
    assert all(p.distribution != "lorenz-raising" for p in discovery.plugins)


def test_load_plugins_allow_list(dist_dir: Path) -> None:
    """LORENZ_LOAD_PLUGINS limits loading to the named distributions; empty loads none."""
    only_acme = discover(env={"LORENZ_LOAD_PLUGINS": "lorenz_acme"})
    assert [p.distribution for p in only_acme.plugins] == ["lorenz-acme"]
    assert only_acme.failures == ()
    none = discover(env={"LORENZ_LOAD_PLUGINS": ""})
    assert none.plugins == () and none.failures == () and len(none.tools) == 0


def test_in_process_registration_without_install() -> None:
    """Tests register plugins in-process through the same manager API."""
    discovery = discover(plugins=[EchoPlugin()], entry_points_enabled=False)
    assert discovery.tools.names() == ["echo"]
    assert discovery.plugins[0].name == "echo-plugin"


def test_unknown_hook_name_is_reported() -> None:
    """An implementation of a hook that does not exist (a typo) is reported, not ignored."""

    class Typo:
        __name__ = "typo"

        @hookimpl
        def lorenz_register_trakers(self, register: Any) -> None:
            raise AssertionError("never called")

    discovery = discover(plugins=[Typo()], entry_points_enabled=False)
    assert [f.name for f in discovery.failures] == ["typo"]
    assert "lorenz_register_trakers" in discovery.failures[0].error


def test_lorenz_prefixed_non_hook_attributes_are_ignored() -> None:
    """Module attributes named lorenz_* that are not hookimpls (an import alias, a helper) are no hooks."""
    import json
    import types

    module = types.ModuleType("aliases")
    module.lorenz_json = json  # type: ignore[attr-defined] - `import json as lorenz_json`
    module.lorenz_helper = lambda: None  # type: ignore[attr-defined] - an undecorated helper
    module.lorenz_register_tool_packs = EchoPlugin().lorenz_register_tool_packs  # type: ignore[attr-defined]
    discovery = discover(plugins=[module], entry_points_enabled=False)
    assert discovery.failures == ()
    assert discovery.tools.names() == ["echo"]


def test_duplicate_within_one_plugin_commits_nothing() -> None:
    """A plugin registering two different packs under one name fails and keeps none of them."""

    class Trackerish:
        kind = "dupe-kind"

        def create_client(self, settings: Any, context: Any) -> Any:
            raise AssertionError("never called")

    class Doubled:
        __name__ = "doubled"

        @hookimpl
        def lorenz_register_tool_packs(self, register: Any) -> None:
            register(EchoPack())
            register(EchoPack())

    class DoubledTrackers:
        __name__ = "doubled-trackers"

        @hookimpl
        def lorenz_register_trackers(self, register: Any) -> None:
            register(Trackerish())
            register(Trackerish())

    discovery = discover(plugins=[Doubled(), DoubledTrackers()], entry_points_enabled=False)
    assert discovery.tools.names() == []
    assert discovery.trackers.kinds() == []
    assert discovery.plugins == ()
    assert [f.name for f in discovery.failures] == ["doubled", "doubled-trackers"]
    assert "tool provider already registered for name: echo" in discovery.failures[0].error
    assert "tracker provider already registered for kind: dupe-kind" in discovery.failures[1].error


def test_conflicting_pack_names_are_refused_for_both() -> None:
    """Two plugins registering different packs under one name: neither keeps it, whatever the order,
    and each is reported with the other named."""

    class Second:
        __name__ = "second"

        @hookimpl
        def lorenz_register_tool_packs(self, register: Any) -> None:
            register(EchoPack())

    for order in ([EchoPlugin(), Second()], [Second(), EchoPlugin()]):
        discovery = discover(plugins=order, entry_points_enabled=False)
        assert discovery.tools.names() == []
        assert sorted(f.name for f in discovery.failures) == ["echo-plugin", "second"]
        for failure in discovery.failures:
            assert 'pack name "echo" is registered by both' in failure.error
            assert "in-process plugin echo-plugin" in failure.error and "in-process plugin second" in failure.error


def test_managers_are_independent() -> None:
    """Each manager is fresh: registering into one does not leak into another."""
    pm = make_manager()
    pm.register(EchoPlugin(), name="undo")
    assert build_registries(pm).tools.names() == ["echo"]
    assert build_registries(make_manager()).tools.names() == []


@pytest.mark.parametrize("argname", ["register"])
def test_hookspecs_document_register(argname: str) -> None:
    """Both hooks take the register callback and carry a docstring."""
    from lorenz import hookspecs

    for hook in (hookspecs.lorenz_register_tool_packs, hookspecs.lorenz_register_trackers):
        assert argname in hook.__code__.co_varnames
        assert hook.__doc__ and "register" in hook.__doc__
