"""Containing plugin code: every exception becomes a PluginError naming the plugin, but a real
host signal still propagates."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from lorenz.plugins import containment
from lorenz.plugins.containment import PluginError, call_plugin, plugin_code


@pytest.fixture(autouse=True)
def _fresh_flag() -> Iterator[None]:
    containment._interrupted.clear()
    yield
    containment._interrupted.clear()


def _raise(exc: BaseException) -> None:
    raise exc


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        (SystemExit(3), "SystemExit: 3"),
        (KeyboardInterrupt(), "KeyboardInterrupt"),
        (asyncio.CancelledError(), "CancelledError"),
        (MemoryError(), "MemoryError"),
        (ValueError("bad"), "ValueError: bad"),
    ],
)
def test_every_exception_becomes_a_plugin_error(exc: BaseException, text: str) -> None:
    """BaseException subclasses a plugin raises are contained and named."""
    with pytest.raises(PluginError) as info:
        call_plugin("pack acme", "tool_specs", _raise, exc)
    assert str(info.value) == f"pack acme: tool_specs raised {text}"
    assert info.value.original is exc and info.value.owner == "pack acme"


def test_block_form() -> None:
    """plugin_code() contains like call_plugin()."""
    with (
        pytest.raises(PluginError, match=r"^plugin x: import raised SystemExit: 2$"),
        plugin_code("plugin x", "import"),
    ):
        raise SystemExit(2)


def test_returns_the_value() -> None:
    """A call that succeeds returns its value."""
    assert call_plugin("pack acme", "tool_specs", lambda a, b=0: a + b, 1, b=2) == 3


def test_real_host_signal_propagates() -> None:
    """After a real stop signal, KeyboardInterrupt and SystemExit are the host's."""
    containment.note_host_signal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        call_plugin("pack acme", "execute_tool", _raise, KeyboardInterrupt())
    with pytest.raises(SystemExit):
        call_plugin("pack acme", "execute_tool", _raise, SystemExit(0))
    with pytest.raises(PluginError):  # other errors stay contained
        call_plugin("pack acme", "execute_tool", _raise, MemoryError())


def test_interrupt_flag_notes_a_real_sigint() -> None:
    """With the flag installed, a real SIGINT is noted and still raises KeyboardInterrupt (whatever
    SIGINT's disposition was when pytest started: a background job inherits it ignored)."""
    previous = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        containment.install_interrupt_flag()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        assert containment.host_interrupted()
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.slow
def test_the_sigint_test_passes_when_pytest_starts_with_sigint_ignored() -> None:
    """A background job (``pytest &``, CI runners) starts with SIGINT ignored; the test above must
    not depend on the disposition it inherits."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            f"{__file__}::test_interrupt_flag_notes_a_real_sigint",
        ],
        cwd=Path(__file__).resolve().parents[1],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_interrupt_flag_keeps_an_ignored_sigint_ignored() -> None:
    """Under ``nohup`` or ``&`` SIGINT starts ignored: the flag notes it and raises nothing."""
    previous = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        containment.install_interrupt_flag()
        signal.raise_signal(signal.SIGINT)
        assert containment.host_interrupted()
    finally:
        signal.signal(signal.SIGINT, previous)
