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

from lorenz.words import counted

__all__ = [
    "JSON_VERSION",
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
    from lorenz.toolcall.wire import scrub_surrogates

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


@contextlib.contextmanager
def progress(label: str, stream: TextIO | None = None) -> Iterator[None]:
    """A spinner line ``| fetching issues (3 s)`` on ``stream`` (stderr) while the block runs, drawn only
    when the stream is a terminal and the work has taken longer than :data:`PROGRESS_AFTER`; erased after."""
    out = sys.stderr if stream is None else stream
    if not _is_terminal(out):
        yield
        return
    done = threading.Event()
    drawn = threading.Event()

    def spin() -> None:
        started = time.monotonic()
        if done.wait(PROGRESS_AFTER):
            return
        frame = 0
        while not done.is_set():
            elapsed = int(time.monotonic() - started)
            with contextlib.suppress(OSError, ValueError):
                out.write(f"\r{_FRAMES[frame % len(_FRAMES)]} {label} ({elapsed} s)")
                out.flush()
                drawn.set()
            frame += 1
            done.wait(0.1)

    spinner = threading.Thread(target=spin, name="lorenz-progress", daemon=True)
    spinner.start()
    try:
        yield
    finally:
        done.set()
        spinner.join()
        if drawn.is_set():
            with contextlib.suppress(OSError, ValueError):
                out.write("\r\033[K")  # erase the line, so what follows starts clean
                out.flush()


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
