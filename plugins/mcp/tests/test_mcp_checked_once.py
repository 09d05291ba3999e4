"""An upstream's structured result is checked against its outputSchema once, by the host: the SDK
client's own check (pure Python, before the host's) is not asked for, and a result that does not
match fails with the host's words, as any pack's would."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import httpx
import pytest

from lorenz.testing import open_workspace

pytestmark = pytest.mark.slow

#: A server speaking JSON-RPC over stdio by hand (``by_hand_upstream.py``): its one tool ``sum``
#: declares ``{"sum": integer}`` and answers ``{"sum": "five"}`` when asked to add ``a`` to itself.
UPSTREAM = Path(__file__).parent / "by_hand_upstream.py"


def test_a_result_not_matching_its_output_schema_fails_with_the_hosts_check(tmp_path: Path) -> None:
    workflow = tmp_path / "WORKFLOW.md"
    workflow.write_text(f"---\ntools:\n  mcp: {{command: [{sys.executable!r}, {str(UPSTREAM)!r}]}}\n---\n", "utf-8")
    workspace = open_workspace(workflow, cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": "lorenz-mcp"})

    async def calls() -> tuple[object, ...]:
        async with httpx.AsyncClient() as http:
            good = await workspace.call("sum", {"a": 2}, http)
            bad = await workspace.call("sum", {"a": 5}, http)
        return good.success, good.result, bad.success, bad.error

    try:
        good, result, bad, error = anyio.run(calls)
    finally:
        workspace.close()
    assert (good, result, bad) == (True, {"sum": 4}, False)
    assert "tool sum returned a result that does not match its outputSchema" in str(error), error
