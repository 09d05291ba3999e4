"""Shared pytest configuration: async tests run on asyncio through anyio's pytest plugin, and
hypothesis profiles: a fast default for the normal suite, ``fuzz`` (``nox -s fuzz``) for long runs.
Also a backend that never answers, for the timeout tests of the core and every bundled client, and
the parallel run: ``python -m pytest`` spreads the tests over pytest-xdist workers."""

import compileall
import logging
import os
import re
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).parent

# The normal suite runs 200 examples per fuzz target (targets leave max_examples to the
# profile); `nox -s fuzz` selects the `fuzz` profile (LORENZ_HYPOTHESIS_PROFILE=fuzz): 5,000 each.
settings.register_profile("default", max_examples=200, deadline=None)
settings.register_profile(
    "fuzz", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("LORENZ_HYPOTHESIS_PROFILE", "default"))

#: The editable sources, which no test edits; the project templates are data, never imported.
COMPILED = [ROOT / "core" / "lorenz", *sorted((ROOT / "plugins").glob("*/lorenz_*"))]
TEMPLATES = re.compile(r"[/\\](scaffold[/\\]project|openapi[/\\]template)[/\\]")


@pytest.fixture(autouse=True)
def _logging_restored() -> Iterator[None]:
    """A command run in-process (``main(["serve", ...])``) sets the ``lorenz`` and uvicorn access
    loggers up for a terminal: a handler on the stderr of that moment, no propagation. Undone after
    each test, so a later test's ``caplog`` sees the records whichever worker ran what before it,
    and nothing writes to a closed capture stream."""
    loggers = [logging.getLogger(name) for name in ("lorenz", "uvicorn.access")]
    saved = [(logger.handlers[:], logger.propagate, logger.level) for logger in loggers]
    yield
    for logger, (handlers, propagate, level) in zip(loggers, saved, strict=True):
        logger.handlers[:] = handlers
        logger.propagate = propagate
        logger.setLevel(level)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def silent_server() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` of a loopback socket that takes connections and never answers: the
    kernel completes the handshake into the listen backlog, so a request waits for its read timeout."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"


class ShortTimeouts(httpx.AsyncBaseTransport):
    """Real loopback HTTP, but every request's timeout (whatever the client asked for) cut to ``seconds``:
    a client hard-wired to 30 s times out in a test's time, and its message must name the limit it met."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.inner = httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.extensions["timeout"] = httpx.Timeout(self.seconds).as_dict()
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.fixture
def short_timeouts() -> ShortTimeouts:
    """A transport that cuts every request's timeout to 0.5 s (``httpx.AsyncClient(transport=...)``)."""
    return ShortTimeouts(0.5)


def pytest_configure(config: pytest.Config) -> None:
    """Compile the editable sources once, before the workers start: where the environment turns
    bytecode caching off (``PYTHONDONTWRITEBYTECODE``, as on the CI machines), each of the suite's
    hundreds of ``lorenz`` subprocesses compiled them again (docs/performance.md, "Bytecode").
    Writing stays off for the rest: tests write and rewrite modules within one second, which a
    timestamped cache would serve stale."""
    if not hasattr(config, "workerinput"):
        for directory in COMPILED:
            compileall.compile_dir(directory, quiet=2, rx=TEMPLATES)


# Set here rather than in pyproject's addopts: an `-n` there is an unknown option under `-p no:xdist`,
# and that and `-n0` must still run the suite in one process for debugging.
@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The whole suite (``python -m pytest``, no paths) runs on xdist workers, ``--dist loadgroup``;
    named paths, ``-n``, ``--dist`` or ``--pdb`` run as asked (``-n auto`` spreads a subset)."""
    # Runs before xdist's own tryfirst hook (a conftest registers after it), which starts the workers.
    if hasattr(config, "workerinput") or not config.pluginmanager.hasplugin("xdist"):
        return
    if config.args_source is not pytest.Config.ArgsSource.TESTPATHS:
        return
    if config.option.numprocesses is not None or config.option.dist != "no" or config.option.usepdb:
        return
    config.option.numprocesses = "auto"
    config.option.dist = "loadgroup"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """Twice the cores: most tests wait on servers, subprocesses and timeouts rather than compute.
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` chooses otherwise."""
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS")
    return int(chosen) if chosen else 2 * len(os.sched_getaffinity(0))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker the tests marked ``slow``, then ``fuzz``, go first (each in their order):
    they start while the workers are fresh and the quick ones fill the gaps, rather than one long
    test ending the run alone. Under ``--dist loadgroup`` a grouped test's id gets its group."""
    if hasattr(config, "workerinput"):
        items.sort(key=lambda item: (item.get_closest_marker("slow") is None, item.get_closest_marker("fuzz") is None))
        # A worker is started with the command line, not with the dist chosen above: it is told.
        if config.getvalue("loadgroup") or config.workerinput.get("lorenz_loadgroup"):
            _name_groups(items)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: object) -> None:
    """Tell each xdist worker whether the run is ``--dist loadgroup`` (which it names groups for)."""
    config: pytest.Config = node.config  # type: ignore[attr-defined]
    node.workerinput["lorenz_loadgroup"] = config.getvalue("dist") == "loadgroup"  # type: ignore[attr-defined]


def _name_groups(items: list[pytest.Item]) -> None:
    """``@name`` after the node id of a test marked ``xdist_group(name)``: that is how xdist sends a
    group to one worker. xdist sets the old ``item._nodeid``, which pytest 9 no longer reads (the id
    is ``item._id``); without this every worker that picks up a test of a grouped module sets up the
    module's costly fixture again."""
    for item in items:
        marks = item.iter_markers("xdist_group")
        names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default")) for mark in marks})
        if not names or "@" in item.nodeid.rpartition("::")[2]:
            continue
        grouped = f"{item.nodeid}@{'_'.join(names)}"
        if hasattr(item, "_id"):
            from _pytest.nodeid import coerce_node_id

            item._id = coerce_node_id(grouped)
        else:  # pytest 8
            item._nodeid = grouped
