"""docs/designing-tools.md: its Python blocks, run in order as one module, make a pack that keeps the
contract (no lint warning either) and behaves as the guide says."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lorenz.testing import assert_pack_contract, make_pack_host

pytestmark = pytest.mark.anyio

DOC = Path(__file__).resolve().parents[1] / "docs" / "designing-tools.md"


@pytest.fixture
def guide(tmp_path: Path) -> ModuleType:
    """The guide's code blocks as a fresh module (its in-memory store starts full)."""
    blocks = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), flags=re.DOTALL | re.MULTILINE)
    path = tmp_path / "notes_guide.py"
    path.write_text("\n\n".join(blocks), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("notes_guide", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_guides_pack_keeps_the_contract_strictly(guide: ModuleType) -> None:
    """Names, descriptions, described fields, hints, recoveries and format parity: no error, no warning."""
    assert_pack_contract(guide.PACK, strict=True)


def test_the_guides_code_is_ruff_clean(guide: ModuleType) -> None:
    """What readers copy passes the same ruff the scaffold's devcheck runs."""
    path = Path(guide.__file__ or "")
    for command in (["check", "--select", "E,F,W,I,B,UP,RUF,SIM"], ["format", "--check"]):
        result = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "--isolated", "--line-length", "120", str(path)],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, result.stdout + result.stderr


async def test_query_many_then_read_one(guide: ModuleType, tmp_path: Path) -> None:
    """The query returns ids and titles in both views; an empty result says what to try next."""
    host = make_pack_host(guide.PACK, base_dir=tmp_path)
    found = await host.call_tool("notes_search_notes", {"text": "release"})
    assert found.mcp.structured_content == {"notes": [{"id": "n1", "title": "Release plan"}], "more": False}
    assert getattr(found.mcp.content[0], "text", "") == "- n1: Release plan"
    none = await host.call_tool("notes_search_notes", {"text": "zzz"})
    assert getattr(none.mcp.content[0], "text", "").startswith("No notes match. Try fewer or other words")
    more = await host.call_tool("notes_search_notes", {"text": "e", "limit": 1})
    assert more.mcp.structured_content == {"notes": [{"id": "n1", "title": "Release plan"}], "more": True}
    read = await host.call_tool("notes_read_note", {"id": "n2"})
    assert read.mcp.structured_content == {"id": "n2", "title": "Retro", "body": "Fewer meetings.", "tags": ["team"]}


async def test_a_failure_carries_its_contract(guide: ModuleType, tmp_path: Path) -> None:
    """An unknown id is the declared failure: reason, the offending value, a recovery naming a tool."""
    host = make_pack_host(guide.PACK, base_dir=tmp_path)
    outcome = await host.call_tool("notes_read_note", {"id": "n9"})
    assert outcome.mcp.is_error is True
    error: dict[str, Any] = (outcome.mcp.structured_content or {})["error"]
    assert error["reason"] == "note_not_found" and error["retryable"] is False
    assert "'n9'" in error["message"] and "notes_search_notes" in error["recovery"]
    refused = await host.call("notes_read_note", {"id": "note one"})
    assert not refused.success  # the pattern bound refuses it before the handler runs


async def test_the_destructive_write_is_gated(guide: ModuleType, tmp_path: Path) -> None:
    """Deleting is off unless the operator allows it; allowed, it returns what it removed."""
    host = make_pack_host(guide.PACK, base_dir=tmp_path)
    assert "notes_delete_note" not in [item.name for item in await host.list_tools()]
    host = make_pack_host(guide.PACK, options={"notes": {"allow_deletes": True}}, base_dir=tmp_path)
    listed = {item.name: item for item in await host.list_tools()}
    annotations = listed["notes_delete_note"].annotations
    assert annotations is not None and annotations.destructive_hint is True and annotations.read_only_hint is False
    deleted = await host.call("notes_delete_note", {"id": "n1"})  # once: call_tool would run it twice
    assert deleted.success and deleted.result["title"] == "Release plan"
    again = await host.call_tool("notes_read_note", {"id": "n1"})
    assert again.mcp.is_error is True
