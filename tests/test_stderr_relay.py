"""``lorenz.StderrRelay`` fed from a thread, as ``lorenz-mcp`` reads a stdio upstream's stderr: no
event loop, so its note of dropped lines comes with a later chunk or at the end."""

from __future__ import annotations

import logging
import threading

import pytest

from lorenz import StderrLimits, StderrRelay

_LOGGER = "lorenz.tests.stderr"


def _relay(name: list[str], limits: StderrLimits) -> StderrRelay:
    return StderrRelay(logging.getLogger(_LOGGER), lambda: name[0], ["s3cret-value"], limits)


def test_a_thread_fed_relay_logs_within_its_bucket_and_notes_the_rest_at_the_end(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger=_LOGGER)
    limits = StderrLimits(line_burst=3, lines_per_second=2, byte_burst=None, bytes_per_second=None)
    name = ["pack first"]
    relay = _relay(name, limits)

    def read() -> None:
        relay.feed(b"one s3cret-value\ntwo\n")
        name[0] = "pack renamed"  # asked per line
        relay.feed(b"three\n" + b"flood\n" * 50)
        relay.flush()

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(30)
    assert [record.getMessage() for record in caplog.records] == [
        "pack first: one [REDACTED]",
        "pack first: two",
        "pack renamed: three",
        "pack renamed: 50 lines of its stderr dropped (more than 2 lines a second)",
    ]


def test_a_thread_fed_relay_cuts_a_long_line_and_logs_the_next(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger=_LOGGER)
    relay = _relay(["pack noisy"], StderrLimits(max_line_chars=10))
    for _ in range(20):  # a line far longer than the cap, in 8 KiB reads
        relay.feed(b"x" * 8192)
    relay.feed(b"\nafter\n")
    relay.flush()
    assert [record.getMessage() for record in caplog.records] == ["pack noisy: " + "x" * 10, "pack noisy: after"]
