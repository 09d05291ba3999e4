"""The host hooks beside middleware: catalog shapers (``lorenz_catalog``), call-record sinks
(``lorenz_call_record``) and lifespan (``lorenz_startup``/``lorenz_shutdown``), over the official
SDK client; each contained when it raises or hangs, and active only when a workflow names it."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import attrs
import httpx
import mcp
import pytest
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from lorenz import ConfigError, Listing, Settings, ToolSpec, hookimpl
from lorenz.host import serve_in_thread
from lorenz.workspace import open_workspace

pytestmark = pytest.mark.anyio
ENV = {"LORENZ_LOAD_PLUGINS": ""}
LISTINGS: list[Listing] = []
RECORDS: list[Mapping[str, Any]] = []
LIFESPAN: list[tuple[str, Any]] = []
GATE = threading.Event()  # the gated sink waits on it
DELIVERED = threading.Event()  # set by the sinks once three records arrived


class Shaper:
    """Hides ``demo_boom``, hides ``demo_fail`` from the token ``ci``, rewords ``demo_add``, lists
    the rest reversed, and tries to add a tool of its own (ignored)."""

    async def __call__(self, tools: tuple[ToolSpec, ...], listing: Listing) -> Sequence[ToolSpec]:
        LISTINGS.append(listing)
        hidden = {"demo_boom", *(["demo_fail"] if listing.token_name == "ci" else [])}
        shown = [
            attrs.evolve(tool, description=f"For {listing.identities[0]}: add.") if tool.name == "demo_add" else tool
            for tool in reversed(tools)
            if tool.name not in hidden
        ]
        return [*shown, ToolSpec(name="ghost_tool", description="Not served by any pack.")]


class Raiser:
    async def __call__(self, *args: Any) -> Any:
        raise RuntimeError("broke with sekrit-value-1234")


class Hanger:
    async def __call__(self, *args: Any) -> Any:
        await asyncio.Event().wait()


class GatedSink:
    async def __call__(self, record: Mapping[str, Any]) -> None:
        await asyncio.to_thread(GATE.wait, 30)
        RECORDS.append(record)
        if len(RECORDS) >= 3:
            DELIVERED.set()


class CountingFailSink:
    """Raises on every record after counting it: the calls must not notice."""

    async def __call__(self, record: Mapping[str, Any]) -> None:
        RECORDS.append(record)
        if len(RECORDS) >= 3:
            DELIVERED.set()
        raise RuntimeError("the sink broke")


class Provider:
    def __init__(self, name: str, build: Any) -> None:
        self.name = name
        self.build = build

    def create(self, options: Mapping[str, Any], settings: Any) -> Any:
        if set(options) - {"flag"}:
            raise ConfigError(f"unknown option {sorted(set(options) - {'flag'})[0]}")
        return self.build()


class HooksPlugin:
    @hookimpl
    def lorenz_catalog(self, register: Any) -> None:
        register(Provider("shape", Shaper))
        register(Provider("shape_raise", Raiser))
        register(Provider("shape_hang", Hanger))

    @hookimpl
    def lorenz_call_record(self, register: Any) -> None:
        register(Provider("gated_sink", GatedSink))
        register(Provider("failing_sink", CountingFailSink))
        register(Provider("hanging_sink", Hanger))

    @hookimpl
    async def lorenz_startup(self, settings: Settings) -> None:
        LIFESPAN.append(("startup", settings))

    @hookimpl
    def lorenz_shutdown(self, settings: Settings) -> None:
        LIFESPAN.append(("shutdown", settings))


class BrokenLifespan:
    """A used plugin (it provides ``audit``) whose startup raises and whose shutdown hangs."""

    @hookimpl
    def lorenz_call_record(self, register: Any) -> None:
        register(Provider("audit", CountingFailSink))

    @hookimpl
    def lorenz_startup(self) -> None:
        raise SystemExit("startup broke")

    @hookimpl
    async def lorenz_shutdown(self) -> None:
        await asyncio.Event().wait()


def workflow(path: Path, server: str) -> None:
    (path / "WORKFLOW.md").write_text(f"---\ntracker:\n  kind: demo\nserver:\n{server}---\n")


@pytest.fixture(autouse=True)
def fresh() -> None:
    for found in (LISTINGS, RECORDS, LIFESPAN):
        found.clear()
    GATE.clear()
    DELIVERED.clear()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_shaper_hides_rewords_and_reorders_and_hidden_is_uncallable(
    tmp_path: Path, host_pack: ModuleType, mode: str
) -> None:
    workflow(tmp_path, "  middleware: [shape]\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, HooksPlugin()]) as server:
        async with mcp.Client(server.url, mode=mode) as client:
            listed = await client.list_tools()
            added = await client.call_tool("demo_add", {"a": 1, "b": 2})
            hidden = await client.call_tool("demo_boom", {})
            ghost = await client.call_tool("ghost_tool", {})
    names = [tool.name for tool in listed.tools]
    assert names == ["demo_list", "demo_fail", "demo_add"]  # reversed, demo_boom hidden, ghost ignored
    add = listed.tools[-1]
    assert add.description == "For anonymous: add." and add.input_schema["required"] == ["a", "b"]
    assert added.structured_content == {"sum": 3}
    assert hidden.is_error is True and "demo_boom" not in str(host_pack.CALLS[-1:])
    assert ghost.is_error is True
    assert LISTINGS[0].transport == "http" and (LISTINGS[0].protocol == "2026-07-28") is (mode == "auto")


async def test_a_shaper_shapes_per_caller_from_the_token_name(tmp_path: Path, host_pack: ModuleType) -> None:
    tokens = "    - {token: ci-token-1234567890abcd, name: ci}\n    - {token: ops-token-1234567890abc, name: ops}\n"
    workflow(tmp_path, f"  middleware: [shape]\n  tokens:\n{tokens}")
    seen: dict[str, list[str]] = {}
    called: dict[str, Any] = {}
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, HooksPlugin()]) as server:
        for name, token in (("ci", "ci-token-1234567890abcd"), ("ops", "ops-token-1234567890abc")):
            async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}) as http:
                transport = streamable_http_client(server.url, http_client=http)
                async with mcp.Client(transport) as client:
                    seen[name] = [tool.name for tool in (await client.list_tools()).tools]
                    called[name] = (await client.call_tool("demo_fail", {})).structured_content["error"].get("code")
    assert "demo_fail" not in seen["ci"] and "demo_fail" in seen["ops"]
    assert called == {"ci": None, "ops": "demo"}  # ci cannot call what it cannot see; ops reaches the pack
    assert {listing.token_name for listing in LISTINGS} == {"ci", "ops"}
    assert all("-token-" not in repr(listing) for listing in LISTINGS)  # its name, never the token


@pytest.mark.parametrize(("name", "said"), [("shape_raise", "raised: broke with"), ("shape_hang", "within 1 s")])
async def test_a_shaper_that_raises_or_hangs_fails_closed_and_the_host_serves(
    tmp_path: Path, host_pack: ModuleType, name: str, said: str
) -> None:
    workflow(tmp_path, f"  middleware: [{name}]\n  tool_timeout_seconds: 1\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, HooksPlugin()]) as server:
        async with mcp.Client(server.url) as client:
            listed = await client.list_tools()
            called = await client.call_tool("demo_add", {"a": 1, "b": 1})
            again = await client.list_tools()  # the host still answers
    assert listed.tools == [] and again.tools == []
    assert called.is_error is True and called.structured_content is not None
    error = called.structured_content["error"]
    assert error["reason"] == "catalog_failed" and said in error["message"] and name in error["message"]


async def test_a_sink_gets_each_record_off_the_call_path(tmp_path: Path, host_pack: ModuleType) -> None:
    workflow(tmp_path, "  middleware: [gated_sink]\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, HooksPlugin()]) as server:
        async with mcp.Client(server.url) as client:
            results = [await client.call_tool("demo_add", {"a": n, "b": 1}) for n in range(2)]
            results.append(await client.call_tool("demo_fail", {}))
            assert not RECORDS  # every call answered while the sink is still stuck on the first record
            async with httpx.AsyncClient() as http:
                health = (await http.get(server.base_url + "/healthz")).json()
            GATE.set()
            assert await asyncio.to_thread(DELIVERED.wait, 30)
    assert [result.is_error for result in results] == [False, False, True]
    assert [(r["tool"], r["outcome"]) for r in RECORDS] == [
        ("demo_add", "success"),
        ("demo_add", "success"),
        ("demo_fail", "failure"),
    ]
    assert RECORDS[0]["pack"] == "demo" and "token" not in RECORDS[0] and "arguments" not in RECORDS[0]
    assert RECORDS[0] is not RECORDS[1] and RECORDS[2]["error"] == "nope"
    counts = health["sinks"]["gated_sink"]
    assert (counts["delivered"], counts["dropped"], counts["failed"]) == (0, 0, 0)


@pytest.mark.parametrize("sink", ["failing_sink", "hanging_sink"])
async def test_a_failing_or_hanging_sink_never_fails_a_call(
    tmp_path: Path, host_pack: ModuleType, sink: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import lorenz.host.sinks

    monkeypatch.setattr(lorenz.host.sinks, "SINK_SECONDS", 0.2)
    monkeypatch.setattr(lorenz.host.sinks, "CLOSE_SECONDS", 0.2)
    workflow(tmp_path, f"  middleware: [{sink}]\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, HooksPlugin()]) as server:
        async with mcp.Client(server.url) as client:
            results = [await client.call_tool("demo_add", {"a": n, "b": 1}) for n in range(3)]
            if sink == "failing_sink":
                assert await asyncio.to_thread(DELIVERED.wait, 30)
    assert [result.structured_content for result in results] == [{"sum": 1}, {"sum": 2}, {"sum": 3}]


async def test_startup_and_shutdown_run_once_with_the_live_settings(tmp_path: Path, host_pack: ModuleType) -> None:
    workflow(tmp_path, "  middleware: [shape]\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, HooksPlugin()]) as server:
        assert [hook for hook, _ in LIFESPAN] == ["startup"]
        async with mcp.Client(server.url) as client:
            await client.list_tools()
    assert [hook for hook, _ in LIFESPAN] == ["startup", "shutdown"]
    settings = LIFESPAN[0][1]
    assert isinstance(settings, Settings) and settings.server.middleware == ("shape",)


async def test_an_installed_plugin_the_workflow_does_not_use_gets_no_lifespan(
    tmp_path: Path, host_pack: ModuleType
) -> None:
    workflow(tmp_path, "  port: 0\n")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, HooksPlugin()]) as server:
        async with mcp.Client(server.url) as client:
            listed = await client.list_tools()
    assert LIFESPAN == [] and len(listed.tools) == 4 and LISTINGS == []


async def test_a_raising_startup_and_a_hanging_shutdown_do_not_stop_the_host(
    tmp_path: Path, host_pack: ModuleType, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import lorenz.host.lifespan

    monkeypatch.setattr(lorenz.host.lifespan, "LIFESPAN_SECONDS", 0.3)
    workflow(tmp_path, "  middleware: [audit]\n")
    caplog.set_level(logging.WARNING, "lorenz.host")
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, BrokenLifespan()]) as server:
        async with mcp.Client(server.url) as client:
            done = await client.call_tool("demo_add", {"a": 1, "b": 1})
    assert done.structured_content == {"sum": 2}
    assert "lorenz_startup raised SystemExit: startup broke" in caplog.text
    assert "lorenz_shutdown of plugin" in caplog.text and "did not finish within 0.3 s" in caplog.text


@pytest.mark.parametrize(
    ("server", "message"),
    [
        ("  middleware: [shap]\n", 'unknown middleware shap (did you mean "shape"?)'),
        ("  middleware: [shape]\n  middleware_options:\n    shape: {flg: 1}\n", "middleware_options.shape: unknown"),
    ],
)
def test_bad_shaper_settings_name_the_key(tmp_path: Path, host_pack: ModuleType, server: str, message: str) -> None:
    workflow(tmp_path, server)
    with pytest.raises(ConfigError, match="server.middleware") as raised:
        open_workspace(cwd=tmp_path, env=ENV, plugins=[host_pack, HooksPlugin()])
    assert message in str(raised.value)


PLUGIN_SOURCE = '''
"""A stdio test's plugin: a middleware tagging each result, a shaper hiding demo_boom, a sink
writing each record to a file, lifespan hooks writing theirs, and a command counting the records."""
import json
from pathlib import Path
from lorenz import PluginCommand, ToolResult, hookimpl


class Tagger:
    async def __call__(self, call, call_next):
        result = await call_next(call)
        if result.success and isinstance(result.result, dict):
            return ToolResult(success=True, result={**result.result, "audited": call.method})
        return result


class Shaper:
    async def __call__(self, tools, listing):
        Path("listings.txt").open("a").write(listing.transport + "\\n")
        return [tool for tool in tools if tool.name != "demo_boom"]


class Sink:
    async def __call__(self, record):
        Path("records.txt").open("a").write(json.dumps(record) + "\\n")


class Provider:
    def __init__(self, name, build):
        self.name, self.build = name, build

    def create(self, options, settings):
        return self.build()


@hookimpl
def lorenz_call_middleware(register):
    register(Provider("audit", Tagger))


@hookimpl
def lorenz_catalog(register):
    register(Provider("audit", Shaper))


@hookimpl
def lorenz_call_record(register):
    register(Provider("audit", Sink))


@hookimpl
def lorenz_startup(settings):
    Path("lifespan.txt").open("a").write("startup\\n")


@hookimpl
async def lorenz_shutdown(settings):
    Path("lifespan.txt").open("a").write("shutdown\\n")


def count(args):
    print(len(Path("records.txt").read_text().splitlines()), "records")
    return 0


@hookimpl
def lorenz_register_commands(register):
    register(PluginCommand(name="audit-count", help="count the audited calls", run=count))
'''


def distribution(root: Path) -> None:
    """``lorenz-audit`` (``PLUGIN_SOURCE``) as an installed distribution in ``root``."""
    info = root / "lorenz_audit-0.1.0.dist-info"
    info.mkdir(parents=True)
    (root / "lorenz_audit.py").write_text(PLUGIN_SOURCE, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lorenz-audit\nVersion: 0.1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[lorenz.tool_packs]\naudit = lorenz_audit\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")


@pytest.mark.parametrize(("mode", "installed"), [("legacy", False), ("auto", True)])
async def test_shaper_sink_and_lifespan_over_stdio(tmp_path: Path, mode: str, installed: bool) -> None:
    """One name (``audit``) turns on a plugin's middleware, shaper and sink together, and its
    command runs from the CLI; the plugin given with ``-p``, or installed as a distribution (found
    by its entry point), written against the public API only."""
    site = tmp_path / "site"
    distribution(site)
    shutil.copy(Path(__file__).parent / "host_pack.py", site / "host_pack.py")
    workflow(tmp_path, "  middleware: [audit]\n")
    env: dict[str, Any] = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env.update(
        LORENZ_LOAD_PLUGINS="lorenz-audit" if installed else "",
        PYTHONPATH=os.pathsep.join([str(site), env.get("PYTHONPATH", "")]),
        XDG_CACHE_HOME=str(tmp_path / "cache"),
    )
    plugin = [] if installed else ["-p", "lorenz_audit"]
    args = ["-m", "lorenz", "-p", "host_pack", *plugin, "serve", "--stdio"]
    params = StdioServerParameters(command=sys.executable, args=args, env=env, cwd=tmp_path)
    async with mcp.Client(params, mode=mode) as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        hidden = await client.call_tool("demo_boom", {})
        done = await client.call_tool("demo_add", {"a": 2, "b": 1})
    assert "demo_boom" not in names and "demo_add" in names
    assert hidden.is_error is True and done.structured_content == {"sum": 3, "audited": "tools/call"}
    assert (tmp_path / "lifespan.txt").read_text().split() == ["startup", "shutdown"]
    assert set((tmp_path / "listings.txt").read_text().split()) == {"stdio"}
    records = (tmp_path / "records.txt").read_text().splitlines()  # written before shutdown drained the queue
    assert [line.count('"tool": "demo_') for line in records] == [1, 1]
    command = [sys.executable, "-m", "lorenz", *plugin, "audit-count"]
    run = functools.partial(subprocess.run, capture_output=True, text=True, timeout=120)
    counted = await asyncio.to_thread(run, command, env=env, cwd=tmp_path)
    assert (counted.returncode, counted.stdout) == (0, "2 records\n"), counted.stderr


CLOSED: list[str] = []
ALL_CLOSED = threading.Event()


class ClosingMiddleware:
    def __init__(self, tag: str) -> None:
        self.tag = tag

    async def __call__(self, call: Any, call_next: Any) -> Any:
        return await call_next(call)

    async def aclose(self) -> None:
        CLOSED.append(f"middleware {self.tag}")
        if len(CLOSED) == 2:
            ALL_CLOSED.set()


class ClosingSink(ClosingMiddleware):
    async def __call__(self, record: Any) -> None:  # type: ignore[override]
        RECORDS.append(record)

    async def aclose(self) -> None:
        CLOSED.append(f"sink {self.tag}")
        if len(CLOSED) == 2:
            ALL_CLOSED.set()


class ClosingPlugin:
    @hookimpl
    def lorenz_call_middleware(self, register: Any) -> None:
        register(Provider("keep", lambda: ClosingMiddleware("first")))

    @hookimpl
    def lorenz_call_record(self, register: Any) -> None:
        register(Provider("keep", lambda: ClosingSink("first")))


async def test_a_reload_closes_the_middleware_and_sinks_it_replaced(tmp_path: Path, host_pack: ModuleType) -> None:
    workflow(tmp_path, "  middleware: [keep]\n")
    CLOSED.clear()
    ALL_CLOSED.clear()
    with serve_in_thread(cwd=tmp_path, env=ENV, plugins=[host_pack, ClosingPlugin()]) as server:
        async with mcp.Client(server.url) as client:
            await client.call_tool("demo_add", {"a": 1, "b": 1})  # the sink's queue starts
            workflow(tmp_path, "  port: 0\n")  # server.middleware changed: nothing named any more
            listed = await client.list_tools()  # served by the reloaded workflow
            assert await asyncio.to_thread(ALL_CLOSED.wait, 30)
            closed_while_serving = sorted(CLOSED)
            done = await client.call_tool("demo_add", {"a": 2, "b": 2})
    assert len(listed.tools) == 4 and done.structured_content == {"sum": 4}
    assert closed_while_serving == ["middleware first", "sink first"]
    assert len(CLOSED) == 2  # not closed a second time as the host stopped
    assert len(RECORDS) == 1  # the replaced sink gets nothing after the reload


@pytest.mark.slow
@pytest.mark.parametrize("isolated", [True, False])
def test_an_installed_distribution_s_shaper_and_sink_run_in_the_host(
    tmp_path: Path, host_pack: ModuleType, monkeypatch: pytest.MonkeyPatch, isolated: bool
) -> None:
    """A third-party plugin is surveyed in a child first (isolated packs, or a plain workflow that
    does not mount its packs); one whose shaper or sink the workflow names is then imported in the
    host, where they run."""
    root = tmp_path / "site"
    distribution(root)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delitem(sys.modules, "lorenz_audit", raising=False)
    workflow(tmp_path, '  middleware: [audit]\n  isolated_packs: ["*"]\n' if isolated else "  middleware: [audit]\n")
    env = {**os.environ, "LORENZ_LOAD_PLUGINS": "lorenz-audit"}
    workspace = open_workspace(cwd=tmp_path, env=env, plugins=[host_pack])
    extensions = workspace.extensions
    assert extensions is not None
    assert [shaper.name for shaper in extensions.shapers] == ["audit"] == [sink.name for sink in extensions.sinks]
    assert type(extensions.shapers[0].obj).__module__ == "lorenz_audit"  # the real one, imported here
    sys.modules.pop("lorenz_audit", None)


async def test_a_shaper_cannot_change_a_tool_s_schemas_or_scopes() -> None:
    from lorenz.toolcall.catalog import CatalogFailed, shape_catalog
    from lorenz.toolcall.extensions import Named

    given = (ToolSpec(name="a", description="A.", input_schema={"type": "object"}, auth=("read",)),)

    class Rewrites:
        async def __call__(self, tools: tuple[ToolSpec, ...], listing: Listing) -> Sequence[ToolSpec]:
            return [attrs.evolve(tools[0], description="Changed.", input_schema={"type": "string"}, auth=())]

    class Answers:
        def __init__(self, answer: object) -> None:
            self.answer = answer

        async def __call__(self, tools: tuple[ToolSpec, ...], listing: Listing) -> object:
            return self.answer

    (shaped,) = await shape_catalog([Named("rewrites", Rewrites())], given, Listing(), budget=5)
    assert (shaped.description, shaped.input_schema, shaped.auth) == ("Changed.", {"type": "object"}, ("read",))
    for answer, said in [({"a": 1}, "returned dict, not a list of ToolSpec"), (["a"], "returned a str among")]:
        with pytest.raises(CatalogFailed, match=f"catalog shaper odd {said}"):
            await shape_catalog([Named("odd", Answers(answer))], given, Listing(), budget=5)
