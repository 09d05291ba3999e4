"""The extension surface is declared: every member the core looks up on a plugin's object is on
docs/api.md, and every hook the core calls is a hookspec documented in docs/hooks.md."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from types import ModuleType
from typing import Any, ClassVar

import httpx
import mcp
import pytest

import lorenz.hookspecs
from lorenz import hookimpl
from lorenz.host import serve_in_thread
from lorenz.plugins.contributions import NAMED_HOOKS
from lorenz.workspace import open_workspace

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core" / "lorenz"
API = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
HOOKS_DOC = (ROOT / "docs" / "hooks.md").read_text(encoding="utf-8")
DECLARED = {word for span in re.findall(r"`([^`]+)`", API) for word in re.findall(r"[A-Za-z_]\w*", span)}
#: What a ``getattr`` probe's receiver is called when it is a plugin's object (a pack, a tracker,
#: a plugin module, a middleware, shaper or sink) or the core's wrapper around one.
PLUGIN_OBJECT = re.compile(r"(^|[._])(pack|provider|tracker|plugin|inner|middleware|obj|source|stub)$|^found\[1\]$")
#: Members the core sets on its own wrappers of a pack (an instance, an isolated or lazy pack's
#: stand-in) and reads back through the same probe; Python's own names.
CORE_MADE = {
    "provider": "InstancePack: the pack serving a tools: key of its own",
    "inner": "InstancePack, LazyPack: the wrapped pack",
    "isolated": "the isolated pack's proxy and stubs",
    "isolation_source": "the isolated pack's stub: where its process imports it from",
    "listed_specs": "the surveyed pack's stub: its tools as its survey listed them",
    "supervisor": "the isolated pack's proxy: its process supervisor",
    "view": "the isolated pack's proxy: the settings it was started with",
    "__file__": "Python: a plugin module's file",
    "__name__": "Python: a plugin module's name",
    "__module__": "Python: a pack class's module",
}


def probes() -> list[tuple[str, str]]:
    """``(member, where)`` for each ``getattr``/``hasattr`` of a literal name on a plugin object."""
    found = []
    for path in sorted(CORE.rglob("*.py")):
        if "scaffold" in path.parts and "project" in path.parts:
            continue  # the template a new pack starts from, not the core
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            if node.func.id not in ("getattr", "hasattr") or len(node.args) < 2:
                continue
            name, receiver = node.args[1], ast.unparse(node.args[0])
            if isinstance(name, ast.Constant) and isinstance(name.value, str) and PLUGIN_OBJECT.search(receiver):
                found.append((name.value, f"{path.relative_to(ROOT)}:{node.lineno}"))
    return found


def test_every_member_the_core_probes_on_a_plugin_object_is_declared() -> None:
    found = probes()
    assert len(found) > 40, "the scan found too few probes to be looking at the core"
    undeclared = [f"{where}: {member}" for member, where in found if member not in DECLARED | set(CORE_MADE)]
    assert not undeclared, "members the core looks up that docs/api.md does not declare:\n" + "\n".join(undeclared)
    stale = set(CORE_MADE) - {member for member, _ in found}
    assert not stale, f"CORE_MADE names the core no longer probes: {sorted(stale)}"


def test_the_core_calls_only_declared_hooks_and_each_is_documented() -> None:
    specs = {name for name, _ in inspect.getmembers(lorenz.hookspecs, inspect.isfunction) if name.startswith("lorenz_")}
    called: set[str] = set()
    for path in sorted(CORE.rglob("*.py")):
        machinery = "plugins" in path.relative_to(CORE).parts  # where hooks are called by name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and ast.unparse(node.value).endswith(".hook"):
                called.add(node.attr)  # pm.hook.lorenz_…
            elif machinery and isinstance(node, ast.Constant) and isinstance(node.value, str):
                called.update(re.findall(r"^lorenz_\w+$", node.value))
    assert set(NAMED_HOOKS) <= called and {"lorenz_startup", "lorenz_shutdown"} <= called
    assert called - specs == set(), f"the core calls hooks no hookspec declares: {sorted(called - specs)}"
    for name in specs:
        headings = [line for line in HOOKS_DOC.splitlines() if line.startswith("## ")]
        assert any(f"`{name}(" in line for line in headings), f"docs/hooks.md has no section for {name}"
        assert f"`{name}`" in API, f"docs/api.md does not name {name}"


class Recording:
    """Records every member the core asks of it that it does not have."""

    asked: ClassVar[set[str]]

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("__"):
            type(self).asked.add(name)
        raise AttributeError(name)


@pytest.mark.anyio
async def test_what_the_host_asks_a_pack_and_a_tracker_is_declared(tmp_path: Path, host_pack: ModuleType) -> None:
    """A pack and a tracker that record what they are asked, served and called over the SDK client,
    listed and checked: every member the host looked for is declared."""

    class Pack(Recording, host_pack.DemoPack):  # type: ignore[misc,name-defined]
        asked: ClassVar[set[str]] = set()

    class Tracker(Recording, host_pack.DemoTracker):  # type: ignore[misc,name-defined]
        asked: ClassVar[set[str]] = set()

    class Plugin:
        @hookimpl
        def lorenz_register_tool_packs(self, register: Any) -> None:
            register(Pack())

        @hookimpl
        def lorenz_register_trackers(self, register: Any) -> None:
            register(Tracker())

    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: demo\n---\n", encoding="utf-8")
    env = {"LORENZ_LOAD_PLUGINS": ""}
    workspace = open_workspace(cwd=tmp_path, env=env, plugins=[Plugin()])
    assert [spec.name for spec in workspace.tool_specs()][:1] == ["demo_add"]
    with serve_in_thread(cwd=tmp_path, env=env, plugins=[Plugin()]) as server:
        async with mcp.Client(server.url) as client:
            await client.list_tools()
            await client.call_tool("demo_add", {"a": 1, "b": 2})
            await client.list_resources()
            await client.list_prompts()
        async with httpx.AsyncClient() as http:
            assert (await http.get(server.base_url + "/")).status_code == 200
            assert (await http.get(server.base_url + "/healthz")).status_code == 200
    asked = Pack.asked | Tracker.asked
    assert {"validate_options", "disabled_tools", "project_url"} <= asked  # it did look
    assert asked <= DECLARED | set(CORE_MADE), f"undeclared: {sorted(asked - DECLARED - set(CORE_MADE))}"


@pytest.mark.anyio
async def test_a_pack_cannot_claim_the_isolated_proxy_s_exemption(tmp_path: Path, host_pack: ModuleType) -> None:
    """The runner skips the abandonable task only for the core's own isolated-pack proxy (a type),
    so a pack setting the flag that proxy once carried is still timed out."""
    import asyncio

    class Claims(host_pack.DemoPack):  # type: ignore[misc,name-defined]
        answers_by_deadline = True

        async def execute_tool(self, name: str, input: Any, context: Any) -> Any:
            await asyncio.Event().wait()

    class Plugin:
        @hookimpl
        def lorenz_register_tool_packs(self, register: Any) -> None:
            register(Claims())

        @hookimpl
        def lorenz_register_trackers(self, register: Any) -> None:
            register(host_pack.DemoTracker())

    (tmp_path / "WORKFLOW.md").write_text("---\ntracker: {kind: demo}\nserver: {tool_timeout_seconds: 0.5}\n---\n")
    workspace = open_workspace(cwd=tmp_path, env={"LORENZ_LOAD_PLUGINS": ""}, plugins=[Plugin()])
    async with httpx.AsyncClient() as http:
        result = await workspace.call("demo_add", {"a": 1, "b": 1}, http)
    assert result.success is False and "did not finish within 0.5 s" in str(result.error)
