"""Everything an isolated pack starts dies with it.

On Linux the child process forks before it imports anything of the pack: the parent stays behind
as the pack's *keeper*, a child subreaper that runs no pack code, and kills every descendant left
(a double-forked daemon included) when the pack's process ends or the host goes away. The host
asks a keeper to kill (:func:`kill`) and kills its process group only if it does not comply.
Elsewhere the child leads a process group of its own, which the host kills.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import resource
import signal
import subprocess
import sys

__all__ = ["KEEPER_GRACE_SECONDS", "SUBREAPING", "keep", "kill", "kill_group"]

#: Whether pack processes get a keeper (``PR_SET_CHILD_SUBREAPER``, Linux 3.4+).
SUBREAPING = sys.platform == "linux"
#: What the host (or its death) sends a keeper: kill the pack and all it started, then exit.
_KILL_SIGNAL = signal.SIGUSR1
#: How long a keeper has to do so before the host kills its process group (the last resort).
KEEPER_GRACE_SECONDS = 5.0
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def kill(process: subprocess.Popen[bytes]) -> None:
    """Host side: end a child and everything it started."""
    if SUBREAPING:
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, _KILL_SIGNAL)
    else:
        kill_group(process)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """Host side, the last resort: SIGKILL the child's process group, and the child."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()


def _prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option})")


def keep(protocol_fds: tuple[int, int]) -> None:
    """Child side, before any pack code runs: fork. Returns in the pack's process; the keeper
    never returns (it exits as the pack's process did)."""
    host = os.getppid()
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)
    # The host's death (its event-loop thread's end) reaches the keeper as a request to clean up.
    _prctl(_PR_SET_PDEATHSIG, _KILL_SIGNAL)
    pack = os.fork()
    if pack == 0:
        _prctl(_PR_SET_CHILD_SUBREAPER, 0)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() == host:  # the keeper died before the request took effect
            os._exit(0)
        return
    faulthandler.disable()  # the keeper's own traceback would only confuse
    for fd in protocol_fds:
        os.close(fd)
    signal.signal(_KILL_SIGNAL, lambda *_: _signal(pack, signal.SIGKILL))
    if os.getppid() != host:  # the host died before the request took effect
        _signal(pack, signal.SIGKILL)
    status = _wait_for(pack)
    _kill_descendants()
    _exit_like(status)


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _wait_for(pack: int) -> int:
    """The pack's wait status; the other processes that end meanwhile (orphans it left to the
    keeper) are reaped as they go."""
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == pack:
            return status


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: list[int] = []
    todo = [root]
    while todo:
        kids = children.get(todo.pop(), [])
        found += kids
        todo += kids
    return found


def _kill_descendants() -> None:
    """SIGKILL every descendant until none is left, reaping them: a process killed before it
    was seen to fork leaves its new child to the keeper, which the next round finds."""
    me = os.getpid()
    while True:
        found = _descendants(me)
        for pid in found:
            _signal(pid, signal.SIGKILL)
        try:
            os.waitpid(-1, 0 if found else os.WNOHANG)
        except ChildProcessError:
            return


def _exit_like(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)  # a signal whose default is not to end the process
    os._exit(os.waitstatus_to_exitcode(status))
