"""Start-up stays light (issue 18): listing plugins and tools imports what registration and the
tool specs need, not the bundled plugins' clients, transports, board store or tool handlers.

Each check runs in a fresh interpreter with the four bundled plugins installed; timings live in
``bench/startup.py``, these tests pin which modules load."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BUNDLED = "lorenz-local,lorenz-jira,lorenz-linear,lorenz-slack,lorenz-mcp"

#: What registering the bundled plugins and listing their tools must not load.
HEAVY_PLUGIN_MODULES = (
    "lorenz_jira.rest",
    "lorenz_jira.mcp_client",
    "lorenz_jira.mcp_bridge",
    "lorenz_jira.mcp_payloads",
    "lorenz_jira.normalize",
    "lorenz_jira.adf",
    "lorenz_jira.backend",  # the transports' protocol, with lorenz.http (issue 40)
    "lorenz_linear.client",
    "lorenz_linear.projects",
    "lorenz_linear.responses",
    "lorenz_linear.transport",
    "lorenz_slack.client",
    "lorenz_slack.transport",
    "lorenz_slack.web_api",
    "lorenz_slack.web_transport",
    "lorenz_slack.rows",
    "lorenz_slack.fold",
    "lorenz_slack.handlers",
    "lorenz_local.client",
    "lorenz_local.store",
    "lorenz_local.reads",
    "lorenz_local.board",
    "lorenz_local.publish",
    "lorenz_local.tools",  # the board operations: a call imports them, listing reads the typed tools' specs
    "lorenz_local.files",
    "lorenz_mcp.upstream",
    "lorenz_mcp.errors",
    "lorenz_mcp.home",
    "lorenz_mcp.limits",
)
#: The tool modules of the packs the embedded default does not mount (issue 40): a plugin registers a
#: lazy pack (``lorenz.LazyPack``), so neither ``lorenz tools`` nor ``lorenz plugins`` loads them.
UNMOUNTED_PACK_MODULES = ("lorenz_jira.tools", "lorenz_linear.tools", "lorenz_slack.tools", "lorenz_mcp.pack")
#: What only listing the ``local`` pack's tools loads: ``lorenz plugins`` lists none.
LOCAL_TOOL_MODULES = ("lorenz_local.pack", "lorenz_local.kit", "lorenz.authoring")
#: What listing the ``local`` pack's tools does not load either: its specs are read from specs.json,
#: and the other trackers' options load only when that tracker is configured.
LISTING_SKIPS = (
    "lorenz_local.kit",
    "lorenz_local.models",
    "lorenz.authoring",
    "lorenz_jira.options",
    "lorenz_linear.options",
    "lorenz_slack.options",
)
HEAVY_LIBRARIES = (
    "httpx",
    "httpx2",
    "mcp",
    "anyio",
    "jsonschema",
    "ruamel",
    "packaging",  # a plain `lorenz-core>=0.1.0` is compared without it
    "cattrs",  # the embedded default's sections take the fast path (tests/test_settings_structure.py)
    "importlib_metadata",
    # importlib.metadata (with email, zipfile, csv) reads the entry points once per change of what
    # is installed; then their index is read back (lorenz.plugins.entry_index, issue 40)
    "importlib.metadata",
    "email",
    "zipfile",
    # Standard library modules only the commands that run something need:
    "asyncio",  # with ssl and concurrent.futures: `call`, `issues`, `serve`, an isolated pack
    "ssl",
    "concurrent.futures",
    "subprocess",  # `install`, `uninstall`
    "logging",
    # Lorenz's own modules that only a call needs (issue 40): the query DSL's parsing and evaluation
    # (listing a query tool needs its inputSchema only, `lorenz.query_schema`) and the HTTP helpers.
    "lorenz.query",
    "lorenz._query_eval",
    "lorenz.http",
)

PROBE = """
import contextlib, io, json, sys
from lorenz.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main({argv!r})
print(json.dumps({{"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}}))
"""


def _probe(argv: list[str], cwd: Path) -> tuple[int, str, set[str]]:
    env = {**os.environ, "LORENZ_LOAD_PLUGINS": BUNDLED}
    env.pop("LORENZ_WORKFLOW", None)
    for _ in range(2):  # the first run reads the installed entry points and keeps their index; a next one is timed
        done = subprocess.run(
            [sys.executable, "-c", PROBE.format(argv=argv)],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["code"], report["out"], set(report["modules"])


def _heavy(modules: set[str]) -> list[str]:
    heavy = (*HEAVY_PLUGIN_MODULES, *UNMOUNTED_PACK_MODULES, *HEAVY_LIBRARIES)
    return sorted(name for name in heavy if name in modules)


def _commands(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if name.startswith("lorenz.cli.commands."))


@pytest.mark.slow
def test_lorenz_plugins_imports_no_client_or_transport(tmp_path: Path) -> None:
    code, out, modules = _probe(["plugins"], tmp_path)
    assert code == 0, out
    for line in ("local (lorenz-local", "jira (lorenz-jira", "linear (lorenz-linear", "slack (lorenz-slack"):
        assert line in out
    assert "packs: jira" in out and "trackers: jira, jira-mcp" in out
    assert "mcp (lorenz-mcp" in out and "packs: mcp" in out
    assert {"lorenz_jira.plugin", "lorenz_slack.plugin", "lorenz_mcp.plugin", "lorenz_local.tracker"} <= modules
    assert _heavy(modules) == []
    assert [name for name in LOCAL_TOOL_MODULES if name in modules] == []
    assert _commands(modules) == ["lorenz.cli.commands.plugins"]


@pytest.mark.slow
def test_lorenz_tools_on_the_embedded_default_imports_no_client_or_parser(tmp_path: Path) -> None:
    """No WORKFLOW.md: the local pack's specs are listed without its board store, the YAML parser,
    anyio (tools run nowhere) or any other plugin's transport."""
    code, out, modules = _probe(["tools"], tmp_path)
    assert code == 0, out
    assert "local_query" in out and "[local]" in out
    assert "lorenz.toolcall.execution" not in modules
    assert [name for name in LISTING_SKIPS if name in modules] == []
    assert _heavy(modules) == []
    assert _commands(modules) == ["lorenz.cli.commands.tools"]


@pytest.mark.slow
def test_lorenz_tools_all_still_lists_the_packs_it_does_not_mount(tmp_path: Path) -> None:
    """``--all`` asks every pack for its tools: the lazy packs load then, and only then."""
    code, out, modules = _probe(["tools", "--all"], tmp_path)
    assert code == 0, out
    assert "jira_query" in out and "linear_graphql" in out and "local_query" in out
    assert {"lorenz_jira.tools", "lorenz_linear.tools", "lorenz_slack.tools"} <= modules


@pytest.mark.slow
def test_a_workflow_with_front_matter_still_parses_and_lists(tmp_path: Path) -> None:
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: local\n  path: board\n---\nbody\n", encoding="utf-8")
    code, out, modules = _probe(["tools"], tmp_path)
    assert code == 0, out
    assert "local_comment" in out
    assert "ruamel" in modules  # front matter needs the parser; the board store still waits for a call
    assert "lorenz_local.store" not in modules


@pytest.mark.parametrize("package", ["lorenz_local", "lorenz_linear", "lorenz_slack", "lorenz.authoring"])
def test_lazy_package_exports_resolve(package: str) -> None:
    """Every name a bundled package exports loads on first use, is listed by ``dir()``, and is the
    object its defining module holds."""
    module = importlib.import_module(package)
    for name in module.__all__:
        value = getattr(module, name)
        assert name in dir(module)
        home = getattr(value, "__module__", None)
        if home is not None and home.startswith(package):
            assert getattr(importlib.import_module(home), name) is value
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        module.nope  # noqa: B018 - the attribute access is what raises


def test_the_authoring_tool_decorator_is_not_shadowed_by_its_module() -> None:
    """``lorenz.authoring`` loads its names on first use, but ``tool`` (the decorator) shares its name
    with a submodule, which importing binds on the package: it must stay the decorator."""
    code = "import lorenz.authoring.tool, lorenz.authoring as a; print(a.tool.__name__, callable(a.tool))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["tool", "True"]


@pytest.mark.parametrize(
    ("command", "collecting"), [("plugins", False), ("tools", False), ("call", True), ("serve", True)]
)
def test_the_collector_is_paused_only_for_brief_commands(
    monkeypatch: pytest.MonkeyPatch, command: str, collecting: bool
) -> None:
    """A brief command runs with the cyclic garbage collector paused; one that goes on to run tools or
    serve gets it back before it starts; either way the caller's setting is restored."""
    import gc

    import attrs

    from lorenz import cli
    from lorenz.cli.commands import COMMANDS

    seen: list[bool] = []

    def record(args: object) -> int:
        seen.append(gc.isenabled())
        return 0

    monkeypatch.setitem(COMMANDS, command, attrs.evolve(COMMANDS[command], run=record))
    argv = {"call": ["call", "some_tool"], "serve": ["serve", "--stdio"]}.get(command, [command])
    assert gc.isenabled()
    assert cli.main(argv) == 0
    assert seen == [collecting] and COMMANDS[command].brief is not collecting
    assert gc.isenabled()
    gc.disable()
    try:
        assert cli.main(argv) == 0
        assert seen[-1] is False and not gc.isenabled()  # a caller that paused it keeps it paused
    finally:
        gc.enable()


@pytest.mark.slow
def test_the_process_command_freezes_its_start_up_heap(tmp_path: Path) -> None:
    """``main()`` run as the process's own command (no ``argv``) ends a brief command with the start-up
    objects frozen and the collector back on; given an ``argv`` (a caller in-process), nothing is frozen."""
    code = (
        "import gc, sys\n"
        "from lorenz.cli import main\n"
        "sys.argv = ['lorenz', 'plugins']\n"
        "main(['plugins'])\n"
        "given = gc.get_freeze_count()\n"
        "main()\n"
        "print(given, gc.get_freeze_count() > 1000, gc.isenabled(), file=sys.stderr)\n"
    )
    env = {**os.environ, "LORENZ_LOAD_PLUGINS": BUNDLED}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "0 True True"


KIT_PACK = """
import json, sys
from attrs import field, frozen
from lorenz.authoring import ErrorContract, Pack, describe, hints, tool
from lorenz.settings.model import Settings


@frozen
class Args:
    city: str = field(metadata=describe("The city."))
    days: int = field(default=1, metadata=describe("How many days.", minimum=1, maximum=7))


@frozen
class Forecast:
    summary: str = field(metadata=describe("The forecast."))

    def format(self) -> str:
        return self.summary


@tool(name="kit_get_forecast", description="The forecast for a city, day by day.", input=Args, output=Forecast,
      annotations=hints(read_only=True), enrichment=True,
      errors=[ErrorContract(reason="city_not_found", when="no such city", recovery="Check the spelling, retry.")])
async def get_forecast(ctx, args):
    return Forecast(summary="sun")


specs = Pack(name="kit", tools=[get_forecast]).tool_specs(Settings())
print(json.dumps({"specs": len(specs), "modules": sorted(sys.modules)}))
"""


@pytest.mark.slow
def test_a_typed_pack_defines_and_lists_its_tools_without_the_call_time_libraries(tmp_path: Path) -> None:
    """Importing a ``lorenz.authoring`` pack and listing its tools (what ``lorenz tools`` and
    ``lorenz plugins`` do) loads no structuring, schema-checking, async or logging library."""
    done = subprocess.run([sys.executable, "-c", KIT_PACK], cwd=tmp_path, capture_output=True, text=True, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["specs"] == 1
    assert sorted(name for name in HEAVY_LIBRARIES if name in report["modules"]) == []


def test_the_pytest_plugin_loads_the_kit_only_for_a_test_that_asks() -> None:
    """Every pytest run where Lorenz is installed loads its plugin (entry point ``lorenz.testing``):
    that costs neither the test kit nor the host until a test asks for ``lorenz_host``."""
    probe = (
        "import json, sys\n"
        "from importlib.metadata import entry_points\n"
        "(plugin,) = [ep for ep in entry_points(group='pytest11') if ep.name == 'lorenz.testing']\n"
        "plugin.load()\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    modules = set(json.loads(done.stdout))
    assert "lorenz.pytest_plugin" in modules
    assert not {name for name in modules if name.startswith(("lorenz.testing", "lorenz.host", "lorenz.cli", "uvicorn"))}
