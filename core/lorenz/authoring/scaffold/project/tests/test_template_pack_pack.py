"""The ``template_pack`` pack, tested with the lorenz.testing fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest
from lorenz.testing import HostFactory, assert_pack_contract

from lorenz_template_pack import PACK

pytestmark = pytest.mark.anyio

SAVE = "template_pack_save_note"
#: What the test host answers for the client (MCP result shapes, by request name).
YES = {"confirm": {"action": "accept", "content": {"confirm": True}}}
DECLINED = {"confirm": {"action": "decline"}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_pack_keeps_the_contract() -> None:
    """Names, descriptions, schemas, error contracts and format parity pass the lint."""
    assert_pack_contract(PACK)


async def test_reverse_text(lorenz_host: HostFactory) -> None:
    """The result arrives as structuredContent and as the formatted text."""
    host = lorenz_host(PACK)
    outcome = await host.call_tool("template_pack_reverse_text", {"text": "stressed"})
    assert outcome.result.success
    assert outcome.mcp.structured_content == {"text": "desserts", "length": 8}
    assert getattr(outcome.mcp.content[0], "text", "").startswith("**Reversed:** desserts")


async def test_empty_text_carries_a_notice(lorenz_host: HostFactory) -> None:
    """The enrichment notice is merged into structuredContent and mirrored after the text."""
    host = lorenz_host(PACK)
    outcome = await host.call_tool("template_pack_reverse_text", {"text": ""})
    notice = "The text is empty: there is nothing to reverse."
    assert outcome.mcp.structured_content == {"text": "", "length": 0, "notice": notice}
    assert getattr(outcome.mcp.content[0], "text", "").endswith(f"notice: {notice}")


async def test_reverse_text_reports_progress(lorenz_host: HostFactory) -> None:
    """What the tool reports with ctx.progress is recorded by the test host."""
    host = lorenz_host(PACK)
    await host.call("template_pack_reverse_text", {"text": "abc"})
    assert host.progress == [(1, 1, "reversed")]


async def test_too_long_is_a_declared_failure(lorenz_host: HostFactory) -> None:
    """Over the configured maximum, the call fails with the contract's reason and recovery."""
    host = lorenz_host(PACK, options={"template_pack": {"max_length": 3}})
    outcome = await host.call_tool("template_pack_reverse_text", {"text": "stressed"})
    assert outcome.mcp.is_error is True
    assert outcome.mcp.structured_content is not None
    assert outcome.mcp.structured_content["error"]["reason"] == "text_too_long"


async def test_misspelled_argument_is_refused(lorenz_host: HostFactory) -> None:
    """An unknown key is refused by name, not silently dropped."""
    host = lorenz_host(PACK)
    result = await host.call("template_pack_reverse_text", {"txet": "x"})
    assert not result.success
    assert result.error is not None
    assert 'Unrecognized key: "txet"' in result.error


async def test_save_note_writes_once_the_user_confirms(lorenz_host: HostFactory, tmp_path: Path) -> None:
    """The tool asks first, then writes (the test host's workflow lives in tmp_path)."""
    host = lorenz_host(PACK)
    result = await host.call(SAVE, {"name": "todo", "text": "Ship it"}, answers=YES)
    assert result.success
    assert result.result == {"note": "notes/todo.md", "saved": True}
    assert [list(question) for question in host.asked] == [["confirm"]]
    assert (tmp_path / "notes" / "todo.md").read_text(encoding="utf-8") == "Ship it\n"


async def test_save_note_writes_nothing_when_declined(lorenz_host: HostFactory, tmp_path: Path) -> None:
    """A declined (or cancelled) question writes nothing and says so."""
    host = lorenz_host(PACK)
    result = await host.call(SAVE, {"name": "todo", "text": "Ship it"}, answers=DECLINED)
    assert result.success
    assert result.result == {"note": "notes/todo.md", "saved": False}
    assert not (tmp_path / "notes").exists()


async def test_save_note_needs_a_client_that_can_answer(lorenz_host: HostFactory, tmp_path: Path) -> None:
    """Without a client to ask, the call fails before anything is written."""
    host = lorenz_host(PACK)
    result = await host.call(SAVE, {"name": "todo", "text": "Ship it"})
    assert not result.success
    assert not (tmp_path / "notes").exists()


# Written with --tracker only.
async def test_tracker_mounts_the_pack(lorenz_host: HostFactory) -> None:
    """The tracker mounts the template_pack pack and hands out its active issues."""
    from lorenz_template_pack import plugin
    from lorenz_template_pack.tracker import TRACKER

    host = lorenz_host(plugins=[plugin], tracker=TRACKER)
    assert host.workspace.pack_names() == ["template_pack"]
    issues = await host.workspace.tracker_client().fetch_candidate_issues()
    assert [issue.identifier for issue in issues] == ["TEMPLATEPACK-1"]
