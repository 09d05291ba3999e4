"""The host in many processes, started as a user starts it (``lorenz serve --workers N``, ``uvicorn
--factory lorenz.host:create_app --workers N``) and called over plain HTTP, many calls at once on
keep-alive connections: every worker answers, each picks up a WORKFLOW.md edit, the supervisor
replaces dead workers, and the local board loses no comment with four workers writing to it."""

from __future__ import annotations

import contextlib
import os
import queue
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from lorenz_local.board import parse_document

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent
LEGACY_HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
_SERVE_URL = re.compile(r" at (http://127\.0\.0\.1:\d+)/mcp \(\d+ workers\)")
_UVICORN_URL = re.compile(r"Uvicorn running on (http://127\.0\.0\.1:\d+)")


def whoami_workspace(directory: Path) -> Path:
    """``directory`` with a WORKFLOW.md mounting the ``whoami`` pack and a copy of its plugin file."""
    write_whoami_workflow(directory, "one")
    shutil.copy(HERE / "worker_pack.py", directory / "worker_pack.py")
    return directory


def write_whoami_workflow(directory: Path, label: str, more_tools: str = "") -> None:
    """WORKFLOW.md: the ``whoami`` tracker, ``label`` in its tool options, then ``more_tools`` entries."""
    text = f"---\ntracker:\n  kind: whoami\ntools:\n  whoami:\n    label: {label}\n{more_tools}---\nprompt\n"
    # Replaced atomically: a worker reading it mid-write would otherwise see half a file.
    (directory / "WORKFLOW.md.tmp").write_text(text)
    os.replace(directory / "WORKFLOW.md.tmp", directory / "WORKFLOW.md")


def child_env(load_plugins: str = "", **extra: str) -> dict[str, str]:
    """This environment without any ``LORENZ_*`` of the developer's, loading only ``load_plugins``."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
    env["LORENZ_LOAD_PLUGINS"] = load_plugins
    env.update(extra)
    return env


class Server:
    """A server process of the test and its stderr, read line by line as it comes (by a thread:
    a ``select`` on the pipe misses lines already in the file object's buffer)."""

    def __init__(self, command: Sequence[str], cwd: Path, env: Mapping[str, str]) -> None:
        self.process = subprocess.Popen(
            list(command), cwd=cwd, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self.base_url = ""
        self._incoming: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        with contextlib.suppress(ValueError):  # closed by stop()
            for line in self.process.stderr:
                self._incoming.put(line)
        self._incoming.put(None)  # the end of stderr

    def _next_line(self, timeout: float) -> str | None:
        try:
            line = self._incoming.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        if line is None:
            self._incoming.put(None)  # the end stays the end for the next reader
        else:
            self.lines.append(line)
        return line

    def wait_for(self, pattern: re.Pattern[str], timeout: float = 60) -> re.Match[str]:
        """The first stderr line (already read or to come) matching ``pattern``."""
        for line in self.lines:
            if found := pattern.search(line):
                return found
        deadline = time.monotonic() + timeout
        while (line := self._next_line(deadline - time.monotonic())) is not None:
            if found := pattern.search(line):
                return found
        msg = f"no line matching {pattern.pattern!r}; stderr so far:\n{''.join(self.lines)}"
        raise AssertionError(msg)

    def rest(self, timeout: float = 20) -> str:
        """Everything on stderr once the process has exited (within ``timeout``)."""
        self.process.wait(timeout=timeout)
        self._reader.join(timeout=timeout)
        while self._next_line(0) is not None:
            pass
        return "".join(self.lines)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._reader.join(timeout=5)
        if self.process.stderr is not None:
            self.process.stderr.close()


@contextlib.contextmanager
def lorenz_serve(directory: Path, *args: str, env: Mapping[str, str] | None = None) -> Iterator[Server]:
    """``python -m lorenz [ARGS] serve --port 0 ...`` in ``directory``, once it printed its URL."""
    server = Server([sys.executable, "-m", "lorenz", *args], directory, child_env() if env is None else env)
    try:
        server.base_url = server.wait_for(_SERVE_URL).group(1)
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def uvicorn_factory(directory: Path, *args: str, env: Mapping[str, str]) -> Iterator[Server]:
    """``uvicorn --factory lorenz.host:create_app --port 0 ARGS`` in ``directory``, once every
    worker has started its app (uvicorn logs one line per worker)."""
    command = [sys.executable, "-m", "uvicorn", "--factory", "lorenz.host:create_app", "--port", "0", *args]
    server = Server(command, directory, env)
    try:
        server.base_url = server.wait_for(_UVICORN_URL).group(1)
        workers = int(args[args.index("--workers") + 1]) if "--workers" in args else 1
        for _ in range(workers):
            server.wait_for(re.compile(r"Application startup complete"))
            server.lines = [line for line in server.lines if "Application startup complete" not in line]
        yield server
    finally:
        server.stop()


async def call_tools(
    base_url: str, calls: Sequence[tuple[str, dict[str, Any]]], *, concurrency: int = 16, keep_alive: bool = True
) -> list[dict[str, Any]]:
    """Each ``(tool, arguments)`` as one ``tools/call`` POST (stateless, 2025-11-25), ``concurrency``
    at a time on as many keep-alive connections (or a new connection each); the JSON-RPC results,
    in order of ``calls``."""
    headers = dict(LEGACY_HEADERS)
    if not keep_alive:
        headers["Connection"] = "close"
    results: list[dict[str, Any]] = [{}] * len(calls)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(headers=headers, limits=limits, timeout=30) as http:
        pending = iter(enumerate(calls))

        async def caller() -> None:
            for index, (tool, arguments) in pending:
                body = {
                    "jsonrpc": "2.0",
                    "id": index,
                    "method": "tools/call",
                    "params": {"name": tool, "arguments": arguments},
                }
                response = await http.post(base_url + "/mcp", json=body)
                assert response.status_code == 200, response.text
                results[index] = response.json()["result"]

        async with anyio.create_task_group() as tg:
            for _ in range(concurrency):
                tg.start_soon(caller)
    return results


def health_pids(base_url: str, *, count: int = 64, keep_alive: bool = True) -> set[int]:
    """The ``pid`` of ``count`` GET /healthz answers, 16 at a time."""
    headers = {} if keep_alive else {"Connection": "close"}

    async def gather() -> set[int]:
        pids: set[int] = set()
        async with httpx.AsyncClient(limits=httpx.Limits(max_connections=16), headers=headers, timeout=30) as http:

            async def one() -> None:
                pids.add((await http.get(base_url + "/healthz")).json()["pid"])

            async with anyio.create_task_group() as tg:
                for _ in range(count):
                    tg.start_soon(one)
        return pids

    return anyio.run(gather)


def structured(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``structuredContent`` of each result, none of which may be an error."""
    for result in results:
        assert not result.get("isError"), result
    return [result["structuredContent"] for result in results]


def whoami(base_url: str, count: int, *, concurrency: int = 16, keep_alive: bool = True) -> list[dict[str, Any]]:
    """``count`` calls of ``whoami_pid``: each answer's ``{pid, label}``."""
    calls = [("whoami_pid", {})] * count
    return structured(anyio.run(lambda: call_tools(base_url, calls, concurrency=concurrency, keep_alive=keep_alive)))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def assert_every_worker_reloads(server: Server, directory: Path, pids: set[int], *, keep_alive: bool = True) -> None:
    """After a WORKFLOW.md edit, every worker in ``pids`` answers with the new config, and none
    with the old one any more."""
    write_whoami_workflow(directory, "two")
    updated: set[int] = set()
    deadline = time.monotonic() + 15
    while not pids <= updated and time.monotonic() < deadline:
        answers = whoami(server.base_url, 32, keep_alive=keep_alive)
        updated |= {answer["pid"] for answer in answers if answer["label"] == "two"}
    assert pids <= updated, f"workers still on the old WORKFLOW.md: {pids - updated}"
    assert {answer["label"] for answer in whoami(server.base_url, 64, keep_alive=keep_alive)} == {"two"}


def test_lorenz_serve_workers_share_the_calls_and_each_reloads(tmp_path: Path) -> None:
    """`lorenz serve --workers 2`: 200 calls are answered by both workers (not the parent), a `-p`
    plugin reaches both, and a WORKFLOW.md edit takes effect in each."""
    directory = whoami_workspace(tmp_path)
    with lorenz_serve(directory, "-p", "worker_pack.py", "serve", "--port", "0", "--workers", "2") as server:
        answers = whoami(server.base_url, 200)
        pids = {answer["pid"] for answer in answers}
        assert len(pids) == 2
        assert server.process.pid not in pids
        assert health_pids(server.base_url) == pids  # /healthz names the worker that answered
        assert {answer["label"] for answer in answers} == {"one"}
        assert_every_worker_reloads(server, directory, pids)
        port = server.base_url.rsplit(":", 1)[1]
        second = subprocess.run(
            [sys.executable, "-m", "lorenz", "-p", "worker_pack.py", "serve", "--port", port, "--workers", "2"],
            cwd=directory,
            env=child_env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 1  # not a second server sharing the port
        assert f"lorenz: cannot listen on 127.0.0.1:{port}: Address already in use" in second.stderr


def test_every_worker_takes_loopback_names_on_the_port_bound_only(tmp_path: Path) -> None:
    """``lorenz serve --port 0 --workers 2``: each worker knows the port the kernel picked, so a
    loopback ``Host`` naming it is served by both, and one naming another port gets 421 from both."""
    directory = whoami_workspace(tmp_path)
    with lorenz_serve(directory, "-p", "worker_pack.py", "serve", "--port", "0", "--workers", "2") as server:
        port = int(server.base_url.rsplit(":", 1)[1])
        other = port + 1 if port < 65535 else port - 1
        with httpx.Client(timeout=30) as http:
            answered: set[int] = set()
            refused: list[int] = []
            for _ in range(200):
                if len(answered) == 2 and len(refused) >= 40:
                    break
                close = {"Connection": "close"}  # a new connection each time: both workers take some
                reply = http.get(server.base_url + "/healthz", headers={**close, "Host": f"localhost:{port}"})
                assert reply.status_code == 200
                answered.add(reply.json()["pid"])
                refused.append(
                    http.get(server.base_url + "/healthz", headers={**close, "Host": f"localhost:{other}"}).status_code
                )
    assert len(answered) == 2
    assert set(refused) == {421}


def test_uvicorn_factory_workers_share_the_calls_and_each_reloads(tmp_path: Path) -> None:
    """`uvicorn --factory lorenz.host:create_app --workers 2` in the workflow's directory, with the
    plugin named by LORENZ_PLUGIN_MODULES: both workers answer, and each reloads.

    A connection per call: uvicorn's workers share one socket, and the first to wake accepts every
    connection waiting, so 16 keep-alive connections opened at once may all land on one worker."""
    directory = whoami_workspace(tmp_path)
    env = child_env(LORENZ_PLUGIN_MODULES=str(directory / "worker_pack.py"))
    with uvicorn_factory(directory, "--workers", "2", env=env) as server:
        answers = whoami(server.base_url, 200, keep_alive=False)
        pids = {answer["pid"] for answer in answers}
        assert len(pids) == 2
        assert health_pids(server.base_url, count=200, keep_alive=False) <= pids
        assert {answer["label"] for answer in answers} == {"one"}
        assert_every_worker_reloads(server, directory, pids, keep_alive=False)


def pids_answering(base_url: str, count: int = 64) -> set[int]:
    return {answer["pid"] for answer in whoami(base_url, count)}


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"not within {timeout} s: {what}"
        time.sleep(0.1)


def test_supervisor_replaces_a_dead_worker_restarts_on_sighup_and_stops_on_sigterm(tmp_path: Path) -> None:
    """A worker killed is replaced; SIGHUP replaces every worker, each new one serving before its old
    one stops; SIGTERM stops them all and `lorenz serve` exits 0."""
    directory = whoami_workspace(tmp_path)
    with lorenz_serve(directory, "-p", "worker_pack.py", "serve", "--port", "0", "--workers", "2") as server:
        first = pids_answering(server.base_url)
        assert len(first) == 2
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        server.wait_for(re.compile(rf"worker {victim} exited \(killed by SIGKILL\); starting another"))
        survivors = first - {victim}
        wait_until(lambda: len(pids_answering(server.base_url) - survivors) == 1, 60, "a replacement worker serves")
        current = pids_answering(server.base_url)
        assert victim not in current and len(current) == 2

        server.process.send_signal(signal.SIGHUP)
        server.wait_for(re.compile(r"replacing the 2 workers"))
        wait_until(lambda: not any(alive(pid) for pid in current), 60, "the old workers stop")
        replaced = pids_answering(server.base_url)
        assert len(replaced) == 2 and not replaced & current

        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=30) == 0
        assert "lorenz: stopped" in server.rest()
        assert not any(alive(pid) for pid in replaced)


def children(pid: int) -> set[int]:
    """The processes ``pid`` started (its workers, and multiprocessing's resource tracker)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found |= {int(child) for child in (task / "children").read_text().split()}
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds the workers in /proc")
def test_a_replacement_killed_while_it_starts_is_replaced_again(tmp_path: Path) -> None:
    """A worker killed, then its replacement killed while it starts: the supervisor logs each and
    starts another after a back-off, and the server keeps answering (it does not stop for it)."""
    directory = whoami_workspace(tmp_path)
    with lorenz_serve(directory, "-p", "worker_pack.py", "serve", "--port", "0", "--workers", "2") as server:
        first = pids_answering(server.base_url)
        assert len(first) == 2
        before = children(server.process.pid)
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        server.wait_for(re.compile(rf"worker {victim} exited \(killed by SIGKILL\); starting another"))
        wait_until(lambda: bool(children(server.process.pid) - before), 30, "a replacement is started")
        [replacement] = children(server.process.pid) - before
        time.sleep(0.1)  # a fresh interpreter importing the host: far from serving yet
        os.kill(replacement, signal.SIGKILL)
        server.wait_for(
            re.compile(rf"worker {replacement} failed to start \(killed by SIGKILL\); starting another in [\d.]+ s")
        )
        survivors = first - {victim}
        wait_until(lambda: len(pids_answering(server.base_url) - survivors) == 1, 60, "a second replacement serves")
        assert server.process.poll() is None
        assert "stopping" not in "".join(server.lines)
        current = pids_answering(server.base_url)
        assert len(current) == 2 and not current & {victim, replacement}


def defunct(pid: int) -> set[int]:
    """The children of ``pid`` that ended and were never reaped (``<defunct>``, state Z)."""
    found = set()
    for child in children(pid):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                found.add(child)
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="finds the workers in /proc")
def test_a_killed_resource_tracker_is_reaped_not_left_defunct(tmp_path: Path) -> None:
    """multiprocessing's resource tracker, a child of the supervisor, killed: the supervisor reaps
    it and starts another, and a worker killed afterwards is still replaced."""
    directory = whoami_workspace(tmp_path)
    with lorenz_serve(directory, "-p", "worker_pack.py", "serve", "--port", "0", "--workers", "2") as server:
        workers = pids_answering(server.base_url)
        assert len(workers) == 2
        [tracker] = children(server.process.pid) - workers
        assert b"resource_tracker" in Path(f"/proc/{tracker}/cmdline").read_bytes()
        os.kill(tracker, signal.SIGKILL)
        server.wait_for(re.compile(r"resource tracker died; started another"))
        assert tracker not in children(server.process.pid)
        assert not defunct(server.process.pid)
        victim = min(workers)
        os.kill(victim, signal.SIGKILL)
        server.wait_for(re.compile(rf"worker {victim} exited \(killed by SIGKILL\); starting another"))
        wait_until(lambda: len(pids_answering(server.base_url) - workers) == 1, 60, "a replacement worker serves")
        assert not defunct(server.process.pid)
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(timeout=30) == 0


def test_workers_stop_when_their_parent_is_killed(tmp_path: Path) -> None:
    """SIGKILL to `lorenz serve` (nothing forwarded): its workers notice and stop by themselves."""
    directory = whoami_workspace(tmp_path)
    with lorenz_serve(directory, "-p", "worker_pack.py", "serve", "--port", "0", "--workers", "2") as server:
        pids = pids_answering(server.base_url)
        server.process.kill()
        server.process.wait()
        wait_until(lambda: not any(alive(pid) for pid in pids), 30, "the orphaned workers stop")


def test_a_worker_that_cannot_start_stops_the_server(tmp_path: Path) -> None:
    """A plugin that loads in `lorenz serve` but not in its workers: exit 1, naming the failure."""
    directory = whoami_workspace(tmp_path)
    env = child_env(WORKER_PACK_FAIL_IN_WORKERS="1")
    server = Server(
        [sys.executable, "-m", "lorenz", "-p", "worker_pack.py", "serve", "--port", "0", "--workers", "2"],
        directory,
        env,
    )
    try:
        assert server.process.wait(timeout=60) == 1
        err = server.rest()
    finally:
        server.stop()
    assert "this plugin does not load in worker processes" in err
    assert re.search(r"lorenz: worker \d+ failed to start \(exit code 3\); stopping", err)
    assert " at http://" not in err  # never announced as serving


#: ``local_comment`` and ``local_create_issue`` calls of the four-worker test: ``nox -s soak``
#: (``LORENZ_SOAK=1``) makes it 1,000 and 200 (each comment rewrites the one issue's file).
COMMENTS, CREATES = (1000, 200) if os.environ.get("LORENZ_SOAK") else (250, 50)


def test_four_workers_writing_one_local_board_lose_nothing(tmp_path: Path) -> None:
    """`lorenz serve --workers 4` on a local board: 250 `local_comment` calls on one issue, 32 at a
    time over HTTP (the kernel spreads the connections over the 4 workers), mixed with 50
    `local_create_issue` calls: every comment is on the issue exactly once, every new issue has an
    id of its own, and each issue file parses."""
    (tmp_path / "WORKFLOW.md").write_text("---\ntracker:\n  kind: local\n---\n")
    env = child_env("lorenz-local")
    with lorenz_serve(tmp_path, "serve", "--port", "0", "--workers", "4", env=env) as server:
        [first] = structured(anyio.run(call_tools, server.base_url, [("local_create_issue", {"title": "Shared"})]))
        issue = first["issue"]["id"]
        calls = [("local_comment", {"issueId": issue, "body": f"comment {index}"}) for index in range(COMMENTS)]
        calls += [("local_create_issue", {"title": f"parallel {index}"}) for index in range(CREATES)]
        random.Random(16).shuffle(calls)
        answers = structured(anyio.run(lambda: call_tools(server.base_url, calls, concurrency=32)))
        [read] = structured(anyio.run(call_tools, server.base_url, [("local_read_issue", {"issueId": issue})]))

    created = [answer["issue"]["id"] for answer in answers if "issue" in answer]
    assert len(created) == CREATES and len(set(created)) == CREATES and issue not in created
    bodies = [line.split(" agent: ", 1)[1] for line in read["comments"]]
    assert sorted(bodies) == sorted(f"comment {index}" for index in range(COMMENTS))
    for path in (tmp_path / ".lorenz" / "local").glob("*.md"):
        parse_document(path.read_text(), path.stem)


LATECOMER = """
import os

from lorenz import ToolSpec, hookimpl, tool_success


class Latecomer:
    name = "latecomer"

    def tool_specs(self, settings):
        return [ToolSpec(name="latecomer_pid", description="The pid of the process that runs this call.")]

    async def execute_tool(self, name, input, context):
        return tool_success({"pid": os.getpid()})


@hookimpl
def lorenz_register_tool_packs(register):
    register(Latecomer())
"""


def test_each_worker_discovers_a_distribution_installed_while_serving(tmp_path: Path) -> None:
    """A pack distribution installed (into a directory on the workers' path) while `lorenz serve
    --workers 2` runs, then mounted by a WORKFLOW.md edit: every worker serves it, no restart."""
    (tmp_path / "work").mkdir()
    directory = whoami_workspace(tmp_path / "work")
    site = tmp_path / "site"
    site.mkdir()
    env = child_env("lorenz-latecomer", PYTHONPATH=str(site))
    with lorenz_serve(directory, "-p", "worker_pack.py", "serve", "--port", "0", "--workers", "2", env=env) as server:
        pids = pids_answering(server.base_url)
        assert len(pids) == 2
        (site / "lorenz_latecomer.py").write_text(LATECOMER)
        info = site / "lorenz_latecomer-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lorenz-latecomer\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text("[lorenz.tool_packs]\nlatecomer = lorenz_latecomer\n")
        write_whoami_workflow(directory, "one", more_tools="  latecomer: {}\n")
        serving: set[int] = set()
        deadline = time.monotonic() + 20
        while not pids <= serving and time.monotonic() < deadline:
            results = anyio.run(lambda: call_tools(server.base_url, [("latecomer_pid", {})] * 32))
            serving |= {result["structuredContent"]["pid"] for result in results if not result.get("isError")}
            time.sleep(0.2)
        assert pids <= serving, f"workers without the new pack: {pids - serving}"


def test_the_back_off_grows_to_its_cap() -> None:
    from lorenz.host.workers import BACKOFF_CAP_SECONDS, backoff

    delays = [backoff(failures) for failures in range(12)]
    assert delays[:4] == [0.0, 0.5, 1.0, 2.0]
    assert delays == sorted(delays) and max(delays) == BACKOFF_CAP_SECONDS == backoff(10**6)


def test_every_worker_shows_the_same_recent_calls(tmp_path: Path) -> None:
    """`--workers 2` with a call log: the landing page's tables come from the shared log, so whichever
    worker answers shows every call, not only its own."""
    directory = whoami_workspace(tmp_path)
    text = (directory / "WORKFLOW.md").read_text().replace("tools:\n", "server:\n  call_log: calls.jsonl\ntools:\n")
    (directory / "WORKFLOW.md").write_text(text)
    with lorenz_serve(directory, "-p", "worker_pack.py", "serve", "--port", "0", "--workers", "2") as server:
        answers = whoami(server.base_url, 40, keep_alive=False)
        assert len({answer["pid"] for answer in answers}) == 2
        log = directory / "calls.jsonl"
        deadline = time.monotonic() + 20
        while not (log.exists() and len(log.read_text().splitlines()) == 40):
            assert time.monotonic() < deadline, "the call log did not get the 40 calls"
            time.sleep(0.05)
        pages = [httpx.get(server.base_url + "/", headers={"Connection": "close"}, timeout=30).text for _ in range(12)]
        for page in pages:
            assert "<tr><td><code>whoami_pid</code></td><td>40</td><td>0</td>" in page
