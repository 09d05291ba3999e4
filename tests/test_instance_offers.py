"""A pack's resources and prompts when it is mounted as an instance (``provider:``, ``prefix:``,
``rename:``): prompts are served under the instance's names, resources under the pack's URIs, each
read and rendered with the instance's options; two instances declaring one URI fail at mount."""

from __future__ import annotations

from typing import Any

import pytest
from attrs import frozen

from lorenz import ToolContext
from lorenz.authoring import CallContext, Pack, PackContext, prompt, resource, tool
from lorenz.mounting.model import MountError
from lorenz.testing import make_pack_host

pytestmark = pytest.mark.anyio


@frozen
class Empty:
    pass


@frozen(kw_only=True)
class Options:
    owner: str = "nobody"


@tool(name="notes_list", description="List the notes.", input=Empty)
async def list_notes(ctx: CallContext, args: Empty) -> dict[str, Any]:
    return {"notes": []}


@resource("notes://readme", name="readme", description="How the notes work.")
async def readme(ctx: PackContext) -> str:
    return f"Owner: {ctx.options.owner}"


@prompt("summarize", description="Summarize the notes.")
async def summarize(ctx: PackContext, args: None) -> str:
    return f"Summarize the notes of {ctx.options.owner}."


NOTES = Pack(name="notes", options=Options, tools=[list_notes], resources=[readme], prompts=[summarize])


def _context(host: Any) -> ToolContext:
    return ToolContext(settings=host.settings, http=None)  # type: ignore[arg-type]  # these never fetch


async def test_an_instance_serves_its_prompts_under_its_names_and_its_packs_uris() -> None:
    tools = {"work": {"provider": "notes", "prefix": "work_", "owner": "ada", "rename": {"summarize": "digest"}}}
    host = make_pack_host(NOTES, config={"tools": tools})
    offers = host.workspace.mounted.offers
    assert [(spec.uri, pack.name) for spec, pack in offers.resources] == [("notes://readme", "work")]
    assert [(spec.name, pack.name) for spec, pack in offers.prompts] == [("digest", "work")]
    found = offers.prompt("digest")
    assert found is not None
    rendered = await found[1].get_prompt("digest", {}, _context(host))  # type: ignore[attr-defined]
    assert rendered.success and "of ada" in str(rendered.result)
    read = await offers.resources[0][1].read_resource("notes://readme", _context(host))  # type: ignore[attr-defined]
    assert read.success and read.result[0]["text"] == "Owner: ada"


async def test_a_prefix_alone_names_the_prompts() -> None:
    host = make_pack_host(NOTES, config={"tools": {"home": {"provider": "notes", "prefix": "home_"}}})
    assert [spec.name for spec, _ in host.workspace.mounted.offers.prompts] == ["home_summarize"]


def test_two_instances_declaring_one_uri_fail_naming_both_and_what_to_set() -> None:
    tools = {"a": {"provider": "notes", "prefix": "a_"}, "b": {"provider": "notes", "prefix": "b_"}}
    with pytest.raises(MountError) as caught:
        make_pack_host(NOTES, config={"tools": tools})
    message = str(caught.value)
    assert message.startswith('resource URI collision: notes://readme is declared by both the "a" and "b" packs')
    assert '(both are instances of the "notes" pack)' in message
    assert "tools: {b: {resources: false}}" in message


@tool(name="briefs_list", description="List the briefs.", input=Empty)
async def list_briefs(ctx: CallContext, args: Empty) -> dict[str, Any]:
    return {"briefs": []}


BRIEFS = Pack(name="briefs", options=Options, tools=[list_briefs], prompts=[summarize])


def test_two_instances_naming_one_prompt_fail_and_are_told_to_prefix_one() -> None:
    tools = {"a": {"provider": "briefs", "rename": {"briefs_list": "a_list"}}, "b": {"provider": "briefs"}}
    with pytest.raises(MountError) as caught:
        make_pack_host(BRIEFS, config={"tools": tools})
    message = str(caught.value)
    assert message.startswith('prompt name collision: summarize is declared by both the "a" and "b" packs')
    assert "tools: {b: {prefix: b_}}" in message
