"""How the ``lorenz`` command talks: JSON objects, one-line errors, a pipe closed early, suggestions
for a misspelled name, and a progress line for slow work."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any, TextIO

from lorenz.toolcall.wire import scrub_surrogates
from lorenz.words import counted

__all__ = [
    "JSON_VERSION",
    "Progress",
    "UsageError",
    "counted",
    "json_object",
    "paint",
    "print_json",
    "progress",
    "use_colour",
    "silence_stdout",
]

JSON_VERSION = 1
"""The ``"version"`` of every ``--json`` object (docs/cli-json.md): bumped only when a field changes
meaning or goes away, never for a new field."""

SIGPIPE_EXIT = 141
"""What a shell reports for a command killed by SIGPIPE (128 + 13), as ``git log | head -1`` gives."""

PROGRESS_AFTER = 1.0
"""Seconds of silence before the progress line shows up: quick work never draws one."""

_FRAMES = "|/-\\"

_COLOURS = {"red": "31", "green": "32", "yellow": "33", "cyan": "36", "bold": "1"}


class UsageError(Exception):
    """A mistake on the command line or in the workflow: one line on stderr, exit 1."""


def json_object(**fields: Any) -> dict[str, Any]:
    """A ``--json`` output object: ``{"version": JSON_VERSION, **fields}``."""
    return {"version": JSON_VERSION, **fields}


def print_json(value: Any) -> None:
    # A lone surrogate (from a hand-edited file, a pack) cannot be written to a UTF-8 stream.
    print(scrub_surrogates(json.dumps(value, indent=2, ensure_ascii=False, default=str)))


def silence_stdout() -> int:
    """After the reader of stdout went away (``lorenz tools | head -1``): point stdout at /dev/null so
    the interpreter's final flush cannot fail again, and give the shell's SIGPIPE exit status."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    with contextlib.suppress(OSError, ValueError):
        os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return SIGPIPE_EXIT


class Progress:
    """The progress line of one block of work (what :func:`progress` yields): :meth:`report` adds the
    work's own progress to it, :meth:`hold` takes it off the terminal while the user is asked something."""

    def __init__(self, label: str, out: TextIO | None) -> None:
        self._label = label
        self._out = out  # None: not a terminal, nothing is drawn
        self._detail = ""
        self._lock = threading.Lock()
        self._held = False
        self._drawn = False

    def report(self, done: float, total: float | None = None, message: str | None = None) -> None:
        """The work's own progress (``3/10 writing notes``), shown after the label from the next frame."""
        count = f"{done:g}/{total:g}" if total is not None else f"{done:g}"
        self.say(f"{count} {message or ''}")

    def say(self, text: str) -> None:
        """What the work is doing now (``Collecting lorenz-acme``), shown after the label."""
        # A pack's or a program's text: no escape sequence of its own reaches the terminal.
        self._detail = ": " + "".join(char if char.isprintable() else " " for char in text).strip()

    @contextlib.contextmanager
    def hold(self) -> Iterator[None]:
        """Erase the line and draw nothing while the block runs (a question on the same terminal)."""
        with self._lock:
            self._held = True
            self._erase()
        try:
            yield
        finally:
            with self._lock:
                self._held = False

    def draw(self, frame: int, elapsed: int) -> None:
        with self._lock:
            if self._out is None or self._held:
                return
            line = " ".join(f"{_FRAMES[frame % len(_FRAMES)]} {self._label}{self._detail} ({elapsed} s)".split())
            import shutil  # only once a line is drawn

            width = shutil.get_terminal_size().columns - 1  # a wrapped line could not be erased with \r
            if len(line) > width:
                line = line[: max(width - 1, 0)] + "…"
            with contextlib.suppress(OSError, ValueError):
                self._out.write(f"\r\033[K{line}")
                self._out.flush()
                self._drawn = True

    def erase(self) -> None:
        with self._lock:
            self._erase()

    def _erase(self) -> None:
        if self._out is not None and self._drawn:
            with contextlib.suppress(OSError, ValueError):
                self._out.write("\r\033[K")  # erase the line, so what follows starts clean
                self._out.flush()
            self._drawn = False


@contextlib.contextmanager
def progress(label: str, stream: TextIO | None = None) -> Iterator[Progress]:
    """A spinner line ``| fetching issues (3 s)`` on ``stream`` (stderr) while the block runs, drawn only
    when the stream is a terminal and the work has taken longer than :data:`PROGRESS_AFTER`; erased after.
    What the block reports (:meth:`Progress.report`) follows the label: ``| running sync: 3/10 pages (4 s)``."""
    out = sys.stderr if stream is None else stream
    if not _is_terminal(out):
        yield Progress(label, None)
        return
    line = Progress(label, out)
    done = threading.Event()

    def spin() -> None:
        started = time.monotonic()
        if done.wait(PROGRESS_AFTER):
            return
        frame = 0
        while not done.is_set():
            line.draw(frame, int(time.monotonic() - started))
            frame += 1
            done.wait(0.1)

    spinner = threading.Thread(target=spin, name="lorenz-progress", daemon=True)
    spinner.start()
    try:
        yield line
    finally:
        done.set()
        spinner.join()
        line.erase()


def use_colour(stream: TextIO) -> bool:
    """Colour on a terminal only, and not when ``NO_COLOR`` is set to anything (no-color.org) or
    ``TERM`` is ``dumb``."""
    return not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb" and _is_terminal(stream)


def paint(text: str, colour: str | None, stream: TextIO | None = None) -> str:
    """``text`` in ``colour`` (red, green, yellow, cyan, bold) when :func:`use_colour` says so for
    ``stream`` (stdout), else as it is."""
    if colour is None or not use_colour(sys.stdout if stream is None else stream):
        return text
    return f"\033[{_COLOURS[colour]}m{text}\033[0m"


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
