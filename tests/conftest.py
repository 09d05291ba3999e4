"""Fixtures for the core tests: real plugin distributions built on disk."""

from __future__ import annotations

import importlib.util
import io
import os
import subprocess
import sys
import sysconfig
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ACME_PLUGIN = """
from lorenz import Issue, ToolSpec, hookimpl, tool_failure, tool_success


class AcmeClient:
    async def fetch_candidate_issues(self):
        return [Issue(id="A-1", identifier="A-1", title="Fix the widget", state="Todo", state_type="unstarted")]

    async def fetch_issues_by_ids(self, ids):
        return []


class AcmeTracker:
    kind = "acme"

    def create_client(self, settings, context):
        return AcmeClient()

    def default_tool_packs(self, settings):
        return ["acme"]


class AcmePack:
    name = "acme"

    def tool_specs(self, settings):
        return [
            ToolSpec(
                name="acme_echo",
                description="Echo a message back. Args: message.",
                input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]},
            )
        ]

    async def execute_tool(self, name, input, context):
        message = input.get("message") if isinstance(input, dict) else None
        if not isinstance(message, str) or not message:
            return tool_failure("'message' is required")
        return tool_success({"echo": message})


@hookimpl
def lorenz_register_trackers(register):
    register(AcmeTracker())


@hookimpl
def lorenz_register_tool_packs(register):
    register(AcmePack())
"""

BROKEN_PLUGIN = """
import lorenz_sdk_that_does_not_exist  # noqa: F401
"""

TYPO_PLUGIN = """
from lorenz import hookimpl


@hookimpl
def lorenz_register_tool_packs(regster):
    regster(None)
"""

RAISING_PLUGIN = """
from lorenz import hookimpl


@hookimpl
def lorenz_register_tool_packs(register):
    raise RuntimeError("registration blew up")
"""


def write_dist(root: Path, dist: str, module: str, source: str, version: str = "0.1.0") -> Path:
    """Write a module plus a real ``.dist-info`` declaring it in ``lorenz.tool_packs``."""
    (root / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    info = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n", encoding="utf-8")
    entry = module.removeprefix("lorenz_")
    (info / "entry_points.txt").write_text(f"[lorenz.tool_packs]\n{entry} = {module}\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    return root


@pytest.fixture
def dist_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory on ``sys.path`` holding the acme (good) and broken distributions."""
    root = tmp_path / "site"
    root.mkdir()
    write_dist(root, "lorenz-acme", "lorenz_acme", ACME_PLUGIN)
    write_dist(root, "lorenz-broken", "lorenz_broken", BROKEN_PLUGIN)
    write_dist(root, "lorenz-typo", "lorenz_typo", TYPO_PLUGIN)
    write_dist(root, "lorenz-raising", "lorenz_raising", RAISING_PLUGIN)
    sys.path.insert(0, str(root))
    try:
        yield root
    finally:
        sys.path.remove(str(root))
        for name in ("lorenz_acme", "lorenz_broken", "lorenz_typo", "lorenz_raising", "lorenz_zed", "lorenz_slow"):
            sys.modules.pop(name, None)


@pytest.fixture(scope="session")
def host_pack() -> ModuleType:
    """``tests/host_pack.py`` (the host tests' ``demo`` tracker and packs), loaded by path: the tests
    directory is not a package, and it stays out of ``sys.modules`` for the subprocess tests' own copy."""
    spec = importlib.util.spec_from_file_location("host_pack", Path(__file__).parent / "host_pack.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ZED_PLUGIN = """
from lorenz import ToolSpec, hookimpl, tool_success


class ZedPack:
    name = "zed"

    def tool_specs(self, settings):
        return [ToolSpec(name="zed_ping", description="Answer pong.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"pong": True})


@hookimpl
def lorenz_register_tool_packs(register):
    register(ZedPack())
"""

SLOW_PLUGIN = """
import asyncio

from lorenz import Issue, ToolSpec, hookimpl, tool_success

DELAY = 1.8


class SlowClient:
    async def fetch_candidate_issues(self):
        await asyncio.sleep(DELAY)
        return [Issue(id="S-1", identifier="S-1", title="Slow one", state="Todo", state_type="unstarted")]

    async def fetch_issues_by_ids(self, ids):
        return []


class SlowTracker:
    kind = "slow"

    def create_client(self, settings, context):
        return SlowClient()

    def default_tool_packs(self, settings):
        return ["slow"]


class SlowPack:
    name = "slow"

    def tool_specs(self, settings):
        return [ToolSpec(name="slow_wait", description="Wait a little.")]

    async def execute_tool(self, name, input, context):
        await asyncio.sleep(DELAY)
        return tool_success({"waited": DELAY})


@hookimpl
def lorenz_register_trackers(register):
    register(SlowTracker())


@hookimpl
def lorenz_register_tool_packs(register):
    register(SlowPack())
"""


@pytest.fixture(autouse=True)
def _survey_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test keeps confined survey reports in a cache of its own (``XDG_CACHE_HOME``), never the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))


CLI_DISTS = "lorenz-acme,lorenz-broken,lorenz-zed,lorenz-slow"


@pytest.fixture
def lorenz(dist_dir: Path, tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the installed ``lorenz`` script in ``tmp_path/work`` (an acme workflow), where only the test
    distributions load: acme (mounted by the workflow), broken, zed (a pack nothing mounts), slow."""
    write_dist(dist_dir, "lorenz-zed", "lorenz_zed", ZED_PLUGIN)
    write_dist(dist_dir, "lorenz-slow", "lorenz_slow", SLOW_PLUGIN)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    (work / "WORKFLOW.md").write_text("---\ntracker:\n  kind: acme\n---\nDo the work.\n", encoding="utf-8")
    script = Path(sys.executable).with_name("lorenz")

    def run(*args: str, env: dict[str, str] | None = None, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        environ = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
        environ.update({"PYTHONPATH": str(dist_dir), "LORENZ_LOAD_PLUGINS": CLI_DISTS, **(env or {})})
        kwargs.setdefault("cwd", work)
        if "stderr" not in kwargs:  # a test may hand stderr a terminal of its own
            kwargs["capture_output"] = True
        return subprocess.run([str(script), *args], env=environ, text=True, check=False, timeout=60, **kwargs)

    return run


@pytest.fixture(scope="session")
def isolation_packs() -> ModuleType:
    """``tests/isolation_packs.py`` (the isolated-pack tests' distributions), loaded by path."""
    spec = importlib.util.spec_from_file_location("isolation_packs", Path(__file__).parent / "isolation_packs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def venv(tmp_path: Path) -> tuple[Path, Path]:
    """``(its python, its site-packages)``: a fresh venv over this environment's packages (a ``.pth``
    calling ``site.addsitedir``), for a test that installs into the venv that runs ``lorenz``."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")], check=True)
    python = tmp_path / "venv" / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    here = sysconfig.get_paths()["purelib"]
    (purelib / "_lorenz_test_env.pth").write_text(f"import site; site.addsitedir({here!r})\n", encoding="utf-8")
    return python, purelib


@pytest.fixture(scope="session")
def sandbox_packs() -> ModuleType:
    """``tests/sandbox_packs.py`` (the sandbox tests' hostile distribution), loaded by path."""
    spec = importlib.util.spec_from_file_location("sandbox_packs", Path(__file__).parent / "sandbox_packs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Stop(threading.Event):
    """The follower's stop event, which also says when the follower first waits at the log's end."""

    def __init__(self) -> None:
        super().__init__()
        self.polling = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.polling.set()
        return super().wait(timeout)


@pytest.fixture
def start_following() -> Iterator[Callable[[Path, io.StringIO], None]]:
    """``start_following(path, out)``: ``lorenz calls --follow``'s loop on ``path`` in a thread, returned
    once it waits at the end of the file (what is appended then is what it must print)."""
    from lorenz.calllog.reader import follow

    stops: list[_Stop] = []

    def start(path: Path, out: io.StringIO) -> None:
        stop = _Stop()
        stops.append(stop)
        kwargs = {"poll_seconds": 0.02, "stop": stop}
        threading.Thread(target=follow, args=(path, out), kwargs=kwargs, daemon=True).start()
        assert stop.polling.wait(30), "follow never reached the end of the log"

    yield start
    for stop in stops:
        stop.set()
