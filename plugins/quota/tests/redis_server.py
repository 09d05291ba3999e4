"""A real ``redis-server`` for the tests: its own process on a free loopback port, in a temporary
directory, persisting nothing; ready once it says so on its log."""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def redis_server(directory: Path, *, password: str | None = None) -> Iterator[str]:
    """Start one; yields its URL (without the password)."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server)")
    port = free_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory)]
    args += ["--save", "", "--appendonly", "no", "--loglevel", "notice"]
    if password is not None:
        args += ["--requirepass", password]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        seen = []
        for line in process.stdout:  # blocks until it logs; ends if it exits
            seen.append(line)
            if "Ready to accept connections" in line:
                break
        else:
            raise AssertionError(f"redis-server did not start:\n{''.join(seen)}")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
