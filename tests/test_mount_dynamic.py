"""A pack whose tools a third party lists (``dynamic_tools``): a tool it cannot serve under its name
is left out and named, never a mount error; the packs whose tools are their own claim names first."""

from __future__ import annotations

from typing import Any

import pytest

from lorenz import PromptSpec, ResourceSpec, Settings, ToolContext, ToolSpec, tool_success
from lorenz.host.ops.status import health_data
from lorenz.host.reload.snapshot import Snapshot
from lorenz.mounting.model import MountError
from lorenz.testing import make_pack_host


class Listed:
    """A pack serving whatever ``tools`` holds, like an upstream's listing."""

    def __init__(
        self, name: str, tools: list[str], *, dynamic: bool, uris: tuple[str, ...] = (), prompts: tuple[str, ...] = ()
    ) -> None:
        self.name = name
        self.tools = tools
        self.dynamic_tools = dynamic
        self.uris = uris
        self.prompts = prompts

    def resource_specs(self, settings: Settings) -> list[ResourceSpec]:
        return [ResourceSpec(uri=uri, name=uri) for uri in self.uris]

    def prompt_specs(self, settings: Settings) -> list[PromptSpec]:
        return [PromptSpec(name=prompt) for prompt in self.prompts]

    def tool_specs(self, settings: Settings) -> list[ToolSpec]:
        return [ToolSpec(name=tool, description=f"{tool} of {self.name}") for tool in self.tools]

    async def execute_tool(self, name: str, input: Any, context: ToolContext) -> Any:
        return tool_success({"pack": self.name, "tool": name})


def _dropped(host: Any) -> dict[tuple[str, str | None], str]:
    return {(drop.pack, drop.tool): drop.error for drop in host.workspace.mounted.dropped if drop.tool is not None}


@pytest.mark.anyio
async def test_a_dynamic_packs_unservable_tools_are_dropped_and_named() -> None:
    upstream = Listed("upstream", ["shared", "a/b", "fine", "x" * 129], dynamic=True)
    own = Listed("own", ["shared", "mine"], dynamic=False)
    # The dynamic pack comes first in the workflow, and still does not take `shared` from `own`.
    host = make_pack_host(upstream, own, options={"upstream": {}, "own": {}})
    assert host.tool_names() == ["fine", "shared", "mine"]
    assert host.workspace.tool_owners()["shared"] == "own"
    assert (await host.call_tool("shared", {})).result.result == {"pack": "own", "tool": "shared"}
    dropped = _dropped(host)
    assert set(dropped) == {("upstream", "shared"), ("upstream", "a/b"), ("upstream", "x" * 129)}
    assert len(dropped["upstream", "x" * 129]) < 300  # a third party's name is shown shortened
    assert 'also declared by the "own" pack' in dropped["upstream", "shared"]
    assert "not a valid tool name" in dropped["upstream", "a/b"]
    health = health_data(Snapshot.build(host.workspace, 1), reload_failed=False)
    assert health["status"] == "degraded"
    named = {(entry["pack"], entry.get("tool")) for entry in health["failed"]["packs"]}
    assert ("upstream", "a/b") in named and ("upstream", "shared") in named


def test_an_instance_prefix_making_an_upstream_name_invalid_drops_only_that_tool() -> None:
    upstream = Listed("upstream", ["a/b", "ok"], dynamic=True)
    config = {"tools": {"bad": {"provider": "upstream", "prefix": "bad_", "rename": {"gone": "g"}}}}
    host = make_pack_host(upstream, config=config)
    assert host.tool_names() == ["bad_ok"]
    dropped = _dropped(host)
    assert "not a valid tool name" in dropped["bad", "bad_a/b"]
    # A rename of a tool the upstream does not list (yet) is named, not a start failure.
    assert "has no tool gone" in dropped["bad", "gone"]


def test_two_packs_whose_tools_are_their_own_still_clash_loudly() -> None:
    with pytest.raises(MountError, match="tool name collision: shared"):
        make_pack_host(
            Listed("one", ["shared"], dynamic=False),
            Listed("two", ["shared"], dynamic=False),
            options={"one": {}, "two": {}},
        )


def test_two_dynamic_packs_listing_one_name_serve_it_from_the_first() -> None:
    first, second = Listed("first", ["same"], dynamic=True), Listed("second", ["same", "other"], dynamic=True)
    host = make_pack_host(first, second, options={"first": {}, "second": {}})
    assert host.tool_names() == ["same", "other"] and host.workspace.tool_owners()["same"] == "first"
    assert set(_dropped(host)) == {("second", "same")}


def test_a_dynamic_packs_clashing_resource_or_prompt_is_dropped_not_a_mount_error() -> None:
    upstream = Listed("upstream", ["same"], dynamic=True, uris=("memo://a", "memo://b"), prompts=("hello",))
    own = Listed("own", ["same"], dynamic=False, uris=("memo://a",), prompts=("hello",))
    host = make_pack_host(upstream, own, options={"upstream": {}, "own": {}})
    offers = host.workspace.mounted.offers
    assert [(spec.uri, pack.name) for spec, pack in offers.resources] == [("memo://b", "upstream"), ("memo://a", "own")]
    assert [(spec.name, pack.name) for spec, pack in offers.prompts] == [("hello", "own")]
    assert set(_dropped(host)) == {("upstream", "same")}
    items = {(drop.pack, drop.item) for drop in host.workspace.mounted.dropped}
    assert ("upstream", ("resource", "memo://a")) in items and ("upstream", ("prompt", "hello")) in items
    assert {"pack": "upstream", "resource": "memo://a"}.items() <= next(
        drop.to_dict() for drop in host.workspace.mounted.dropped if drop.item == ("resource", "memo://a")
    ).items()
