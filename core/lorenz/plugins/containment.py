"""Containing plugin code: whatever a plugin raises becomes data naming the plugin.

:func:`call_plugin` runs one synchronous call into plugin code and turns every exception, any
``BaseException`` included (``SystemExit``, ``KeyboardInterrupt``, ``MemoryError``), into a
:class:`PluginError`, an ordinary ``Exception``. Only a real signal to the host is not contained:
the CLI and the server note one (:func:`note_host_signal`), and what follows it propagates.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from lorenz.results import error_message

__all__ = [
    "PluginError",
    "call_plugin",
    "contain",
    "describe_exception",
    "host_interrupted",
    "install_interrupt_flag",
    "is_host_signal",
    "note_host_signal",
    "plugin_code",
]

T = TypeVar("T")

_interrupted = threading.Event()


class PluginError(Exception):
    """Plugin code raised (anything, ``BaseException`` included) during ``action``.

    ``owner`` names the plugin (``pack acme``, ``plugin lorenz_acme (acme-pack 1.0)``);
    ``original`` is what it raised. The message reads
    ``pack acme: tool_specs raised SystemExit: 3``.
    """

    def __init__(self, owner: str, action: str, original: BaseException) -> None:
        self.owner = owner
        self.action = action
        self.original = original
        super().__init__(f"{owner}: {action} raised {describe_exception(original)}")


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` (just ``Type`` when the message is empty or only repeats the type)."""
    name = type(exc).__name__
    if isinstance(exc, PluginError):
        return str(exc)
    message = error_message(exc)
    return name if message in ("", name) else f"{name}: {message}"


def note_host_signal(signum: int | None = None) -> None:
    """Record that the host itself was told to stop (SIGINT/SIGTERM): from now on a
    ``KeyboardInterrupt``/``SystemExit`` is the host's, not a plugin's, and propagates."""
    _interrupted.set()


def host_interrupted() -> bool:
    """Whether a real stop signal reached this process (see :func:`note_host_signal`)."""
    return _interrupted.is_set()


def is_host_signal(exc: BaseException) -> bool:
    """Whether ``exc`` must propagate instead of being contained: a ``KeyboardInterrupt`` or
    ``SystemExit`` after a real stop signal, or ``GeneratorExit`` (Python's own protocol)."""
    if isinstance(exc, GeneratorExit):
        return True
    return isinstance(exc, KeyboardInterrupt | SystemExit) and host_interrupted()


def install_interrupt_flag() -> None:
    """Make SIGINT (main thread only) note the signal before Python raises ``KeyboardInterrupt``,
    so a real Ctrl-C still stops a CLI command while a plugin's own ``KeyboardInterrupt`` is contained."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGINT)
    if getattr(previous, "_lorenz_flag", False):
        return

    def handler(signum: int, frame: Any) -> None:
        note_host_signal(signum)
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    handler._lorenz_flag = True  # type: ignore[attr-defined]
    signal.signal(signal.SIGINT, handler)


def contain(exc: BaseException) -> bool:
    """Whether plugin code's ``exc`` is to be contained (everything but a real host signal)."""
    return not is_host_signal(exc)


def call_plugin(owner: str, action: str, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)``, where ``fn`` is plugin code; any exception it raises (``BaseException``
    included, but not a real host signal) is re-raised as :class:`PluginError` naming ``owner``."""
    try:
        return fn(*args, **kwargs)
    except BaseException as exc:
        if not contain(exc):
            raise
        raise PluginError(owner, action, exc) from exc


@contextmanager
def plugin_code(owner: str, action: str) -> Iterator[None]:
    """:func:`call_plugin` as a block: ``with plugin_code("pack acme", "tool_specs"): ...``."""
    try:
        yield
    except PluginError:
        raise
    except BaseException as exc:
        if not contain(exc):
            raise
        raise PluginError(owner, action, exc) from exc
