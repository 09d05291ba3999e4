"""``lorenz.Backoff``: the one restart back-off of isolated packs' and ``lorenz-mcp``'s supervisors."""

from __future__ import annotations

from lorenz import Backoff


def test_the_delay_doubles_per_failure_in_a_row_up_to_the_cap() -> None:
    backoff = Backoff(0.1, 5.0)
    delays = [backoff.delay(failures) for failures in range(9)]
    assert delays == [0.0, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]


def test_a_long_run_of_failures_stays_at_the_cap() -> None:
    assert Backoff(0.5, 30.0).delay(10_000) == 30.0
