"""``lorenz.testing``: the in-process host, both views of a call, the fake tracker, the contract
assertion, and the opt-in pytest plugin."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest
from attrs import field, frozen

from lorenz import ToolSpec, tool_failure
from lorenz.authoring import CallContext, Pack, describe, tool
from lorenz.testing import FakeTracker, assert_pack_contract, make_pack_host

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[1]


@frozen
class FetchArgs:
    path: str = field(metadata=describe("Path on the example API."))


@frozen
class Fetched:
    status: int = field(metadata=describe("HTTP status."))
    body: str = field(metadata=describe("Response body."))


@tool(name="web_fetch_page", description="Fetch a page.", input=FetchArgs, output=Fetched)
async def fetch_page(ctx: CallContext, args: FetchArgs) -> Fetched:
    response = await ctx.http.get(f"https://example.invalid/{args.path}")
    return Fetched(status=response.status_code, body=response.text)


WEB = Pack(name="web", tools=[fetch_page])


async def test_call_tool_gives_both_views(tmp_path: Path) -> None:
    """``call_tool`` returns the pack's exact ToolResult and the MCP CallToolResult of the same call."""
    transport = httpx.MockTransport(lambda request: httpx.Response(200, text=f"hello {request.url.path}"))
    host = make_pack_host(WEB, transport=transport, base_dir=tmp_path)
    outcome = await host.call_tool("web_fetch_page", {"path": "a"})
    assert outcome.result.success and outcome.result.result == {"status": 200, "body": "hello /a"}
    assert outcome.mcp.is_error is False
    assert outcome.mcp.structured_content == outcome.result.result
    assert [tool.name for tool in await host.list_tools()] == ["web_fetch_page"]


async def test_network_is_refused_by_default(tmp_path: Path) -> None:
    """Without a transport, an outbound request fails the call with a message saying how to fake it."""
    host = make_pack_host(WEB, base_dir=tmp_path)
    result = await host.call("web_fetch_page", {"path": "a"})
    assert not result.success and "pass transport=httpx.MockTransport" in result.error


async def test_mcp_client_session(tmp_path: Path) -> None:
    """``mcp_client()`` is an SDK client session against the real host, in-process."""
    host = make_pack_host(WEB, base_dir=tmp_path)
    async with host.mcp_client() as client:
        result = await client.call_tool("web_fetch_page", {"path": "a", "extra": 1})
    assert result.is_error is True
    assert 'Unrecognized key: "extra"' in result.content[0].text


async def test_fake_tracker_mounts_and_serves_issues(tmp_path: Path) -> None:
    """The fake tracker mounts the packs under test and hands out issues in active states."""
    tracker = FakeTracker()
    tracker.add_issue("T-1", "Open one")
    tracker.add_issue("T-2", "Closed one", state="Done", state_type="completed")
    host = make_pack_host(WEB, tracker=tracker, base_dir=tmp_path)
    assert host.workspace.pack_names() == ["web"]
    client = host.workspace.tracker_client()
    assert [issue.identifier for issue in await client.fetch_candidate_issues()] == ["T-1"]
    assert [issue.title for issue in await client.fetch_issues_by_ids(["T-2"])] == ["Closed one"]


async def test_options_reach_the_pack(tmp_path: Path) -> None:
    """``options`` become the workflow's ``tools:`` map and are validated by the pack."""
    with pytest.raises(ValueError, match=r'tools\.web is not supported by the "web" pack'):
        make_pack_host(WEB, options={"web": {"x": 1}}, base_dir=tmp_path)


class RaisingPack:
    name = "bad"

    def tool_specs(self, settings: Any) -> list[ToolSpec]:
        return [ToolSpec(name="bad_do_thing", description="Does a thing.")]

    async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
        if name != "bad_do_thing":
            raise KeyError(name)
        return tool_failure("no")


def test_assert_pack_contract() -> None:
    """The contract assertion passes a good pack and fails a pack that raises, listing why."""
    assert_pack_contract(WEB)
    with pytest.raises(pytest.fail.Exception, match=r"contract-raised"):
        assert_pack_contract(RaisingPack())


async def test_assert_pack_contract_inside_an_event_loop() -> None:
    """The assertion also works from an async test (it runs its calls on a worker thread)."""
    assert_pack_contract(WEB)


PLUGIN_TEST = """
import pytest
from lorenz.authoring import Pack
from lorenz_weather import PACK

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def test_with_fixtures(lorenz_host, fake_tracker):
    fake_tracker.add_issue("W-1", "Rain")
    host = lorenz_host(PACK, tracker=fake_tracker)
    outcome = await host.call_tool("weather_list_cities", {})
    assert "Oslo" in outcome.mcp.structured_content["cities"]
    assert len(await host.workspace.tracker_client().fetch_candidate_issues()) == 1


def test_without_fixtures():
    assert True
"""


@pytest.mark.slow
def test_pytest_plugin_is_opt_in_fixtures(tmp_path: Path) -> None:
    """With ``-p lorenz.testing`` the fixtures work; a test not asking for them sets none up."""
    (tmp_path / "test_plugin_use.py").write_text(textwrap.dedent(PLUGIN_TEST))
    env = {**os.environ, "PYTHONPATH": str(ROOT / "examples" / "weather")}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "lorenz.testing",
            "-p",
            "no:cacheprovider",
            "--setup-show",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 passed" in result.stdout
    plain = result.stdout.split("test_without_fixtures", 1)[1]
    assert "lorenz_host" not in plain and "fake_tracker" not in plain


@pytest.mark.slow
def test_the_fixtures_come_however_the_plugin_is_named(tmp_path: Path) -> None:
    """With plugin autoloading off, ``-p lorenz.testing`` or a conftest's ``pytest_plugins =
    ["lorenz.testing"]`` still give the fixtures (pytest resolves the name to the entry point, which
    loads :mod:`lorenz.pytest_plugin`). The entry point alone serves this suite, and with ``-p
    lorenz.testing`` every scaffolded project's tests (its ``addopts``)."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "test_uses_fixture.py").write_text("def test_x(lorenz_host):\n    assert callable(lorenz_host)\n")
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    for extra in (["-p", "lorenz.testing"], []):
        (project / "conftest.py").write_text("" if extra else 'pytest_plugins = ["lorenz.testing"]\n')
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, "--rootdir", str(project)],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, (extra, result.stdout + result.stderr)
