"""What the sandbox's seccomp filter (:mod:`lorenz.sandbox.seccomp`) costs each system call of a
sandboxed pack: ns per call of a syscall the filter passes at once (``getppid``), one whose
arguments it inspects (``socket`` + ``close`` of a TCP socket) and a pipe round trip (``write`` +
``read``, what a call's frames cost), without and with the filter.

    .venv/bin/python bench/sandbox_syscalls.py [-n 20000] [--rounds 40]

Each round measures CPU time (not time spent waiting for a core) in two fresh processes, one
unfiltered and one filtered (the filter is for good); each figure is the best over the rounds, the
least disturbed by other load on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable

from lorenz.sandbox import seccomp


def _per_call(body: Callable[[], None], n: int) -> float:
    started = time.process_time_ns()
    for _ in range(n):
        body()
    return (time.process_time_ns() - started) / n


def _figures(n: int) -> dict[str, float]:
    reading, writing = os.pipe()

    def pipe() -> None:
        os.write(writing, b"x")
        os.read(reading, 1)

    def tcp() -> None:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()

    return {
        "getppid": _per_call(os.getppid, n),
        "socket+close": _per_call(tcp, n // 10),
        "pipe write+read": _per_call(pipe, n),
    }


def _measure(n: int, filtered: bool) -> dict[str, float]:
    command = [sys.executable, __file__, "-n", str(n), *(["--filtered"] if filtered else []), "--child"]
    figures: dict[str, float] = json.loads(subprocess.run(command, capture_output=True, check=True).stdout)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--filtered", action="store_true")
    parser.add_argument("--child", action="store_true")
    args = parser.parse_args()
    if args.child:
        if args.filtered:
            seccomp.restrict()
        print(json.dumps(_figures(args.n)))
        return
    best: dict[bool, dict[str, float]] = {False: {}, True: {}}
    for _ in range(args.rounds):
        for filtered in (False, True):
            for name, ns in _measure(args.n, filtered).items():
                best[filtered][name] = min(ns, best[filtered].get(name, ns))
    for name, ns in best[False].items():
        after = best[True][name]
        print(f"{name:16} {ns:8.1f} ns   filtered {after:8.1f} ns   ({after - ns:+.1f} ns)")


if __name__ == "__main__":
    main()
