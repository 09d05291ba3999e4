"""``Backoff``: how long a supervisor waits before it starts again what keeps failing.

The delay doubles with each failure in a row, from ``first`` up to ``cap``; what counts as a
failure in a row (every crash in a window, or every end since the last stable run) is the
supervisor's to say.
"""

from __future__ import annotations

from attrs import frozen

__all__ = ["Backoff"]


@frozen
class Backoff:
    """Delays of ``first``, ``2 * first``, ``4 * first`` ... seconds, at most ``cap``."""

    first: float
    cap: float

    def delay(self, failures: int) -> float:
        """The wait after ``failures`` failures in a row (none after none)."""
        if failures <= 0:
            return 0.0
        return min(self.cap, self.first * 2.0 ** min(failures - 1, 64))
