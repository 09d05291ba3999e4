"""Call middleware (``lorenz_call_middleware``): named in ``server.middleware``, it wraps every
``tools/call`` over the official SDK client in both protocol eras; what it raises or where it hangs
answers as an ``isError`` naming it; installing one changes nothing until a workflow names it."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import mcp
import pytest
from mcp.client.stdio import StdioServerParameters

from lorenz import Call, CallNext, ConfigError, Middleware, ToolResult, hookimpl, refusal
from lorenz.host import serve_in_thread
from lorenz.workspace import open_workspace

pytestmark = pytest.mark.anyio
ENV = {"LORENZ_LOAD_PLUGINS": ""}
SEEN: list[Call] = []


class Doubler:
    """Doubles ``a``, refuses ``a == 13``, and adds the order it ran in to the result."""

    def __init__(self, tag: str) -> None:
        self.tag = tag

    async def __call__(self, call: Call, call_next: CallNext) -> ToolResult:
        SEEN.append(call)
        if call.arguments.get("a") == 13:
            return refusal("13 is unlucky", reason="rate_limited", recovery="call with another a", retry_after=2.5)
        result = await call_next(call.with_arguments({**call.arguments, "a": call.arguments["a"] * 2}))
        if result.success and isinstance(result.result, dict):
            return ToolResult(success=True, result={**result.result, "sum": result.result["sum"]})
        return result


class Raiser:
    async def __call__(self, call: Call, call_next: CallNext) -> ToolResult:
        raise RuntimeError("middleware broke")


class Hanger:
    async def __call__(self, call: Call, call_next: CallNext) -> ToolResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


class Provider:
    def __init__(self, name: str, build: Any) -> None:
        self.name = name
        self.build = build

    def create(self, options: Mapping[str, Any], settings: Any) -> Middleware:
        unknown = set(options) - {"tag"}
        if unknown:
            raise ConfigError(f"unknown option {sorted(unknown)[0]}")
        return self.build(options)  # type: ignore[no-any-return]


class MiddlewarePlugin:
    @hookimpl
    def lorenz_call_middleware(self, register: Any) -> None:
        register(Provider("double", lambda options: Doubler(str(options.get("tag", "")))))
        register(Provider("raise", lambda options: Raiser()))
        register(Provider("hang", lambda options: Hanger()))


def workflow(path: Path, server: str) -> None:
    (path / "WORKFLOW.md").write_text(f"---\ntracker:\n  kind: demo\nserver:\n{server}---\n")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_middleware_sees_the_call_changes_arguments_and_refuses(
    tmp_path: Path, host_pack: ModuleType, mode: str
) -> None:
    workflow(tmp_path, "  middleware: [double]\n")
    SEEN.clear()
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, MiddlewarePlugin()]) as server:
        async with mcp.Client(server.url, mode=mode) as client:
            done = await client.call_tool("demo_add", {"a": 2, "b": 1})
            refused = await client.call_tool("demo_add", {"a": 13, "b": 1})
    assert done.is_error is False and done.structured_content == {"sum": 5}
    assert refused.is_error is True and refused.structured_content is not None
    error = refused.structured_content["error"]
    assert error["reason"] == "rate_limited" and error["retryAfter"] == 2.5 and error["retryable"] is True
    assert error["recovery"] == "call with another a"
    call = SEEN[0]
    assert (call.tool, call.pack, call.transport, call.identities) == ("demo_add", "demo", "http", ("anonymous",))
    assert call.protocol is not None and call.protocol == SEEN[1].protocol
    assert (call.protocol == "2026-07-28") is (mode == "auto")


async def test_scoped_token_name_reaches_the_middleware_never_the_token(tmp_path: Path, host_pack: ModuleType) -> None:
    workflow(tmp_path, "  middleware: [double]\n  tokens:\n    - {token: sekrit-token-1234567890, name: ci}\n")
    SEEN.clear()
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, MiddlewarePlugin()]) as server:
        async with httpx.AsyncClient(headers={"Authorization": "Bearer sekrit-token-1234567890"}) as http:
            transport = mcp.client.streamable_http.streamable_http_client(server.url, http_client=http)
            async with mcp.Client(transport) as client:
                await client.call_tool("demo_add", {"a": 1, "b": 1})
    assert SEEN[0].token_name == "ci" and SEEN[0].identities == ("token:ci",)
    assert "sekrit" not in repr(SEEN[0])


@pytest.mark.parametrize(
    ("name", "said"), [("raise", "middleware raise raised: middleware broke"), ("hang", "did not answer within 1 s")]
)
async def test_a_middleware_that_raises_or_hangs_is_an_is_error(
    tmp_path: Path, host_pack: ModuleType, name: str, said: str
) -> None:
    workflow(tmp_path, f"  middleware: [{name}]\n  tool_timeout_seconds: 1\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, MiddlewarePlugin()]) as server:
        async with mcp.Client(server.url) as client:
            result = await client.call_tool("demo_add", {"a": 1, "b": 1})
            after = await client.list_tools()
    assert result.is_error is True and result.structured_content is not None
    assert said in result.structured_content["error"]["message"]
    assert result.structured_content["error"]["reason"] == "middleware_failed"
    assert after.tools  # the host still answers


async def test_installed_middleware_does_nothing_until_named(tmp_path: Path, host_pack: ModuleType) -> None:
    workflow(tmp_path, "  port: 0\n")
    SEEN.clear()
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, MiddlewarePlugin()]) as server:
        async with mcp.Client(server.url) as client:
            done = await client.call_tool("demo_add", {"a": 2, "b": 1})
    assert done.structured_content == {"sum": 3} and SEEN == []


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ("  middleware: [doubel]\n", 'unknown middleware doubel (did you mean "double"?)'),
        ("  middleware: [double]\n  middleware_options:\n    doubel: {}\n", 'did you mean "double"?'),
        (
            "  middleware: [double]\n  middleware_options:\n    double: {tga: x}\n",
            "server.middleware_options.double: unknown option tga",
        ),
        ("  middleware: [double, double]\n", "double is listed twice"),
    ],
)
def test_bad_middleware_settings_name_the_key(tmp_path: Path, host_pack: ModuleType, server: str, message: str) -> None:
    workflow(tmp_path, server)
    with pytest.raises(ConfigError) as caught:
        open_workspace(cwd=tmp_path, env=ENV, plugins=[host_pack, MiddlewarePlugin()])
    assert message in str(caught.value)


def docs_example_source() -> str:
    """The example plugin of docs/hooks.md (its first Python block)."""
    text = (Path(__file__).parent.parent / "docs" / "hooks.md").read_text(encoding="utf-8")
    return text.split("```python\n", 1)[1].split("```", 1)[0]


def docs_example() -> ModuleType:
    """The example plugin of docs/hooks.md, as a module."""
    module = ModuleType("lorenz_timing_plugin")
    exec(compile(docs_example_source(), "docs/hooks.md", "exec"), module.__dict__)
    return module


async def test_the_hooks_doc_example_runs(tmp_path: Path, host_pack: ModuleType) -> None:
    example = docs_example()
    options = "  middleware_options:\n    timing: {slow_seconds: 0.000001, deny_tools: [demo_fail]}\n"
    workflow(tmp_path, "  middleware: [timing]\n" + options)
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, example]) as server:
        async with mcp.Client(server.url) as client:
            done = await client.call_tool("demo_add", {"a": 2, "b": 1})
            denied = await client.call_tool("demo_fail", {})
    assert done.structured_content == {"sum": 3}
    assert denied.structured_content is not None and denied.structured_content["error"]["reason"] == "forbidden"
    workflow(tmp_path, "  middleware: [timing]\n  middleware_options:\n    timing: {slow_second: 1}\n")
    with pytest.raises(ConfigError, match='timing.slow_second is not supported \\(did you mean "slow_seconds"\\?\\)'):
        open_workspace(cwd=tmp_path, env=ENV, plugins=[host_pack, example])


async def test_in_process_calls_pass_through_the_middleware_too(tmp_path: Path, host_pack: ModuleType) -> None:
    """``lorenz call`` and ``lorenz.testing`` call through ``Workspace.call``: the same chain."""
    workflow(tmp_path, "  middleware: [double]\n")
    SEEN.clear()
    workspace = open_workspace(cwd=tmp_path, env=ENV, plugins=[host_pack, MiddlewarePlugin()])
    async with httpx.AsyncClient() as http:
        done = await workspace.call("demo_add", {"a": 2, "b": 1}, http)
        refused = await workspace.call("demo_add", {"a": 13, "b": 1}, http)
    assert done.result == {"sum": 5} and refused.result["error"]["reason"] == "rate_limited"
    assert SEEN[0].transport == "in-process" and SEEN[0].identities == ("anonymous",)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_middleware_runs_over_stdio(tmp_path: Path, mode: str) -> None:
    (tmp_path / "lorenz_timing.py").write_text(docs_example_source(), encoding="utf-8")
    shutil.copy(Path(__file__).parent / "host_pack.py", tmp_path / "host_pack.py")
    workflow(tmp_path, "  middleware: [timing]\n  middleware_options:\n    timing: {deny_tools: [demo_fail]}\n")
    env: dict[str, Any] = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update(LORENZ_LOAD_PLUGINS="", PYTHONPATH=os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")]))
    args = ["-m", "lorenz", "-p", "host_pack", "-p", "lorenz_timing", "serve", "--stdio"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=tmp_path)
    async with mcp.Client(params, mode=mode) as client:
        done = await client.call_tool("demo_add", {"a": 2, "b": 1})
        denied = await client.call_tool("demo_fail", {})
    assert done.structured_content == {"sum": 3}
    assert denied.structured_content is not None and denied.structured_content["error"]["reason"] == "forbidden"


def test_a_third_party_middleware_runs_in_the_host_when_packs_are_isolated(
    tmp_path: Path, host_pack: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``server.isolated_packs`` third-party plugins are surveyed in a child first; one whose
    middleware the workflow names is then imported in the host, where middleware runs."""
    root = tmp_path / "site"
    info = root / "lorenz_timing-0.1.0.dist-info"
    info.mkdir(parents=True)
    (root / "lorenz_timing.py").write_text(docs_example_source(), encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lorenz-timing\nVersion: 0.1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[lorenz.tool_packs]\ntiming = lorenz_timing\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.delitem(sys.modules, "lorenz_timing", raising=False)
    workflow(tmp_path, '  middleware: [timing]\n  isolated_packs: ["*"]\n')
    env = {**os.environ, "LORENZ_LOAD_PLUGINS": "lorenz-timing"}
    workspace = open_workspace(cwd=tmp_path, env=env, plugins=[host_pack])
    assert [layer.name for layer in workspace.middleware] == ["timing"]
    sys.modules.pop("lorenz_timing", None)


CLOSED: list[str] = []


class Closing:
    async def __call__(self, call: Call, call_next: CallNext) -> ToolResult:
        return await call_next(call)

    def health(self) -> dict[str, Any]:
        raise RuntimeError("no health today")

    async def aclose(self) -> None:
        CLOSED.append("closed")
        raise RuntimeError("closing is hard")


class ClosingPlugin:
    @hookimpl
    def lorenz_call_middleware(self, register: Any) -> None:
        register(Provider("closing", lambda options: Closing()))


async def test_health_and_aclose_are_optional_and_contained(tmp_path: Path, host_pack: ModuleType) -> None:
    workflow(tmp_path, "  middleware: [closing]\n")
    CLOSED.clear()
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, ClosingPlugin()]) as server:
        async with httpx.AsyncClient() as http:
            health = (await http.get(server.base_url + "/healthz")).json()
    assert "no health today" in health["middleware"]["closing"]["error"]
    assert health["status"] == "ok"
    assert CLOSED == ["closed"]  # awaited as the host stopped, its error only logged
