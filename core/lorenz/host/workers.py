"""``lorenz serve --workers N``: N processes serving one port.

The parent binds the port and supervises; each worker is a fresh (spawned) interpreter that builds
the app itself (:func:`lorenz.host.factory.app_from`). On Linux each worker listens on a socket of
its own with ``SO_REUSEPORT``. A worker that fails at start stops the server; one that dies later
is replaced after a growing back-off; SIGHUP replaces them one at a time, and so does a worker
asking for it (``--reload``: a mounted pack's code was edited); SIGINT/SIGTERM stop them (a second
signal forces them), and a worker whose parent is gone stops by itself.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import signal
import socket
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from multiprocessing.context import SpawnContext, SpawnProcess
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from lorenz.backoff import Backoff
from lorenz.host.app import _Server, uvicorn_config
from lorenz.host.factory import STARTUP_FAILURE, AppOptions, app_from, plugin_reference
from lorenz.host.http.listening import announcer, bind_socket, listen
from lorenz.host.ops.watchdog import exit_past_stuck_threads
from lorenz.host.reload.sitepaths import SitePaths
from lorenz.host.startup import StartError, configure_logging
from lorenz.plugins.containment import note_host_signal

if TYPE_CHECKING:
    from lorenz.host.reload.live import LiveWorkspace

__all__ = ["run_workers"]

#: How long a worker may take to start serving (it imports the plugins and opens the workflow).
START_SECONDS = 60.0
#: How long stopping workers get: uvicorn's graceful shutdown (5 s), then the grace for stuck tool
#: calls (2 s), with room to spare; a worker still running after it is killed.
STOP_SECONDS = 15.0
_POLL_SECONDS = 0.2
#: A replacement that fails waits this long before the next one, doubling each time up to the cap;
#: the first replacement of a worker that served starts at once.
BACKOFF_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 30.0
#: A worker serving this long ends its slot's run of failures: its successor starts at once.
HEALTHY_SECONDS = 30.0
#: Whether workers listen on sockets of their own (``SO_REUSEPORT``), balanced by the kernel.
REUSE_PORT = sys.platform == "linux" and hasattr(socket, "SO_REUSEPORT")

#: What a worker serves: the parent's listening socket, or the ``(host, port)`` to bind its own to.
Listener = socket.socket | tuple[str, int]


def run_workers(
    live: LiveWorkspace,
    plugins: Sequence[object],
    *,
    workflow: str | None,
    cwd: Path,
    env: Mapping[str, str],
    host: str,
    port: int,
    workers: int,
    reload_code: bool = False,
) -> int:
    """Serve ``live``'s workflow on ``host:port`` from ``workers`` processes until SIGINT/SIGTERM."""
    try:
        references = tuple(plugin_reference(plugin) for plugin in plugins)
    except ValueError as exc:
        print(f"lorenz: --workers: {exc}", file=sys.stderr)
        return 1
    options = AppOptions(
        workflow=workflow,
        cwd=str(cwd),
        env=dict(env),
        reload=live.reloads,
        plugins=references,
        bind_host=host,
        warn=False,
        reload_code=reload_code,
    )
    # The workers run isolated packs of their own: the ones this process started to open the
    # workflow would only sit idle.
    live.run_host(live.aclose())
    sock = listen(host, port)  # a port in use is refused here, whoever holds it
    if sock is None:
        return 1
    if REUSE_PORT:
        # The workers bind sockets of their own to the port: this one becomes a socket they may
        # share it with, which holds the port and never listens.
        port = sock.getsockname()[1]
        sock.close()
        sock = listen(host, port, reuse_port=True)
        if sock is None:
            return 1
    listener: Listener = (host, port) if REUSE_PORT else sock
    try:
        what = f"{workers} worker{'s' if workers > 1 else ''}{', reloading edited packs' if reload_code else ''}"
        code = Supervisor(options, listener, workers).run(announcer(live, host, sock, f" ({what})"))
    finally:
        sock.close()
    print("lorenz: stopped", file=sys.stderr)
    return code


class Worker:
    """One worker process, and the event it sets once it serves."""

    def __init__(self, context: SpawnContext, options: AppOptions, listener: Listener) -> None:
        self.ready = context.Event()
        #: Set by the worker when it cannot serve a pack's edited code itself (``--reload``).
        self.replace_me = context.Event()
        self.started = time.monotonic()
        self.process: SpawnProcess = context.Process(
            target=worker_main, args=(options, listener, self.ready, self.replace_me), name="lorenz-worker"
        )
        self.process.start()

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def signal(self, signum: int) -> None:
        if self.process.is_alive() and self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signum)

    def status(self) -> str:
        code = self.process.exitcode
        if code is None:
            return "not serving in time"
        if code < 0:
            return f"killed by {signal.Signals(-code).name}"
        return f"exit code {code}"


class Supervisor:
    """Runs ``count`` workers on ``listener`` until told to stop (see the module docstring)."""

    def __init__(self, options: AppOptions, listener: Listener, count: int) -> None:
        self.options = options
        self.listener = listener
        self.count = count
        self.context = multiprocessing.get_context("spawn")
        self.workers: list[Worker] = []
        #: The stop signals received (SIGINT/SIGTERM); SIGHUP sets ``restart``.
        self.stops: list[int] = []
        self.restart = False
        #: Per slot: the replacements that failed in a row, and when a slot waiting out its
        #: back-off starts its next worker (``time.monotonic()``).
        self.failures = [0] * count
        self.retry_at: dict[int, float] = {}

    def run(self, announce: Callable[[], None]) -> int:
        """Start the workers, keep them running, stop them; the exit code of ``lorenz serve``."""
        with self.handling_signals():
            try:
                return self.supervise(announce)
            finally:
                for worker in self.workers:
                    worker.signal(signal.SIGTERM)
                deadline = time.monotonic() + STOP_SECONDS
                for worker in self.workers:
                    self.reap(worker, deadline)

    def supervise(self, announce: Callable[[], None]) -> int:
        self.workers = [self.start() for _ in range(self.count)]
        for worker in self.workers:
            if not self.serving(worker):
                return self.failed(worker)
        if self.stops:
            return 0
        announce()
        while not self.stops:
            # A slot waiting out its back-off is not waited on: its dead worker's sentinel is ready.
            waiting = [
                worker.process.sentinel for index, worker in enumerate(self.workers) if index not in self.retry_at
            ]
            multiprocessing.connection.wait(waiting, _POLL_SECONDS)
            for index in range(self.count):
                if self.stops:
                    break
                self.tend(index)
            tend_resource_tracker()
            asking = [worker for worker in self.workers if worker.replace_me.is_set()]
            for worker in asking:
                worker.replace_me.clear()  # asked once per edit, whether its replacement starts or not
            if asking:
                _say("a mounted pack's code changed: replacing the workers")
                self.restart = True
            if self.restart and not self.stops:
                self.restart = False
                self.replace_all()
        return 0

    def tend(self, index: int) -> None:
        """Once the first workers served, a worker that dies (or never serves) is replaced, after a
        back-off that grows while its replacements keep failing: the server never stops for it."""
        worker = self.workers[index]
        now = time.monotonic()
        retry_at = self.retry_at.get(index)
        if retry_at is not None:
            if now >= retry_at:
                del self.retry_at[index]
                self.workers[index] = self.start()
            return
        if worker.process.is_alive():
            if not worker.ready.is_set() and now - worker.started > START_SECONDS:
                _say(f"worker {worker.pid} not serving after {START_SECONDS:g} s; killing it")
                worker.process.kill()  # replaced as a failed start once reaped
            return
        if worker.ready.is_set() and now - worker.started >= HEALTHY_SECONDS:
            self.failures[index] = 0
        delay = backoff(self.failures[index])
        self.failures[index] += 1
        self.retry_at[index] = now + delay
        what = "exited" if worker.ready.is_set() else "failed to start"
        after = f" in {delay:g} s" if delay else ""
        _say(f"worker {worker.pid} {what} ({worker.status()}); starting another{after}")

    def start(self) -> Worker:
        return Worker(self.context, self.options, self.listener)

    def serving(self, worker: Worker) -> bool:
        """Wait until ``worker`` serves: ``False`` if it died or took too long first; ``True`` too
        once a stop was asked for (the caller's loop then ends)."""
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and not self.stops:
            if worker.ready.wait(_POLL_SECONDS):
                return True
            if not worker.process.is_alive():
                return worker.ready.is_set()
        return bool(self.stops)

    def replace_all(self) -> None:
        """SIGHUP: each worker replaced by a new one once that one serves. When a new one fails
        to start, the running workers are kept."""
        _say(f"replacing the {self.count} workers")
        for index, old in enumerate(list(self.workers)):
            new = self.start()
            self.workers.append(new)  # stopped with the others if a stop comes meanwhile
            if not self.serving(new) or self.stops:
                if not self.stops:
                    _say(f"worker {new.pid} failed to start ({new.status()}); keeping the running workers")
                    self.workers.remove(new)
                    new.signal(signal.SIGTERM)
                    self.reap(new, time.monotonic() + STOP_SECONDS)
                return
            self.workers.remove(new)
            self.workers[index] = new
            self.retry_at.pop(index, None)
            old.signal(signal.SIGTERM)
            self.reap(old, time.monotonic() + STOP_SECONDS)

    @staticmethod
    def reap(worker: Worker, deadline: float) -> None:
        """Wait for a stopping worker until ``deadline``, then kill it."""
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join()

    def failed(self, worker: Worker) -> int:
        _say(f"worker {worker.pid} failed to start ({worker.status()}); stopping")
        return 1

    @contextlib.contextmanager
    def handling_signals(self) -> Iterator[None]:
        def stop(signum: int, frame: FrameType | None) -> None:
            note_host_signal(signum)
            if self.stops:  # a second one: the workers stop now, in-flight calls or not
                for worker in self.workers:
                    worker.signal(signal.SIGINT)
            self.stops.append(signum)

        def restart(signum: int, frame: FrameType | None) -> None:
            self.restart = True

        handlers: dict[int, Callable[[int, FrameType | None], None]] = {signal.SIGINT: stop, signal.SIGTERM: stop}
        if hasattr(signal, "SIGHUP"):
            handlers[signal.SIGHUP] = restart
        previous = {sig: signal.signal(sig, handler) for sig, handler in handlers.items()}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def tend_resource_tracker() -> None:
    """multiprocessing's resource tracker, a child of this process since the first worker started:
    one that was killed is reaped (no ``<defunct>`` process is left) and another started, which the
    next worker to start would need anyway."""
    from multiprocessing import resource_tracker

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        resource_tracker.ensure_running()  # probes it; reaps and relaunches a dead one
    if caught:
        _say("multiprocessing's resource tracker died; started another")


def backoff(failures: int) -> float:
    """How long a slot waits before its next worker, after ``failures`` failures in a row."""
    return Backoff(BACKOFF_SECONDS, BACKOFF_CAP_SECONDS).delay(failures)


def _say(message: str) -> None:
    print(f"lorenz: {message}", file=sys.stderr, flush=True)


def worker_main(options: AppOptions, listener: Listener, ready: Event, replace_me: Event | None = None) -> None:
    """A worker process: build the app, serve ``listener`` until SIGTERM (or the parent is gone)."""
    configure_logging(worker=True)
    # Spawned with the parent's sys.path, which predates a `pip install -e` made since it started.
    SitePaths().refresh()
    try:
        app = app_from(options)
        sock = bind_socket(*listener, reuse_port=True) if isinstance(listener, tuple) else listener
    except (StartError, OSError) as exc:
        print(f"lorenz: {exc}", file=sys.stderr, flush=True)
        sys.exit(STARTUP_FAILURE)
    if options.reload_code and replace_me is not None:
        live: LiveWorkspace = app.state.live
        if live.edits is not None:
            live.edits.reload_code = lambda packs: replace_me.set()
    server = _Server(uvicorn_config(app), on_started=ready.set)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_stop_when_gone, args=(parent, server), name="lorenz-parent", daemon=True).start()
    server.run(sockets=[sock])
    sys.exit(exit_past_stuck_threads(0 if server.started else 1))


def _stop_when_gone(parent: BaseProcess, server: _Server) -> None:
    parent.join()  # returns when the parent process has exited, however it ended
    server.handle_exit(signal.SIGTERM, None)
