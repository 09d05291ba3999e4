"""An isolated pack's process: ``python -m lorenz.isolation.child``, started by the host.

It reads one :class:`~lorenz.isolation.protocol.Launch` frame from stdin, then either surveys an
entry point (for discovery) or imports one pack and serves its calls until told to stop. stdin and
stdout carry only frames; whatever the pack prints goes to stderr, which the host logs. It ends
itself when the host goes away or the pack runs out of memory (:data:`EXIT_OUT_OF_MEMORY`), and
ignores SIGINT and SIGTERM: the host stops it. On Linux it forks a keeper first
(:mod:`lorenz.isolation.reaper`).
"""

from __future__ import annotations

import faulthandler
import os
import resource
import signal
import sys
import threading
import time

from lorenz.sandbox.confine import confine

from .frames import read_frame, write_all
from .loading import computed_permissions, linted, listed, survey
from .protocol import CONVERTER, Failed, Launch, encode, exit_out_of_memory
from .reaper import SUBREAPING, keep

__all__ = ["main"]

#: How often the child looks whether its parent is still the host (without prctl).
_PARENT_POLL_SECONDS = 0.5


def _protocol_fds() -> tuple[int, int]:
    """The frame pipes, moved off fd 0/1: stdin reads nothing and stdout writes to stderr."""
    fd_in, fd_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return fd_in, fd_out


def _watch_parent() -> None:
    """End this process when the host is gone, even while the pack holds the event loop or the
    GIL: an orphan must not spin on alone. Without a keeper (:mod:`lorenz.isolation.reaper`, which
    has the kernel's parent-death signal) a thread looks at the parent pid (which costs every
    call some GIL traffic, hence not where there is a keeper)."""
    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(_PARENT_POLL_SECONDS)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="lorenz-parent-watch", daemon=True).start()


def _limit_memory(megabytes: int) -> None:
    limit = megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def main() -> int:
    fd_in, fd_out = _protocol_fds()
    # Ctrl-C in a terminal, or a SIGTERM to the whole process group (systemd, `kill -- -PGID`), is
    # the host's to handle: it stops its children in order.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    faulthandler.enable()  # a segfault's Python traceback reaches the host's log
    frame = read_frame(fd_in)
    if frame is None:
        return 0
    launch: Launch = CONVERTER.structure(frame, Launch)
    if launch.sys_path:
        sys.path[:] = launch.sys_path
    if SUBREAPING:
        keep((fd_in, fd_out))
    else:
        _watch_parent()
    try:
        if launch.memory_mb is not None:
            _limit_memory(launch.memory_mb)
        confinement = None
        if launch.sandbox is not None:
            try:  # before the pack's code runs, while this process has one thread
                confinement = confine(launch.sandbox)
            except OSError as exc:
                write_all(fd_out, encode(Failed(op="failed", error=f"it could not be sandboxed: {exc}")))
                os._exit(0)
        if launch.mode == "survey":
            report, discovery = survey(launch.source)
            write_all(fd_out, encode(report))
            write_all(fd_out, encode(listed(discovery)))
        elif launch.mode == "permissions":
            write_all(fd_out, encode(computed_permissions(launch)))
        elif launch.mode == "lint":
            write_all(fd_out, encode(linted(launch.source)))
        else:
            import asyncio

            from .serving import serve  # what only serving needs: surveys start faster without it

            # Not asyncio.run: it would wait at exit for the pack's threads, which may never end.
            asyncio.new_event_loop().run_until_complete(serve(launch, fd_in, fd_out, confinement))
    except MemoryError:
        exit_out_of_memory()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
