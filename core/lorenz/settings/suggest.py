"""Naming unknown keys: ``toolz (did you mean "tools"?)``."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean", "unknown_keys"]


def did_you_mean(key: str, candidates: Iterable[str], *, cutoff: float = 0.6) -> str:
    """`` (did you mean "<closest candidate>"?)``, or ``""`` when none is ``cutoff`` close
    (:func:`difflib.get_close_matches`)."""
    matches = difflib.get_close_matches(key, list(candidates), n=1, cutoff=cutoff)
    return f' (did you mean "{matches[0]}"?)' if matches else ""


def unknown_keys(keys: Iterable[str], candidates: Iterable[str]) -> str:
    """The keys joined by ``", "``, each followed by its suggestion, if any."""
    known = list(candidates)
    return ", ".join(f"{key}{did_you_mean(key, known)}" for key in keys)
