"""``lorenz serve`` in a subprocess for an end-to-end test: :class:`ServedWorkflow` starts it on a
free port and returns once it printed its URL."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType

__all__ = ["ServedWorkflow"]

#: The line ``lorenz serve`` prints once it listens (``... at <url>``, then `` (N workers)`` with workers).
_SERVE_URL = re.compile(r" at (http://127\.0\.0\.1:\d+/mcp)")


class ServedWorkflow:
    """``python -m lorenz serve --port 0`` (or ``command``) run in ``directory``, started and awaited
    until it prints the URL it serves (:attr:`url`); a context manager that stops it on the way out.

    ``env`` is the child's whole environment (default: this process's without ``LORENZ_*``
    variables). Raises ``AssertionError`` with everything it wrote when it exits or ``timeout``
    seconds pass before it prints a URL. Its stderr is collected as it comes (:meth:`stderr`)."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        env: Mapping[str, str] | None = None,
        command: Sequence[str] | None = None,
        *,
        timeout: float = 60,
    ) -> None:
        if env is None:
            env = {key: value for key, value in os.environ.items() if not key.startswith("LORENZ_")}
        self.process = subprocess.Popen(
            list(command or [sys.executable, "-m", "lorenz", "serve", "--port", "0"]),
            cwd=Path(directory),
            env=dict(env),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        #: Every stderr line so far.
        self.lines: list[str] = []
        self._more = threading.Event()  # set at each line read
        #: ``http://127.0.0.1:<port>/mcp``
        self.url = ""
        ready = threading.Event()

        # A thread, not a select on the pipe: a line after the awaited one in the same read would
        # sit unseen in the file object's buffer.
        def read() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.lines.append(line)
                self._more.set()
                found = None if self.url else _SERVE_URL.search(line)
                if found is not None:
                    self.url = found.group(1)
                    ready.set()
            ready.set()  # ended without a URL: no need to wait out the timeout

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()
        if not ready.wait(timeout) or not self.url:
            self.stop()
            raise AssertionError("no URL printed:\n" + self.stderr())

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``"""
        return self.url.removesuffix("/mcp")

    def stderr(self) -> str:
        """What the process wrote to stderr so far."""
        return "".join(self.lines)

    def until_stderr(self, text: str, timeout: float = 30) -> str:
        """Everything written to stderr so far, once it holds ``text``: a line the host wrote
        before an answer a test just saw may still be on its way through the pipe. Raises
        ``AssertionError`` with what it wrote when ``timeout`` seconds pass first."""
        deadline = time.monotonic() + timeout
        while text not in (written := self.stderr()):
            if time.monotonic() > deadline or (self.process.poll() is not None and not self._reader.is_alive()):
                raise AssertionError(f"{text!r} never written:\n{self.stderr()}")
            self._more.wait(0.05)
            self._more.clear()
        return written

    def wait(self, timeout: float) -> int:
        """The exit code, once the process has ended and all of its stderr is read."""
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout)
        return code

    def stop(self, grace: float = 20) -> None:
        """SIGTERM (the host stops what it started on the way out), then SIGKILL after ``grace``
        seconds; nothing if it has ended."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.wait(grace)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.wait(10)

    def __enter__(self) -> ServedWorkflow:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()
